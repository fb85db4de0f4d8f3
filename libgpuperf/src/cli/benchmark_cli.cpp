#include "gpuperf/cli/benchmark_cli.h"

#include "cli/parse_command_line.h"

#include <string>

#include "gpuperf/error.h"
#include "gpuperf/train/options.h"

namespace gpuperf {
namespace {

using detail::require;

std::string quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./=:,+") ==
          std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "|") + n;
  return out;
}

void check_ranges(const TrainingBenchmarkArgs& a) {
  require(a.batch_size > 0, "batch-size", a.batch_size, "> 0");
  require(a.num_classes >= 0, "num-classes", a.num_classes, ">= 0 (0: the model's default)");
  require(a.learning_rate > 0, "lr", a.learning_rate, "> 0");
  require(a.momentum >= 0, "momentum", a.momentum, ">= 0");
  require(a.weight_decay >= 0, "weight-decay", a.weight_decay, ">= 0");
  require(a.warmup_steps >= 0, "warmup", a.warmup_steps, ">= 0");
  require(a.steps_per_window >= 1, "steps-per-window", a.steps_per_window, ">= 1");
  require(a.windows >= 1, "windows", a.windows, ">= 1");
  require(a.target_relative_ci > 0, "target-ci", a.target_relative_ci, "> 0");
  require(a.max_seconds > 0, "max-seconds", a.max_seconds, "> 0");
  require(a.min_windows >= 2, "min-windows", a.min_windows, ">= 2");
  require(a.max_windows >= a.min_windows, "max-windows", a.max_windows, ">= --min-windows");
  require(a.threads >= 0, "threads", a.threads, ">= 0");
  require(a.telemetry_period > 0, "telemetry-period", a.telemetry_period, "> 0");
  detail::check_switch("fused", a.fused);
  detail::check_switch("graph", a.graph);
  detail::check_switch("fuse", a.fuse);
  if (a.precision != "auto") (void)parse_precision(a.precision);
  (void)parse_memory_format(a.memory_format);
  (void)parse_optimizer(a.optimizer);
}

}  // namespace

std::string join_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + quote(argv[i]);
  return out;
}

ParsedTrainingArgs parse_training_benchmark_args(int argc, const char* const* argv,
                                                 const TrainingBenchmarkDefaults& defaults,
                                                 std::ostream& out, std::ostream& err) {
  ParsedTrainingArgs parsed;
  TrainingBenchmarkArgs& a = parsed.args;
  a.model = defaults.model;
  a.batch_size = defaults.batch_size;
  a.precision = defaults.precision;
  a.memory_format = defaults.memory_format;
  a.optimizer = defaults.optimizer;
  a.learning_rate = defaults.learning_rate;
  a.warmup_steps = defaults.warmup_steps;
  a.steps_per_window = defaults.steps_per_window;
  a.windows = defaults.windows;
  a.json_path = defaults.program + ".json";
  a.command_line = join_command_line(argc, argv);

  CLI::App app(defaults.description, defaults.program);
  app.option_defaults()->always_capture_default();
  app.add_option("--device", a.device, "auto, cpu, cuda or cuda:N (auto: a GPU if there is one)");
  app.add_option("--model", a.model, "registered model name (see --list-models)");
  app.add_flag("--list-models", parsed.list_models, "print the registered models and exit");
  app.add_option("--batch-size,-b", a.batch_size, "samples per step");
  app.add_option("--num-classes", a.num_classes,
                 "classes of the synthetic targets (0: model default)");
  app.add_option("--precision", a.precision,
                 "auto|" + join(precision_names()) + " (auto: fp16 on CUDA, bf16 on CPU)");
  app.add_option("--memory-format", a.memory_format, join(memory_format_names()));
  app.add_option("--optimizer", a.optimizer, join(optimizer_names()));
  app.add_option("--lr", a.learning_rate, "learning rate");
  app.add_option("--momentum", a.momentum, "SGD momentum");
  app.add_option("--weight-decay", a.weight_decay, "weight decay");
  app.add_flag("--cudnn-benchmark,!--no-cudnn-benchmark", a.cudnn_benchmark, "cuDNN autotuning");
  app.add_option("--fused", a.fused,
                 "auto|on|off: fused optimizer kernels, no host sync per step (auto: where "
                 "LibTorch has them)");
  app.add_option(
      "--graph", a.graph,
      "auto|on|off: capture the whole step in a CUDA graph (auto: on CUDA when --fused)");
  app.add_option("--fuse,--fuse-conv", a.fuse,
                 "auto|on|off: the model's training-safe kernel fusion in cuDNN calls: "
                 "convolution + bias + ReLU (simple), BatchNorm + add + ReLU in fp16 "
                 "channels_last (resnet*) (auto: on CUDA; --fuse-conv is the old name)");
  app.add_option("--warmup", a.warmup_steps, "untimed warm-up steps");
  app.add_option("--steps-per-window", a.steps_per_window, "steps per timed window");
  app.add_option("--windows", a.windows, "timed windows (fixed mode)");
  app.add_flag("--adaptive", a.adaptive,
               "time windows until the 95% CI is within --target-ci or --max-seconds pass");
  app.add_option("--target-ci", a.target_relative_ci, "adaptive: relative CI half-width to reach");
  app.add_option("--max-seconds", a.max_seconds, "adaptive: timed seconds at most");
  app.add_option("--min-windows", a.min_windows, "adaptive: windows at least");
  app.add_option("--max-windows", a.max_windows, "adaptive: windows at most");
  app.add_option("--seed", a.seed, "random seed for weights and synthetic data");
  app.add_option("--threads", a.threads, "CPU intra-op threads (0: LibTorch's default)");
  app.add_option("--json", a.json_path, "write the result here ('' for none)");
  app.add_flag("--quiet,-q", a.quiet, "no progress lines");
  app.add_flag("--telemetry,!--no-telemetry", a.telemetry,
               "sample power, energy, clocks and throttling through NVML while timing (GPU only)");
  app.add_option("--telemetry-period", a.telemetry_period, "seconds between telemetry samples");

  parsed.exit_code = detail::parse_command_line(
      app, argc, argv, [&] { check_ranges(a); }, out, err);
  return parsed;
}

}  // namespace gpuperf
