#pragma once
// The microbenchmarks as one typed call: GEMM throughput per data type, memory bandwidth, and
// optionally the interconnect (P2P copies and collectives), against the datasheet.
//
//   gpuperf::MicroRun run;
//   run.dtypes = {gpuperf::GemmDtype::kBf16, gpuperf::GemmDtype::kFp16};
//   run.memory = false;
//   gpuperf::MicroReport report = gpuperf::run_micro(run);
//
// Validated once, resolved once (device, default sizes and types), measured, enriched once
// (datasheet percentages, noise warnings).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/base/run_basics.h"
#include "gpuperf/micro/micro.h"
#include "gpuperf/results/interconnect_result.h"
#include "gpuperf/results/micro_result.h"

namespace gpuperf {

/// What a microbenchmark run measures (device, seed of the operands, threads of the CPU
/// variant, quiet, command line: RunBasics). Sizes of 0 and empty lists mean "the device's
/// default".
struct MicroRun : RunBasics {
  std::optional<GemmShape> gemm_shape;   ///< nullopt: square, 8192 on a GPU, 1024 on the CPU
  std::vector<GemmDtype> dtypes;         ///< empty: every type the device can run
  std::int64_t memory_size_mib = 0;      ///< device (or host, CPU variant) buffer; 0: 1024 / 256
  std::int64_t host_size_mib = 256;      ///< host<->device transfer buffer
  bool gemm = true;                      ///< run the GEMM benchmarks
  bool memory = true;                    ///< run the memory benchmarks
  bool interconnect = false;             ///< P2P copies and collectives (2+ GPUs; Gloo on the CPU)
  std::vector<Collective> collectives;   ///< empty: all three
  std::vector<double> collective_sizes;  ///< bytes; empty: 1M..1G (GPU), 64K..4M (CPU)
  std::int64_t p2p_size_mib = 256;       ///< buffer of the P2P bandwidth copies
  std::int64_t ranks = 0;  ///< collective ranks; 0: every GPU, or 2 threads on the CPU
  MicroTiming timing;      ///< warm-up, calls per window, windows (the seed: RunBasics::seed)
  std::string specs_path;  ///< datasheet file; empty: the shipped one

  /// Throws ConfigError naming the first bad field ("MicroRun::host_size_mib") and its value.
  void validate() const;
};

/// Runs what `run` asks for and returns the report, datasheet figures applied where the device
/// matches an entry (no file; unless run.quiet, a line per measurement logged to stderr).
/// ConfigError for bad options before anything runs; OutOfMemoryError when a buffer does not fit.
[[nodiscard]] MicroReport run_micro(const MicroRun& run);

}  // namespace gpuperf
