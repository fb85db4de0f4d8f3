#pragma once
// Command-line options of the inference benchmark, parsed with CLI11 (torch-free).
// run_inference_benchmark() (gpuperf/cli/inference_benchmark.h) runs them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gpuperf {

/// Parsed and range-checked options of the inference benchmark.
struct InferenceBenchmarkArgs {
  std::string device = "auto";
  std::string model = "simple";
  std::int64_t num_classes = 0;    ///< 0: the model's default
  std::string precision = "auto";  ///< auto: fp16 on CUDA, fp32 on the CPU
  std::string memory_format = "contiguous";
  std::string graph = "auto";  ///< CUDA-graph replay: auto (on CUDA), on, off
  std::string fuse = "auto";   ///< fold BatchNorm, fused conv epilogues: auto (on CUDA), on, off
  std::vector<std::int64_t> batch_sizes;  ///< explicit sweep; empty: doubling up to max_batch
  std::int64_t max_batch = 256;           ///< doubling sweep 1, 2, 4, ... up to this (or OOM)
  int warmup = 10;                        ///< untimed calls per batch size
  int iterations = 100;                   ///< timed calls per batch size
  bool cudnn_benchmark = true;
  std::vector<double> serve_rates;      ///< offered rates (requests/s); empty: no serving sweep
  double max_batch_delay_ms = 1.0;      ///< serving: longest wait for a fuller batch, ms
  std::int64_t serve_max_batch = 0;     ///< serving: largest batch; 0: the largest measured
  std::int64_t serve_requests = 20000;  ///< serving: requests per rate (measured: at most)
  std::string serve_mode = "simulated";  ///< serving: simulated (model) or measured (executed)
  double serve_seconds = 5;  ///< measured serving: seconds of arrivals per rate (>= 100 requests)
  std::int64_t seed = 0;
  int threads = 0;        ///< CPU intra-op threads; 0: LibTorch's default
  std::string json_path;  ///< empty: no file
  /// Per-call latencies kept per batch size in the JSON result (evenly spread; 0: none), for
  /// gpuperf_compare's rank test. At most kMaxStoredLatencies.
  std::size_t keep_latencies = 1000;
  bool quiet = false;
  std::string command_line;  ///< argv joined, shell-quoted

  /// The batch sizes the sweep tries, in order: batch_sizes, or 1, 2, 4, ... then max_batch.
  [[nodiscard]] std::vector<std::int64_t> planned_batch_sizes() const;
};

/// Either options to run with, or an exit code to return now (after --help, --list-models or a
/// parse error, already printed).
struct ParsedInferenceArgs {
  std::optional<int> exit_code;
  InferenceBenchmarkArgs args;
  bool list_models = false;
};

/// Parses argv. Prints help to `out` and one-line errors ("error: --batch-sizes: ...") to `err`;
/// bad usage gives exit code 2.
[[nodiscard]] ParsedInferenceArgs parse_inference_benchmark_args(int argc, const char* const* argv,
                                                                 std::ostream& out,
                                                                 std::ostream& err);

}  // namespace gpuperf
