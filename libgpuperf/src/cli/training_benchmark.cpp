#include "gpuperf/cli/training_benchmark.h"

#include <ATen/Parallel.h>
#include <torch/version.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <sys/resource.h>

#include <cmath>
#include <iostream>
#include <string>

#include "gpuperf/device.h"
#include "gpuperf/error.h"
#include "gpuperf/log.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/report/console.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/specs/specs.h"
#include "gpuperf/telemetry/sampler.h"
#include "gpuperf/telemetry/snapshot.h"
#include "gpuperf/timing/measure.h"
#include "gpuperf/train/torch_options.h"
#include "gpuperf/train/train_step.h"

namespace gpuperf {
namespace {

Precision choose_precision(const std::string& text, const torch::Device& device) {
  if (text != "auto") return parse_precision(text);
  return device.is_cuda() ? Precision::kFp16 : Precision::kBf16;
}

std::string out_of_memory_message(const TrainingBenchmarkArgs& args, const torch::Device& device) {
  const DeviceMemory m = device_memory(device);
  return "CUDA out of memory with --batch-size " + std::to_string(args.batch_size) + " (model " +
         args.model + ", precision " + to_string(choose_precision(args.precision, device)) +
         ") on " + device.str() + ": device " + format_bytes(m.total) + ", free " +
         format_bytes(m.free) + ", LibTorch allocated " + format_bytes(m.allocated) + " (peak " +
         format_bytes(m.peak_allocated) + "), reserved " + format_bytes(m.reserved) +
         ". Try a smaller --batch-size.";
}

// Datasheet match and efficiency figures (% of peak, samples per joule, cost). A missing spec
// file or an unknown GPU costs the figures that need it, never the run.
void add_efficiency(RunRecord& record) {
  try {
    if (record.device.kind != "cuda") {
      // The database describes GPUs; a CPU run still gets its FLOP counts.
      add_efficiency_metrics(record, compute_efficiency(record, nullptr));
      return;
    }
    const SpecDatabase db = SpecDatabase::load_default();
    const SpecMatch match =
        db.match_device(record.device.name, record.device.sm_count, record.device.memory_bytes);
    if (match.spec == nullptr) record.warnings.push_back(match.reason);
    add_efficiency_metrics(record, compute_efficiency(record, match.spec));
  } catch (const Error& e) {
    record.warnings.push_back(std::string("efficiency figures unavailable: ") + e.what());
  }
}

}  // namespace

RunRecord run_training_measurement(const TrainingBenchmarkArgs& args) {
  const torch::Device device = resolve_device(args.device);
  if (args.threads > 0) at::set_num_threads(args.threads);
  const ModelInfo info = ModelRegistry::global().get(args.model);
  const std::int64_t classes = args.num_classes > 0 ? args.num_classes : info.default_num_classes;

  TrainStepOptions options;
  options.precision = choose_precision(args.precision, device);
  options.memory_format = parse_memory_format(args.memory_format);
  options.optimizer = parse_optimizer(args.optimizer);
  options.learning_rate = args.learning_rate;
  options.momentum = args.momentum;
  options.weight_decay = args.weight_decay;
  options.cudnn_benchmark = args.cudnn_benchmark;
  check_precision_supported(options.precision, device);
  const bool fused_available = FusedOptimizer::available(device);
  if (args.fused == "on" && !fused_available) {
    throw ConfigError("--fused on: LibTorch " + std::string(TORCH_VERSION) +
                      " has no fused optimizer kernels for " + device.str());
  }
  options.fused_optimizer = args.fused == "on" || (args.fused == "auto" && fused_available);
  if (args.graph == "on" && (!device.is_cuda() || !options.fused_optimizer)) {
    throw ConfigError("--graph on: needs a CUDA device and the fused optimizer (device " +
                      device.str() + ", --fused " + args.fused + ")");
  }
  options.cuda_graph =
      args.graph == "on" || (args.graph == "auto" && device.is_cuda() && options.fused_optimizer);
  if (args.fuse == "on" && !device.is_cuda()) {
    throw ConfigError("--fuse on: the fused kernels are cuDNN's; device is " + device.str());
  }
  options.fuse_kernels = args.fuse == "on" || (args.fuse == "auto" && device.is_cuda());
  if (options.cuda_graph && args.warmup_steps < 1) {
    // The first step captures the graph; it must not fall inside a timed window.
    throw ConfigError("--warmup: must be >= 1 with a CUDA graph (--graph " + args.graph +
                      "), got 0");
  }

  MeasureOptions measure_options;
  measure_options.warmup_steps = args.warmup_steps;
  measure_options.steps_per_window = args.steps_per_window;
  measure_options.windows = args.windows;
  measure_options.adaptive = args.adaptive;
  measure_options.target_relative_ci = args.target_relative_ci;
  measure_options.max_seconds = args.max_seconds;
  measure_options.min_windows = args.min_windows;
  measure_options.max_windows = args.max_windows;
  measure_options.validate();

  RunRecord record;
  record.timestamp_utc = utc_timestamp();
  record.command = args.command_line;
  record.device = collect_fingerprint(device);
  RunConfig& config = record.config;
  config.model = args.model;
  config.batch_size = args.batch_size;
  config.input_shape = info.input_shape;
  config.num_classes = classes;
  config.precision = to_string(options.precision);
  config.memory_format = to_string(options.memory_format);
  config.optimizer = to_string(options.optimizer);
  config.optimizer_impl = options.fused_optimizer ? "fused" : "torch::optim";
  config.learning_rate = options.learning_rate;
  config.cudnn_benchmark = options.cudnn_benchmark;
  config.grad_scaler = options.precision == Precision::kFp16;
  config.warmup_steps = args.warmup_steps;
  config.steps_per_window = args.steps_per_window;
  config.adaptive = args.adaptive;
  config.seed = args.seed;

  torch::manual_seed(static_cast<std::uint64_t>(args.seed));
  reset_peak_memory(device);
  TrainStep step(ModelRegistry::global().create(args.model, classes), device, options);
  SyntheticBatchOptions batch_options;
  batch_options.batch_size = args.batch_size;
  batch_options.sample_shape = info.input_shape;
  batch_options.num_classes = classes;
  batch_options.device = device;
  batch_options.memory_format = options.memory_format;
  batch_options.seed = static_cast<std::uint64_t>(args.seed);
  SyntheticBatches batches(batch_options);
  config.data_source = batches.name();

  auto timer = make_timer(device.is_cuda() ? TimerKind::kCudaEvent : TimerKind::kSteadyClock,
                          device.has_index() ? device.index() : 0);
  record.timer = timer->name();
  if (!args.quiet) {
    log::info(log::cat(args.model, " on ", record.device.name, " (", device.str(), "): batch ",
                       args.batch_size, ", ", config.precision, ", ", config.memory_format, ", ",
                       config.optimizer, " (", config.optimizer_impl, ")",
                       options.cuda_graph ? ", CUDA graph" : "", "; warming up for ",
                       args.warmup_steps, " steps"));
  }
  // Telemetry: NVML, matched to the CUDA device by PCI location (the two number GPUs apart).
  OpenedTelemetry telemetry;
  TelemetryDevice* telemetry_device = nullptr;
  std::unique_ptr<TelemetrySampler> sampler;
  if (device.is_cuda() && args.telemetry) {
    telemetry = open_nvml_telemetry();
    if (telemetry) {
      const PciLocation pci = cuda_pci_location(device);
      telemetry_device = telemetry.system->find_by_pci_location(pci.domain, pci.bus, pci.device);
    }
    if (telemetry_device) {
      TelemetrySamplerOptions sampler_options;
      sampler_options.period_seconds = args.telemetry_period;
      sampler = std::make_unique<TelemetrySampler>(*telemetry_device, sampler_options);
      if (const auto watts = telemetry_device->power_limit_watts())
        record.device.power_limit_watts = *watts;
    } else {
      record.telemetry.unavailable_reason = telemetry
                                                ? "no NVML device at the CUDA device's PCI location"
                                                : telemetry.unavailable_reason;
      record.warnings.push_back("telemetry unavailable: " + record.telemetry.unavailable_reason);
    }
  } else {
    record.telemetry.unavailable_reason =
        device.is_cuda() ? "disabled (--no-telemetry)" : "CPU run";
  }
  auto before_timing = [&] {
    if (!sampler) return;
    synchronize(device);  // so the sampled window holds the timed steps and nothing before them
    sampler->start();
  };

  StepResult last;
  auto progress = [&](const WindowProgress& p) {
    if (!args.quiet) {
      log::info(log::cat("window ", p.window, "/", p.planned_windows, ": ",
                         static_cast<long long>(std::llround(p.window_throughput)), " samples/s"));
    }
  };
  const Measurement m =
      measure([&] { last = step(batches.next()); }, static_cast<double>(args.batch_size), *timer,
              measure_options, progress, before_timing);
  synchronize(device);
  if (sampler) {
    record.telemetry = sampler->stop(static_cast<double>(args.batch_size) * m.timed_steps);
    for (const auto& w : record.telemetry.warnings) record.warnings.push_back("telemetry: " + w);
  }

  record.throughput = m.throughput;
  record.window_throughput = m.window_throughput;
  record.window_seconds = m.window_seconds;
  record.overall_throughput = m.overall_throughput;
  record.timed_steps = m.timed_steps;
  record.timed_seconds = m.timed_seconds;
  record.stop_reason = m.stop_reason;
  record.total_steps = step.steps();
  config.graph_mode = step.graph_captured() ? "cuda-graph" : "eager";
  config.kernel_fusion = step.kernel_fusion();
  if (args.fuse == "on" && config.kernel_fusion == "none") {
    record.warnings.push_back("--fuse on: nothing ran fused (" + args.model + ", " +
                              to_string(options.precision) + ", " + args.memory_format +
                              "): cuDNN's fused kernels do not apply here");
  }
  if (!step.graph_fallback_reason().empty())
    record.warnings.push_back(step.graph_fallback_reason());
  record.skipped_steps = step.skipped_steps();
  record.final_loss = last.loss.item<double>();
  record.final_loss_scale = step.scaler().get_scale();
  record.peak_memory_bytes = device_memory(device).peak_allocated;
  if (device.is_cpu()) {
    struct rusage usage {};
    if (getrusage(RUSAGE_SELF, &usage) == 0) {
      record.metrics["host_peak_rss_bytes"] = static_cast<double>(usage.ru_maxrss) * 1024.0;
    }
  }
  if (info.input_shape.size() == 3 && info.input_shape[1] == 224 && m.throughput.median > 0) {
    record.metrics["imagenet_90_epochs_seconds"] = 90 * kImageNetTrainImages / m.throughput.median;
  }
  add_efficiency(record);
  if (!std::isfinite(record.final_loss)) {
    record.warnings.push_back("the final loss is not finite (" + std::to_string(record.final_loss) +
                              ")");
  }
  if (record.skipped_steps > 0) {
    record.warnings.push_back(std::to_string(record.skipped_steps) +
                              " optimizer steps were skipped for inf/NaN gradients");
  }
  if (m.throughput.relative_ci95_half_width() > 0.05) {
    record.warnings.push_back("throughput is noisy: 95% CI half-width is " +
                              std::to_string(100 * m.throughput.relative_ci95_half_width()) +
                              "% of the mean; use --adaptive or more windows");
  }
  return record;
}

int run_training_benchmark(int argc, const char* const* argv,
                           const TrainingBenchmarkDefaults& defaults) {
  const ParsedTrainingArgs parsed =
      parse_training_benchmark_args(argc, argv, defaults, std::cout, std::cerr);
  if (parsed.exit_code) return *parsed.exit_code;
  if (parsed.list_models) {
    for (const auto& name : ModelRegistry::global().names()) {
      std::cout << name << "\t" << ModelRegistry::global().get(name).description << "\n";
    }
    return 0;
  }
  const TrainingBenchmarkArgs& args = parsed.args;
  torch::Device device = torch::kCPU;
  try {
    // Refuse a bad output path before a long run, not after it.
    if (!args.json_path.empty()) check_writable(args.json_path, "json");
    device = resolve_device(args.device);
    RunRecord record = run_training_measurement(args);
    print_training_summary(record, std::cout, defaults.unit, defaults.imagenet_projection);
    if (record.telemetry.available) write_telemetry_summary(std::cout, record.telemetry);
    if (!args.json_path.empty()) {
      write_json_file(record, args.json_path);
      std::cout << "Result written to " << args.json_path << "\n";
    }
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const c10::OutOfMemoryError&) {
    std::cerr << "error: " << out_of_memory_message(args, device) << "\n";
    return kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpuperf
