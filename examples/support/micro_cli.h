#pragma once
// Command-line options of the microbenchmark program, parsed with CLI11 (torch-free).
// run_microbench() (gpuperf/micro/micro.h) parses, measures and reports.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace gpuperf {

/// Parsed and range-checked microbenchmark options. Zero sizes mean "the device's default".
struct MicrobenchArgs {
  std::string device = "auto";
  std::int64_t gemm_size = 0;        ///< square GEMM edge; 0: 8192 on a GPU, 1024 on the CPU
  std::string gemm_shape;            ///< "MxNxK", instead of --gemm-size; empty: square
  std::string dtypes;                ///< comma-separated; empty: every type the device can run
  std::int64_t memory_size_mib = 0;  ///< device (or host, CPU variant) buffer; 0: 1024 / 256
  std::int64_t host_size_mib = 256;  ///< host<->device transfer buffer
  bool gemm = true;                  ///< run the GEMM benchmarks
  bool memory = true;                ///< run the memory benchmarks
  bool interconnect = false;         ///< P2P copies and collectives (2+ GPUs; Gloo on the CPU)
  std::string collectives;           ///< comma-separated; empty: all three
  std::string collective_sizes;      ///< sizes or sweeps; empty: 1M..1G (GPU), 64K..4M (CPU)
  std::int64_t p2p_size_mib = 256;   ///< buffer of the P2P bandwidth copies
  std::int64_t ranks = 0;            ///< collective ranks; 0: every GPU, or 2 threads on the CPU
  int warmup = 3;                    ///< untimed calls before each measurement
  int calls_per_window = 10;         ///< calls between two timer marks
  int windows = 5;                   ///< timed windows per measurement
  std::int64_t seed = 0;
  std::string specs_path;                     ///< datasheet file; empty: the shipped one
  std::string json_path = "microbench.json";  ///< empty: no file
  std::string markdown_path;                  ///< empty: no file (the tables go to stdout anyway)
  bool quiet = false;
  std::string command_line;
};

/// Either options to run with, or an exit code to return now (after --help or a parse error,
/// already printed).
struct ParsedMicrobenchArgs {
  std::optional<int> exit_code;
  MicrobenchArgs args;
};

/// Parses argv. Prints help to `out` and one-line errors ("error: --dtypes: ...") to `err`;
/// bad usage gives exit code 2.
[[nodiscard]] ParsedMicrobenchArgs parse_microbench_args(int argc, const char* const* argv,
                                                         std::ostream& out, std::ostream& err);

}  // namespace gpuperf
