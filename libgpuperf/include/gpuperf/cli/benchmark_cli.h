#pragma once
// Command-line options of the training benchmarks, parsed with CLI11 (torch-free). The examples
// only choose defaults; run_training_benchmark() does the rest.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace gpuperf {

/// What a training benchmark program defaults to.
struct TrainingBenchmarkDefaults {
  std::string program;      ///< name for help and the default JSON file
  std::string description;  ///< first line of --help
  std::string model = "simple";
  std::int64_t batch_size = 256;
  std::string precision = "auto";  ///< auto: fp16 on CUDA, bf16 on the CPU
  std::string memory_format = "contiguous";
  std::string optimizer = "adam";
  double learning_rate = 1e-3;
  int warmup_steps = 10;
  int steps_per_window = 20;
  int windows = 10;
  std::string unit = "samples/sec";  ///< how throughput is printed ("img/s")
  bool imagenet_projection = false;  ///< print the 90-epoch ImageNet-1k projection
};

/// Parsed and range-checked options of a training benchmark.
struct TrainingBenchmarkArgs {
  std::string device = "auto";
  std::string model;
  std::int64_t batch_size = 0;
  std::int64_t num_classes = 0;  ///< 0: the model's default
  std::string precision;
  std::string memory_format;
  std::string optimizer;
  double learning_rate = 0;
  double momentum = 0.9;
  double weight_decay = 0;
  bool cudnn_benchmark = true;
  std::string fused = "auto";  ///< fused optimizer: auto (where LibTorch has the kernels), on, off
  std::string fuse = "auto";  ///< training kernel fusion (cuDNN calls): auto (CUDA), on, off
  std::string graph = "auto";      ///< whole-step CUDA graph: auto (on CUDA with --fused), on, off
  int warmup_steps = 0;
  int steps_per_window = 0;
  int windows = 0;
  bool adaptive = false;
  double target_relative_ci = 0.02;
  double max_seconds = 60;
  int min_windows = 5;
  int max_windows = 200;
  std::int64_t seed = 0;
  int threads = 0;        ///< CPU intra-op threads; 0: LibTorch's default
  std::string json_path;  ///< empty: no file
  bool quiet = false;
  bool telemetry = true;          ///< sample NVML (power, energy, clocks) during the timed windows
  double telemetry_period = 0.1;  ///< seconds between samples
  std::string command_line;       ///< argv joined, shell-quoted
};

/// Either options to run with, or an exit code to return now (after --help, --list-models or a
/// parse error, already printed).
struct ParsedTrainingArgs {
  std::optional<int> exit_code;
  TrainingBenchmarkArgs args;
  bool list_models = false;
};

/// Parses argv. Prints help to `out` and one-line errors ("error: --batch-size: ...") to `err`;
/// bad usage gives exit code 2.
[[nodiscard]] ParsedTrainingArgs parse_training_benchmark_args(
    int argc, const char* const* argv, const TrainingBenchmarkDefaults& defaults, std::ostream& out,
    std::ostream& err);

/// argv as one shell-quoted command line.
[[nodiscard]] std::string join_command_line(int argc, const char* const* argv);

}  // namespace gpuperf
