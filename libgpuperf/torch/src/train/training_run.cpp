// run_training(): validate -> resolve -> measure -> enrich, each once.
#include "gpuperf/train/training_run.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/base/log.h"
#include "gpuperf/base/timestamp.h"
#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/device/device.h"
#include "gpuperf/device/kernel_trace.h"
#include "gpuperf/device/torch_choices.h"
#include "gpuperf/models/fusion.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/transformer.h"
#include "gpuperf/specs/specs.h"
#include "gpuperf/telemetry/sampler.h"
#include "gpuperf/telemetry/telemetry.h"
#include "gpuperf/train/batch_source.h"
#include "gpuperf/train/image_folder_batches.h"
#include "gpuperf/train/train_step.h"
#include "gpuperf/train/training_memory.h"
#include "train/training_checks.h"

namespace gpuperf {
namespace {

// The settings of decoding on the GPU, refused (ConfigError with `why`) for a run that does not
// decode files on the GPU: set there they would be silently ignored.
void refuse_gpu_decode_settings(const TrainingRun& run, const std::string& why) {
  if (run.adaptive_host_decode_share) {  // first: its start share is no setting of the user's
    throw ConfigError("TrainingRun::adaptive_host_decode_share", "auto", why);
  }
  if (run.host_decode_share > 0) {
    throw ConfigError("TrainingRun::host_decode_share", format_number(run.host_decode_share, 3),
                      why);
  }
  if (run.gpu_batches_per_call > 1) {
    throw ConfigError("TrainingRun::gpu_batches_per_call", std::to_string(run.gpu_batches_per_call),
                      why);
  }
  if (run.gpu_decode_threads != 1) {
    throw ConfigError("TrainingRun::gpu_decode_threads", std::to_string(run.gpu_decode_threads),
                      why);
  }
}

}  // namespace

void TrainingRun::validate() const {
  RunBasics::validate();
  require_setting(batch_size > 0, "TrainingRun::batch_size", batch_size, "> 0");
  // Each micro-batch holds a sample: a step of fewer samples would run fewer micro-batches than
  // asked (TrainStep splits what there is) and the record would say otherwise.
  require_setting(accumulation_steps >= 1 && accumulation_steps <= batch_size,
                  "TrainingRun::accumulation_steps", accumulation_steps,
                  ">= 1 and <= {batch_size} (" + std::to_string(batch_size) + ")");
  require_setting(num_classes >= 0, "TrainingRun::num_classes", num_classes,
                  ">= 0 (0: the model's default)");
  require_setting(learning_rate > 0 && std::isfinite(learning_rate), "TrainingRun::learning_rate",
                  learning_rate, "finite and > 0");
  require_setting(momentum >= 0 && std::isfinite(momentum), "TrainingRun::momentum", momentum,
                  "finite and >= 0");
  require_setting(weight_decay >= 0 && std::isfinite(weight_decay), "TrainingRun::weight_decay",
                  weight_decay, "finite and >= 0");
  require_setting(adam_beta1 >= 0 && adam_beta1 < 1, "TrainingRun::adam_beta1", adam_beta1,
                  "in [0, 1)");
  require_setting(adam_beta2 >= 0 && adam_beta2 < 1, "TrainingRun::adam_beta2", adam_beta2,
                  "in [0, 1)");
  require_setting(telemetry_period > 0, "TrainingRun::telemetry_period", telemetry_period, "> 0");
  measure.validate();
  const ModelInfo info = ModelRegistry::global().get(model);  // "unknown model '...'"
  if (info.task == ModelTask::kLanguageModel) {
    const std::int64_t context = info.input_shape.at(0);
    require_setting(
        sequence_length >= 0 && sequence_length <= context, "TrainingRun::sequence_length",
        sequence_length,
        ">= 0 and <= " + std::to_string(context) + " (" + model + "'s context; 0: the context)");
  } else {
    if (activation_checkpointing) {
      throw ConfigError(
          "TrainingRun::activation_checkpointing", "true",
          "applies to language models (per transformer block); " + model + " takes images");
    }
    if (sequence_length != 0) {
      throw ConfigError("TrainingRun::sequence_length", std::to_string(sequence_length),
                        "applies to language models; " + model + " takes images");
    }
    if (!token_file.empty()) {
      throw ConfigError("TrainingRun::token_file", token_file,
                        "applies to language models; " + model + " takes images");
    }
  }
  require_setting(loader_threads >= 0 && loader_threads <= 1024, "TrainingRun::loader_threads",
                  loader_threads, ">= 0 and <= 1024 (0: every core)");
  if (compare_synthetic && data.empty()) {
    throw ConfigError("TrainingRun::compare_synthetic", "on",
                      "compares a run on files ({TrainingRun::data}) with synthetic batches: no "
                      "folder given");
  }
  if (decode != ImageDecode::kAuto && data.empty()) {
    throw ConfigError("TrainingRun::decode", to_string(decode),
                      "applies to runs on files ({TrainingRun::data}): no folder given");
  }
  require_setting(host_decode_share >= 0 && host_decode_share <= 1,
                  "TrainingRun::host_decode_share", host_decode_share, "in 0..1");
  require_setting(gpu_batches_per_call >= 1 && gpu_batches_per_call <= 16,
                  "TrainingRun::gpu_batches_per_call", gpu_batches_per_call, ">= 1 and <= 16");
  require_setting(gpu_decode_threads >= 1 && gpu_decode_threads <= 8,
                  "TrainingRun::gpu_decode_threads", gpu_decode_threads, ">= 1 and <= 8");
  if (data.empty() || decode == ImageDecode::kCpu) {
    refuse_gpu_decode_settings(*this,
                               "applies to runs on files ({TrainingRun::data}) decoded on the GPU");
  }
  if (decode == ImageDecode::kGpu && !gpu_decode_available()) {
    throw ConfigError("TrainingRun::decode", "gpu",
                      "needs nvJPEG, which this build did not find (cpu or auto)");
  }
  if (decode == ImageDecode::kGpu && device == "cpu") {
    throw ConfigError("TrainingRun::decode", "gpu",
                      "needs a CUDA device ({TrainingRun::device} is cpu)");
  }
  if (!data.empty() && info.input_shape != std::vector<std::int64_t>{3, 224, 224}) {
    throw ConfigError("TrainingRun::data", data,
                      "feeds 3x224x224 images; " + model + " takes other input" +
                          (info.task == ModelTask::kLanguageModel
                               ? " (a language model's tokens: {TrainingRun::token_file})"
                               : ""));
  }
  // The files are checked before anything is built: a typo costs no model and no minutes.
  struct stat info_of {};
  if (!data.empty() && (::stat(data.c_str(), &info_of) != 0 || !S_ISDIR(info_of.st_mode) ||
                        ::access(data.c_str(), R_OK | X_OK) != 0)) {
    throw ConfigError("TrainingRun::data", data, "is not a readable folder");
  }
  if (!token_file.empty() &&
      (::stat(token_file.c_str(), &info_of) != 0 || !S_ISREG(info_of.st_mode) ||
       ::access(token_file.c_str(), R_OK) != 0)) {
    throw ConfigError("TrainingRun::token_file", token_file, "is not a readable file");
  }
}

namespace {

// Everything `auto` decided, once, from the run and the device.
struct ResolvedTraining {
  torch::Device device = torch::kCPU;
  ModelInfo model;
  std::int64_t num_classes = 0;  ///< a language model's vocabulary
  std::int64_t sequence = 0;     ///< language models: tokens per sample
  TrainStepOptions step;
  [[nodiscard]] bool language_model() const { return model.task == ModelTask::kLanguageModel; }
};

ResolvedTraining resolve(const TrainingRun& run) {
  ResolvedTraining r;
  r.device = resolve_device(run.device);
  r.model = ModelRegistry::global().get(run.model);
  r.num_classes = run.num_classes > 0 ? run.num_classes : r.model.default_num_classes;
  if (r.language_model()) {
    r.sequence = run.sequence_length > 0 ? run.sequence_length : r.model.input_shape.at(0);
  }
  TrainStepOptions& o = r.step;
  const bool cuda = r.device.is_cuda();
  // Unset: fp16 on CUDA; on the CPU bf16 where it multiplies bf16 natively, else fp32 (emulated
  // bf16 is slower than fp32, and some of LibTorch's CPU kernels have no bf16 form without it).
  o.precision = run.precision.value_or(
      cuda ? Precision::kFp16 : (cpu_computes_bf16() ? Precision::kBf16 : Precision::kFp32));
  o.memory_format = run.memory_format;
  o.optimizer = run.optimizer;
  o.learning_rate = run.learning_rate;
  o.momentum = run.momentum;
  o.adam_beta1 = run.adam_beta1;
  o.adam_beta2 = run.adam_beta2;
  o.weight_decay = run.weight_decay;
  o.accumulation_steps = run.accumulation_steps;
  o.cudnn_benchmark = run.cudnn_benchmark;
  o.optimizer_in_backward = run.optimizer_in_backward && r.language_model();
  check_precision_supported(o.precision, r.device);
  const bool fused_available = FusedOptimizer::available(r.device);
  if (run.fused_optimizer == Switch::kOn && !fused_available) {
    throw ConfigError("TrainingRun::fused_optimizer", "on",
                      "LibTorch " + std::string(TORCH_VERSION) +
                          " has no fused optimizer kernels for " + r.device.str());
  }
  o.fused_optimizer = resolve_switch(run.fused_optimizer, fused_available);
  if (run.cuda_graph == Switch::kOn && (!cuda || !o.fused_optimizer)) {
    throw ConfigError("TrainingRun::cuda_graph", "on",
                      "needs a CUDA device and the fused optimizer (device " + r.device.str() +
                          ", {fused_optimizer} " + to_string(run.fused_optimizer) + ")");
  }
  o.cuda_graph = resolve_switch(run.cuda_graph, cuda && o.fused_optimizer);
  if (run.kernel_fusion == Switch::kOn && !cuda) {
    throw ConfigError("TrainingRun::kernel_fusion", "on",
                      "the fused kernels are cuDNN's; device is " + r.device.str());
  }
  o.kernel_fusion = resolve_switch(run.kernel_fusion, cuda);
  if (!run.data.empty() && run.decode == ImageDecode::kAuto &&
      resolve_decode(run.decode, r.device) == ImageDecode::kCpu) {
    // validate() refuses the GPU decoder's settings with decode cpu; auto that decodes on the
    // CPU refuses them alike, before anything runs.
    const std::string why =
        "applies to runs on files decoded on the GPU ({TrainingRun::decode} auto decodes on the "
        "CPU here: " +
        std::string(cuda ? "no nvJPEG in this build" : "device " + r.device.str()) + ")";
    refuse_gpu_decode_settings(run, why);
  }
  const int graph_steps = o.graph_warmup + 1;
  if (o.cuda_graph && run.measure.warmup < graph_steps) {
    // The first calls warm up eagerly and the next captures: none may fall in a timed window.
    throw ConfigError("MeasureOptions::warmup",
                      "must be >= " + std::to_string(graph_steps) +
                          " with a CUDA graph ({cuda_graph} " + to_string(run.cuda_graph) +
                          "; its first steps warm up eagerly, the next captures), got " +
                          std::to_string(run.measure.warmup));
  }
  return r;
}

// The record's description of what runs: settings as resolved, before any measurement.
RunRecord describe(const TrainingRun& run, const ResolvedTraining& r) {
  RunRecord record;
  record.timestamp_utc = utc_timestamp();
  record.command = run.command_line;
  record.device = collect_fingerprint(r.device);
  RunConfig& config = record.config;
  config.model = run.model;
  config.batch_size = run.batch_size;
  config.accumulation_steps = run.accumulation_steps;
  config.input_shape =
      r.language_model() ? std::vector<std::int64_t>{r.sequence} : r.model.input_shape;
  config.num_classes = r.num_classes;
  config.precision = to_string(r.step.precision);
  config.memory_format = to_string(r.step.memory_format);
  config.optimizer = to_string(r.step.optimizer);
  config.optimizer_impl = r.step.fused_optimizer ? "fused" : "torch::optim";
  config.learning_rate = r.step.learning_rate;
  config.cudnn_benchmark = r.step.cudnn_benchmark;
  config.grad_scaler = r.step.precision == Precision::kFp16;
  config.warmup_steps = run.measure.warmup;
  config.steps_per_window = run.measure.steps_per_window;
  config.adaptive = run.measure.adaptive;
  config.seed = run.seed;
  return record;
}

// NVML sampling over the timed windows, matched to the CUDA device by PCI location (the two
// number GPUs apart). Without it, the record says why.
class RunTelemetry {
 public:
  RunTelemetry(const TrainingRun& run, const torch::Device& device, RunRecord& record) {
    if (!device.is_cuda() || !run.telemetry) {
      record.telemetry.unavailable_reason =
          device.is_cuda() ? "disabled (TrainingRun::telemetry off)" : "CPU run";
      return;
    }
    opened_ = open_nvml_telemetry();
    TelemetryDevice* nvml_device = nullptr;
    if (opened_) {
      const PciLocation pci = cuda_pci_location(device);
      nvml_device = opened_.system->find_by_pci_location(pci.domain, pci.bus, pci.device);
    }
    if (nvml_device == nullptr) {
      record.telemetry.unavailable_reason =
          opened_ ? "no NVML device at the CUDA device's PCI location" : opened_.unavailable_reason;
      record.warnings.push_back("telemetry unavailable: " + record.telemetry.unavailable_reason);
      return;
    }
    TelemetrySamplerOptions options;
    options.period_seconds = run.telemetry_period;
    sampler_ = std::make_unique<TelemetrySampler>(*nvml_device, options);
    if (const auto watts = nvml_device->power_limit_watts()) {
      record.device.power_limit_watts = *watts;
    }
  }

  [[nodiscard]] bool sampling() const { return sampler_ != nullptr; }
  void start() { sampler_->start(); }
  void stop(double samples, RunRecord& record) {
    record.telemetry = sampler_->stop(samples);
    for (const auto& w : record.telemetry.warnings) record.warnings.push_back("telemetry: " + w);
  }

 private:
  OpenedTelemetry opened_;
  std::unique_ptr<TelemetrySampler> sampler_;
};

std::string out_of_memory_message(const TrainingRun& run, const ResolvedTraining& r) {
  const DeviceMemory m = device_memory(r.device);
  const std::string sequence =
      r.language_model() ? ", sequence " + std::to_string(r.sequence) + " tokens" : "";
  const bool micro = run.accumulation_steps > 1;
  return "CUDA out of memory with TrainingRun::batch_size " + std::to_string(run.batch_size) +
         (micro ? ", TrainingRun::accumulation_steps " + std::to_string(run.accumulation_steps)
                : "") +
         " (model " + run.model + sequence + ", precision " + to_string(r.step.precision) +
         ") on " + r.device.str() + ": device " + format_bytes(m.total) + ", free " +
         format_bytes(m.free) + ", LibTorch allocated " + format_bytes(m.allocated) + " (peak " +
         format_bytes(m.peak_allocated) + "), reserved " + format_bytes(m.reserved) +
         ". Try a smaller TrainingRun::batch_size" +
         (micro ? " or more TrainingRun::accumulation_steps" : "") + ".";
}

// The next, smaller try after running out of memory, and the warning that says it; nothing when
// a forward pass already took one sample. A run in micro-batches keeps its batch (the update the
// user asked for) and doubles the micro-batches; a run without halves the batch.
std::optional<std::string> back_off(TrainingRun& attempt) {
  const std::int64_t batch = attempt.batch_size;
  const int micro_batches = attempt.accumulation_steps;
  if (micro_batches > 1) {
    if (micro_batches >= batch) return std::nullopt;  // micro-batches of one sample
    attempt.accumulation_steps = static_cast<int>(std::min<std::int64_t>(2 * micro_batches, batch));
    return "out of memory at batch " + std::to_string(batch) + micro_batches_text(micro_batches) +
           ": backed off to " + std::to_string(attempt.accumulation_steps) + " micro-batches";
  }
  if (batch == 1) return std::nullopt;
  attempt.batch_size = batch / 2;
  return "out of memory at batch " + std::to_string(batch) + ": backed off to batch " +
         std::to_string(attempt.batch_size);
}

void log_start(const TrainingRun& run, const ResolvedTraining& r, const RunRecord& record) {
  if (run.quiet) return;
  const RunConfig& c = record.config;
  log::info(log::cat(run.model, " on ", record.device.name, " (", r.device.str(), "): batch ",
                     run.batch_size, micro_batches_text(run.accumulation_steps), ", ", c.precision,
                     ", ", c.memory_format, ", ", c.optimizer, " (", c.optimizer_impl, ")",
                     r.step.cuda_graph ? ", CUDA graph" : "", "; warming up for ",
                     run.measure.warmup, " steps"));
}

// Synthetic images; synthetic tokens or windows of the token file for a language model.
std::unique_ptr<BatchSource> make_batches(const TrainingRun& run, const ResolvedTraining& r,
                                          std::uint64_t seed) {
  if (r.language_model()) {
    TokenBatchOptions options;
    options.batch_size = run.batch_size;
    options.sequence = r.sequence;
    options.vocabulary = r.num_classes;
    options.device = r.device;
    options.seed = seed;
    if (run.token_file.empty()) return std::make_unique<SyntheticTokens>(options);
    return std::make_unique<TokenFileBatches>(run.token_file, options);
  }
  SyntheticBatchOptions options;
  options.batch_size = run.batch_size;
  options.sample_shape = r.model.input_shape;
  options.num_classes = r.num_classes;
  options.device = r.device;
  options.memory_format = r.step.memory_format;
  options.seed = seed;
  return std::make_unique<SyntheticBatches>(options);
}

// The JPEG loader of a run on files, on this rank's share (ImageFolderBatches).
std::unique_ptr<ImageFolderBatches> make_folder_batches(const TrainingRun& run,
                                                        const ResolvedTraining& r,
                                                        const TrainingHooks& hooks) {
  ImageFolderBatchOptions options;
  options.folder = run.data;
  options.batch_size = run.batch_size;
  options.threads = run.loader_threads;
  options.seed = static_cast<std::uint64_t>(run.seed);
  options.rank = static_cast<int>(hooks.data_rank);
  options.world_size = static_cast<int>(hooks.data_world_size);
  options.device = r.device;
  options.decode = run.decode;
  options.host_decode_share = run.host_decode_share;
  options.adaptive_host_share = run.adaptive_host_decode_share;
  options.gpu_batches_per_call = run.gpu_batches_per_call;
  options.gpu_decode_threads = run.gpu_decode_threads;
  return std::make_unique<ImageFolderBatches>(options);
}

// The same step on synthetic batches of the folder's classes, measured as the files were: how
// much of the synthetic rate the files reach, in the files' record.
void compare_with_synthetic(const TrainingRun& run, const ResolvedTraining& r, std::int64_t classes,
                            TrainStep& step, Timer& timer, RunRecord& record) {
  ResolvedTraining synthetic = r;
  synthetic.num_classes = classes;
  const std::unique_ptr<BatchSource> batches =
      make_batches(run, synthetic, static_cast<std::uint64_t>(run.seed));
  if (!run.quiet) log::info("the same steps on synthetic batches, for the comparison");
  const Measurement m = measure([&] { (void)step(batches->next()); },
                                static_cast<double>(run.batch_size), timer, run.measure);
  synchronize(r.device);
  record.metrics["synthetic_images_per_second"] = m.throughput.median;
  if (m.throughput.median > 0) {
    record.metrics["data_to_synthetic_ratio"] = record.throughput.median / m.throughput.median;
  }
}

// The timed steps whose batch came after the GPU had run out of work (ImageFolderBatches::
// late_batches()), and an input-bound warning where they are more than a tenth of the steps.
// Where training falls short of its synthetic rate without late batches, the loader kept ahead
// and the shortfall is the GPU time, bandwidth or host cores it took from training. (Each
// window's first step follows the window's synchronisation, which the count leaves out.)
void add_late_batches(std::int64_t late, const Measurement& m, RunRecord& record) {
  record.metrics["loader_late_batches"] = static_cast<double>(late);
  if (m.timed_steps > 0 && late * 10 > m.timed_steps) {
    record.warnings.push_back("input-bound: the GPU ran out of work waiting for " +
                              std::to_string(late) + " of the " + std::to_string(m.timed_steps) +
                              " timed batches");
  }
}

// The loader's figures when the timed windows began (the warm-up's are left out of the `_timed`
// figures).
struct LoaderSnapshot {
  CpuLoaderStats stats;
  std::vector<std::pair<std::string, double>> gpu;
  std::int64_t late_batches = 0;
};

LoaderSnapshot snapshot(const ImageFolderBatches& folder) {
  return {folder.stats(), folder.gpu_figures(), folder.late_batches()};
}

// The value of `name` among ImageFolderBatches::gpu_figures(), if there.
std::optional<double> figure(const std::vector<std::pair<std::string, double>>& figures,
                             const std::string& name) {
  for (const auto& [n, value] : figures) {
    if (n == name) return value;
  }
  return std::nullopt;
}

// The GPU decode thread's waits over the timed windows: each figure's change since `before`.
void add_timed_gpu_waits(const std::vector<std::pair<std::string, double>>& before,
                         const std::vector<std::pair<std::string, double>>& after,
                         RunRecord& record) {
  for (const std::string name :
       {"loader_gpu_thread_loader_wait_seconds", "loader_gpu_thread_full_wait_seconds"}) {
    const std::optional<double> first = figure(before, name);
    const std::optional<double> last = figure(after, name);
    if (first && last) record.metrics[name + "_timed"] = *last - *first;
  }
}

// What the loader did, and whether it kept up: its decoding rate per busy core times its threads
// is the most it can deliver; a step rate above 90% of that is input-bound. The figures count
// from the loader's start, warm-up included; the share that ran and the GPU decoder's waits
// also over the timed windows alone (`_timed`, since `before`).
void add_loader_figures(const ImageFolderBatches& folder, const TrainingRun& run,
                        const LoaderSnapshot& before, RunRecord& record) {
  const CpuLoaderStats stats = folder.stats();
  double busy = 0;
  for (double seconds : stats.decode_seconds_per_thread) busy += seconds;
  record.metrics["loader_threads"] = folder.threads();
  record.metrics["loader_images_decoded"] = static_cast<double>(stats.images_decoded);
  record.metrics["loader_skipped_files"] = static_cast<double>(stats.skipped);
  record.metrics["loader_host_bytes"] = static_cast<double>(stats.host_bytes);
  const bool on_gpu = folder.decode() == ImageDecode::kGpu;
  record.metrics["loader_decodes_on_gpu"] = on_gpu ? 1.0 : 0.0;
  if (on_gpu && run.adaptive_host_decode_share) {
    // The share that ran: the slots the threads were given over the samples delivered (the
    // files on the GPU path's side that a GPU decoder should not get are not counted).
    const double share = host_share_between(CpuLoaderStats{}, stats, run.host_decode_share);
    record.metrics["loader_host_decode_share_adaptive"] = 1;
    record.metrics["loader_host_decode_share"] = share;
    record.metrics["loader_host_decode_share_last"] = stats.host_share_now;
    record.metrics["loader_host_decode_share_timed"] =
        host_share_between(before.stats, stats, share);
  } else if (on_gpu) {
    record.metrics["loader_host_decode_share"] = run.host_decode_share;
  }
  double gpu_stream_seconds = 0;  // summed over the decode threads' streams
  double decode_threads = 1;
  const std::vector<std::pair<std::string, double>> gpu = folder.gpu_figures();
  add_timed_gpu_waits(before.gpu, gpu, record);
  for (const auto& [name, value] : gpu) {
    record.metrics[name] = value;
    if (name == "loader_gpu_stream_seconds") gpu_stream_seconds = value;
    if (name == "loader_gpu_decode_threads") decode_threads = value;
  }
  if (busy > 0 && stats.images_decoded > 0) {
    // On the GPU path the threads read files and headers (and decode the odd file): their rate
    // and the decode stream's (images over its busy seconds) each bound the loader.
    const double per_core = static_cast<double>(stats.images_decoded) / busy;
    const double capacity = per_core * folder.threads();
    record.metrics["loader_images_per_second_per_core"] = per_core;
    record.metrics["loader_capacity_images_per_second"] = capacity;
    if (record.throughput.median > 0.9 * capacity) {
      record.warnings.push_back("input-bound: the loader's " + std::to_string(folder.threads()) +
                                " CPU threads " + (on_gpu ? "read" : "decode") + " at most " +
                                format_number(capacity, 4) + " img/s (" +
                                format_number(per_core, 4) + " per busy core); training ran at " +
                                format_number(record.throughput.median, 4) + " img/s");
    }
  }
  if (on_gpu && gpu_stream_seconds > 0 && stats.batches_delivered > 0) {
    // Each stream decodes its share at its own rate: the rates add up.
    const double gpu_capacity = static_cast<double>(stats.batches_delivered * folder.batch_size()) *
                                decode_threads / gpu_stream_seconds;
    record.metrics["loader_gpu_capacity_images_per_second"] = gpu_capacity;
    if (record.throughput.median > 0.9 * gpu_capacity) {
      record.warnings.push_back("input-bound: the GPU decodes at most " +
                                format_number(gpu_capacity, 4) +
                                " img/s beside training; training ran at " +
                                format_number(record.throughput.median, 4) + " img/s");
    }
  }
  if (stats.skipped > 0) {
    std::string first;
    for (const SkippedFile& f : stats.first_skipped) {
      if (first.size() > 400) break;
      first += (first.empty() ? "" : ", ") + f.path;
    }
    record.warnings.push_back(std::to_string(stats.skipped) +
                              " bad image files were skipped, their slots filled from other "
                              "files (first: " +
                              first + ")");
  }
}

// A language model's figures: tokens per second, the FLOP count behind MFU (6N + 6 L C T per
// token, as llm.c and PaLM count training FLOPs; its inputs are in the record) and the attention
// kernel LibTorch picked.
void add_language_model_figures(const ResolvedTraining& r, torch::nn::Module& model,
                                RunRecord& record) {
  const auto parameters = static_cast<double>(count_parameters(model));
  const auto t = static_cast<double>(r.sequence);
  const double per_token = transformer_training_flops_per_token(
      parameters, static_cast<double>(r.model.layers), static_cast<double>(r.model.width), t);
  record.metrics["sequence_length"] = t;
  record.metrics["tokens_per_second"] = record.throughput.median * t;
  record.metrics["model_parameters"] = parameters;
  record.metrics["model_layers"] = static_cast<double>(r.model.layers);
  record.metrics["model_width"] = static_cast<double>(r.model.width);
  record.metrics["model_flops_per_token"] = per_token;
  record.metrics["model_flops_per_sample"] = per_token * t;
  const std::string kernel = attention_kernel_of(model, r.sequence, r.step.precision, r.device);
  if (!kernel.empty()) record.config.kernel_fusion = "attention: " + kernel;
  // The logits come out of the last matrix product in the autocast dtype.
  const torch::ScalarType logits_dtype =
      uses_autocast(r.step.precision) ? autocast_dtype(r.step.precision) : torch::kFloat;
  if (fused_cross_entropy_applies(r.device, logits_dtype)) {
    record.config.kernel_fusion += "; cross-entropy: gpuperf";
  }
  if (timed_gemm_algorithms_apply(r.device, logits_dtype)) {
    record.config.kernel_fusion += "; GEMMs: timed algorithms";
  }
}

// Whether the run predicts its peak memory: on CUDA, where the caching allocator measures it,
// for a language model (counted) or an image model on synthetic batches (probed: a run on files
// would need its loader probed too).
bool predicts_memory(const TrainingRun& run, const ResolvedTraining& r) {
  return run.predict_memory && r.device.is_cuda() && (r.language_model() || run.data.empty());
}

// What a finished step leaves behind beside the allocator's cache: cuBLAS's per-stream workspaces
// and the fused convolutions' plans per shape (their compiled kernels sit in the CUDA context,
// outside the allocator). Only where no captured graph of the run is left.
void release_step_memory(const torch::Device& device) {
  release_fused_convolution_plans();
  release_cached_memory_and_workspaces(device);
}

// An image model's memory, measured: the peak of a short run of the step as the run takes it
// (eager, or the eager warm-up, capture and a replay of a captured step) from a fresh model on,
// at a quarter and half of the run's batch (where cuDNN picks its algorithms, and their
// workspaces, as it will for the run). Not in the figures; every probe's memory, cuBLAS's
// per-stream workspaces included, is handed back after it.
struct MemoryProbe {
  std::int64_t micro_batch[2] = {0, 0};  // samples per forward/backward
  std::int64_t batch[2] = {0, 0};
  double peak[2] = {0, 0};           // allocated
  double peak_reserved[2] = {0, 0};  // the caching allocator's segments

  // Peak allocated bytes per sample of a micro-batch: the activations (and a captured step's
  // copy of its batch).
  [[nodiscard]] double slope() const { return growth(peak); }
  // The reserved peak at `micro` samples per micro-batch, extrapolated from the larger probe.
  [[nodiscard]] double reserved_at(std::int64_t micro) const {
    return peak_reserved[1] + growth(peak_reserved) * static_cast<double>(micro - micro_batch[1]);
  }

 private:
  [[nodiscard]] double growth(const double (&values)[2]) const {
    if (micro_batch[1] <= micro_batch[0]) return 0.0;
    return std::max(0.0,
                    (values[1] - values[0]) / static_cast<double>(micro_batch[1] - micro_batch[0]));
  }
};

MemoryProbe probe_image_model_memory(const TrainingRun& run, const ResolvedTraining& r,
                                     std::int64_t classes) {
  const std::int64_t small = std::max<std::int64_t>(1, run.batch_size / 4);
  const std::int64_t batches[2] = {small, std::max(small + 1, run.batch_size / 2)};
  // Two steps settle the optimizer's lazy state; a captured step warms up first and replays once.
  const int steps = r.step.cuda_graph ? r.step.graph_warmup + 2 : 2;
  MemoryProbe probe;
  for (int i = 0; i < 2; ++i) {
    probe.batch[i] = batches[i];
    probe.micro_batch[i] = micro_batch_size(batches[i], r.step.accumulation_steps);
    {
      TrainingRun at = run;
      at.batch_size = batches[i];
      reset_peak_memory(r.device);
      TrainStep step(ModelRegistry::global().create(run.model, classes), r.device, r.step,
                     cross_entropy_loss());
      const std::unique_ptr<BatchSource> source =
          make_batches(at, r, static_cast<std::uint64_t>(run.seed));
      for (int s = 0; s < steps; ++s) step(source->next());
      synchronize(r.device);
      const DeviceMemory memory = device_memory(r.device);
      probe.peak[i] = memory.peak_allocated;
      probe.peak_reserved[i] = memory.peak_reserved;
    }
    release_step_memory(r.device);
  }
  return probe;
}

// The prediction for an image model: activations from the probes' slope, and as workspaces what
// the larger probe's peak holds beyond the planner's other terms at its batch.
TrainingMemoryPrediction predict_image_model_memory(const torch::nn::Module& model,
                                                    const TrainStepOptions& options,
                                                    const MemoryProbe& probe,
                                                    TrainingMemoryInput input) {
  input.activation_bytes_per_sample = probe.slope();
  TrainingMemoryInput at_probe = input;
  at_probe.batch_size = probe.batch[1];
  at_probe.workspace_bytes = 0;
  const double others = predict_training_memory(model, options, at_probe).allocated_bytes;
  input.workspace_bytes = std::max(0.0, probe.peak[1] - others);
  TrainingMemoryPrediction p = predict_training_memory(model, options, input);
  // The segments the allocator reserves, extrapolated the same way from the probes' reserved
  // peaks (the planner's fixed factor misses how this model's blocks split and round).
  p.reserved_bytes =
      std::max(p.allocated_bytes,
               probe.reserved_at(micro_batch_size(input.batch_size, options.accumulation_steps)));
  return p;
}

// "cuDNN/cuBLAS workspaces" -> "cudnn_cublas_workspaces".
std::string metric_name(const std::string& term) {
  std::string out;
  for (const unsigned char c : term) {
    if (std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  return out;
}

// The prediction beside the measured peaks: totals, the error, and every term the allocator
// holds.
void add_memory_prediction(const TrainingMemoryPrediction& p, RunRecord& record) {
  record.metrics["predicted_peak_allocated_bytes"] = p.allocated_bytes;
  record.metrics["predicted_peak_reserved_bytes"] = p.reserved_bytes;
  if (record.peak_memory_bytes > 0) {
    record.metrics["predicted_peak_error"] = p.allocated_bytes / record.peak_memory_bytes - 1;
  }
  for (const MemoryTerm& term : p.plan.terms) {
    if (term.bytes > 0 && term.name != "CUDA context" && term.name != "allocator fragmentation") {
      record.metrics["memory_plan_" + metric_name(term.name) + "_bytes"] = term.bytes;
    }
  }
  for (const std::string& note : p.plan.notes)
    record.warnings.push_back("memory prediction: " + note);
}

// Builds the model and the step, times the windows and fills the measured fields. Returns why
// the CUDA graph was not used, if it was asked for and failed ("" otherwise).
std::string measure_training(const TrainingRun& run, const ResolvedTraining& r,
                             const TrainingHooks& hooks, RunRecord& record) {
  // Off the legacy default stream: nvJPEG's hardware decoder (GPU-decoded files) queues work on
  // blocking streams of its own, which would wait for each training step in flight.
  const SideStreamScope stream(r.device);
  const TimedGemmAlgorithmsScope gemms(run.timed_gemm_algorithms);
  // Before the seed is set: the probe's models do not change the run's weights.
  const bool predict = predicts_memory(run, r);
  std::optional<MemoryProbe> probe;
  if (predict && !r.language_model()) {
    probe = probe_image_model_memory(run, r, r.num_classes);
    record.metrics["activation_bytes_per_sample"] = probe->slope();
    record.metrics["memory_probe_batch_size"] = static_cast<double>(probe->batch[1]);
    record.metrics["memory_probe_peak_bytes"] = probe->peak[1];
    record.metrics["memory_probe_peak_reserved_bytes"] = probe->peak_reserved[1];
    record.metrics["memory_probe_small_batch_size"] = static_cast<double>(probe->batch[0]);
    record.metrics["memory_probe_small_peak_bytes"] = probe->peak[0];
    record.metrics["memory_probe_small_peak_reserved_bytes"] = probe->peak_reserved[0];
  }
  torch::manual_seed(static_cast<std::uint64_t>(run.seed));
  reset_peak_memory(r.device);
  // Files first: the folder says how many classes the model needs.
  std::unique_ptr<ImageFolderBatches> folder;
  std::int64_t classes = r.num_classes;
  if (!run.data.empty()) {
    folder = make_folder_batches(run, r, hooks);
    if (run.num_classes > 0 && run.num_classes < folder->num_classes()) {
      throw ConfigError(
          "TrainingRun::num_classes", std::to_string(run.num_classes),
          "is below the " + std::to_string(folder->num_classes()) + " classes of " + run.data);
    }
    if (run.num_classes == 0) classes = folder->num_classes();
    record.config.num_classes = classes;
  }
  torch::nn::AnyModule model = ModelRegistry::global().create(run.model, classes);
  if (run.activation_checkpointing) set_activation_checkpointing(*model.ptr(), true);
  TrainStep step(std::move(model), r.device, r.step,
                 r.language_model() ? language_model_loss() : cross_entropy_loss());
  if (hooks.gradient_sync) step.set_gradient_sync(hooks.gradient_sync(step));
  std::optional<TrainingMemoryPrediction> prediction;
  if (predict) {
    TrainingMemoryInput input;
    input.batch_size = run.batch_size;
    input.sequence = r.sequence;
    input.activation_checkpointing = run.activation_checkpointing;
    input.ranks = hooks.data_world_size;
    prediction = probe ? predict_image_model_memory(step.module(), r.step, *probe, input)
                       : predict_training_memory(step.module(), r.step, input);
  }
  const std::unique_ptr<BatchSource> synthetic =
      folder ? nullptr
             : make_batches(run, r, static_cast<std::uint64_t>(run.seed) + hooks.data_seed_offset);
  BatchSource& batches = folder ? static_cast<BatchSource&>(*folder) : *synthetic;
  record.config.data_source = batches.name();

  auto timer = make_timer(r.device.is_cuda() ? TimerKind::kCudaEvent : TimerKind::kSteadyClock,
                          r.device.has_index() ? r.device.index() : 0);
  record.timer = timer->name();
  log_start(run, r, record);
  RunTelemetry telemetry(run, r.device, record);
  LoaderSnapshot loader_before;  // the warm-up's figures, left out of the timed ones below
  auto before_timing = [&] {
    if (folder) loader_before = snapshot(*folder);
    if (!telemetry.sampling()) return;
    synchronize(r.device);  // so the sampled window holds the timed steps and nothing before
    telemetry.start();
  };
  StepResult last;
  // The loss of each window's last step, read between windows: measure() has waited for the
  // window's end, so the device is idle and nothing timed waits for the host.
  std::vector<double> window_losses;
  auto progress = [&](const WindowProgress& p) {
    window_losses.push_back(last.loss.item<double>());
    if (run.quiet) return;
    // Time left at the pace so far; in adaptive mode the run may stop earlier, and stops at
    // MeasureOptions::max_seconds of timed time at the latest.
    double left = p.elapsed_seconds / p.window * (p.planned_windows - p.window);
    if (run.measure.adaptive)
      left = std::min(left, std::max(0.0, run.measure.max_seconds - p.elapsed_seconds));
    // format_readable: "0.0700 samples/s" for a large model on a CPU, not "0".
    log::info(log::cat("window ", p.window, "/", p.planned_windows, ": ",
                       format_readable(p.window_throughput), " samples/s, loss ",
                       format_fixed(window_losses.back(), 4),
                       p.window < p.planned_windows
                           ? std::string(run.measure.adaptive ? "; at most " : "; about ") +
                                 format_duration(left) + " left"
                           : std::string()));
  };
  // The first step's loss, copied on the device (a captured step overwrites its loss tensor)
  // and read after the run, so that no step waits for the host.
  torch::Tensor first_loss;
  const Measurement m = measure(
      [&] {
        last = step(batches.next());
        if (!first_loss.defined()) first_loss = last.loss.detach().clone();
      },
      static_cast<double>(run.batch_size), *timer, run.measure, progress, before_timing);
  synchronize(r.device);
  if (telemetry.sampling())
    telemetry.stop(static_cast<double>(run.batch_size) * m.timed_steps, record);

  set_measurement(record, m);
  if (const std::string overrun = time_limit_overrun(m, run.measure); !overrun.empty()) {
    record.warnings.push_back(overrun);
  }
  record.total_steps = step.steps();
  record.config.graph_mode = step.graph_captured() ? "cuda-graph" : "eager";
  record.config.kernel_fusion = step.kernel_fusion();
  // What ran inside: the fused seed model converts its input to channels_last itself.
  if (step.model_ran_channels_last())
    record.config.memory_format = to_string(MemoryFormat::kChannelsLast);
  record.skipped_steps = step.skipped_steps();
  if (first_loss.defined()) record.first_loss = first_loss.item<double>();
  record.final_loss = last.loss.item<double>();
  record.window_losses = std::move(window_losses);
  record.final_loss_scale = step.scaler().get_scale();
  const DeviceMemory memory = device_memory(r.device);
  record.peak_memory_bytes = memory.peak_allocated;
  if (r.device.is_cuda()) record.metrics["peak_reserved_bytes"] = memory.peak_reserved;
  if (prediction) add_memory_prediction(*prediction, record);
  if (r.language_model()) {
    add_language_model_figures(r, step.module(), record);
    // The optimizer's kernel in the last step, and whether it wrote the forward pass's weights.
    if (const FusedOptimizer* fused = step.fused_optimizer();
        fused != nullptr && fused->ran_own_kernel()) {
      record.config.kernel_fusion += "; optimizer: gpuperf's Adam";
      if (step.weight_copies() > 0) record.config.kernel_fusion += " writing the 16-bit weights";
      if (step.updated_in_backward()) record.config.kernel_fusion += ", beside backward";
    }
  }
  if (folder) {
    add_loader_figures(*folder, run, loader_before, record);
    add_late_batches(folder->late_batches() - loader_before.late_batches, m, record);
  }
  if (folder && run.compare_synthetic)
    compare_with_synthetic(run, r, classes, step, *timer, record);
  if (!run.kernel_trace.empty()) {
    write_kernel_trace(run.kernel_trace, [&] {
      for (std::int64_t i = 0; i < run.measure.steps_per_window; ++i) last = step(batches.next());
      synchronize(r.device);
    });
  }
  if (hooks.after_measure) hooks.after_measure(step, record);
  return step.graph_fallback_reason();
}

// Datasheet match and efficiency figures (% of peak, samples per joule, cost). A missing spec
// file or an unknown GPU costs the figures that need it, never the run.
void add_efficiency(RunRecord& record) {
  try {
    // A CPU run (or an unknown GPU) still gets its FLOP counts.
    const std::optional<GpuSpec> spec = datasheet_entry(record.device, "", record.warnings);
    add_efficiency_metrics(record, compute_efficiency(record, spec ? &*spec : nullptr));
  } catch (const Error& e) {
    record.warnings.push_back(std::string("efficiency figures unavailable: ") + e.what());
  }
}

// Derived figures and warnings, written into the record once; printers only read them.
void enrich(const TrainingRun& run, const ResolvedTraining& r, const std::string& graph_fallback,
            RunRecord& record) {
  if (run.kernel_fusion == Switch::kOn && record.config.kernel_fusion == "none") {
    record.warnings.push_back("kernel fusion on: nothing ran fused (" + run.model + ", " +
                              to_string(r.step.precision) + ", " + to_string(run.memory_format) +
                              "): cuDNN's fused kernels do not apply here");
  }
  if (!graph_fallback.empty()) record.warnings.push_back(graph_fallback);
  if (r.device.is_cpu()) {
    struct rusage usage {};
    if (getrusage(RUSAGE_SELF, &usage) == 0) {
      record.metrics["host_peak_rss_bytes"] = static_cast<double>(usage.ru_maxrss) * 1024.0;
    }
  }
  // The efficiency figures and the ImageNet projection (imagenet_projection_seconds(): the job's
  // rate, all ranks' when data-parallel).
  add_efficiency(record);
  const DistributedSummary& d = record.distributed;
  if (d.world_size > 1 && !d.parameters_identical) {
    record.warnings.emplace_back(
        "the ranks' parameters differ after the run: the data-parallel "
        "gradients did not agree");
  }
  if (!std::isfinite(record.final_loss)) {
    record.warnings.push_back("the final loss is not finite (" + std::to_string(record.final_loss) +
                              ")");
  } else if (std::isfinite(record.first_loss) && !(record.final_loss < record.first_loss)) {
    record.warnings.push_back("the loss did not fall (first " +
                              format_number(record.first_loss, 4) + ", final " +
                              format_number(record.final_loss, 4) + "): the run did not train");
  }
  if (record.skipped_steps > 0) {
    record.warnings.push_back(std::to_string(record.skipped_steps) +
                              " optimizer steps were skipped for inf/NaN gradients");
  }
  const double spread = record.throughput.relative_ci95_half_width();
  if (spread > 0.05) {
    record.warnings.push_back("throughput is noisy: 95% CI half-width is " +
                              format_number(100 * spread, 3) +
                              "% of the mean; use MeasureOptions::adaptive or more windows");
  }
}

}  // namespace

void detail::check_training_run(const TrainingRun& run) {
  run.validate();
  (void)resolve(run);
}

RunRecord run_training(const TrainingRun& run, const TrainingHooks& hooks) {
  run.validate();
  set_intra_op_threads(run.threads);
  ResolvedTraining resolved = resolve(run);
  // Every rank of a data-parallel run must run one batch size: no backing off alone.
  const bool may_back_off = run.back_off_on_out_of_memory && !hooks.gradient_sync;
  TrainingRun attempt = run;
  std::vector<std::string> backed_off;
  for (;;) {
    RunRecord record = describe(attempt, resolved);
    std::string graph_fallback;
    try {
      graph_fallback = measure_training(attempt, resolved, hooks, record);
    } catch (const c10::OutOfMemoryError&) {
      const std::string message = out_of_memory_message(attempt, resolved);
      // Nothing of the run holds memory any more: hand the cache back, for the next try or the
      // caller's next run.
      release_cached_memory(resolved.device);
      if (!may_back_off) throw OutOfMemoryError(message);
      std::optional<std::string> step_back = back_off(attempt);
      if (!step_back) throw OutOfMemoryError(message);
      backed_off.push_back(std::move(*step_back));
      if (!run.quiet) log::warn(backed_off.back());
      resolved.step.accumulation_steps = attempt.accumulation_steps;  // the step splits by it
      continue;
    }
    if (!backed_off.empty()) {
      if (attempt.batch_size != run.batch_size) {
        record.metrics["requested_batch_size"] = static_cast<double>(run.batch_size);
      }
      if (attempt.accumulation_steps != run.accumulation_steps) {
        record.metrics["requested_accumulation_steps"] =
            static_cast<double>(run.accumulation_steps);
      }
      record.warnings.insert(record.warnings.begin(), backed_off.begin(), backed_off.end());
    }
    enrich(attempt, resolved, graph_fallback, record);
    return record;
  }
}

BatchSearchResult find_largest_batch(const TrainingRun& run, const BatchSearchOptions& options) {
  run.validate();
  options.validate();
  if (run.accumulation_steps != 1) {
    // The search sizes one step's batch by its memory; with micro-batches the step's batch has no
    // such limit, and the tries would fall below the micro-batch count.
    throw ConfigError("TrainingRun::accumulation_steps", std::to_string(run.accumulation_steps),
                      "the largest-batch search finds the batch one forward and backward holds: "
                      "search without accumulation, then accumulate that batch");
  }
  const ResolvedTraining resolved = resolve(run);  // every ConfigError before the first try
  TrainingRun trial = run;
  trial.quiet = true;
  trial.telemetry = false;
  trial.kernel_trace.clear();
  trial.predict_memory = false;
  trial.back_off_on_out_of_memory = false;
  trial.measure.adaptive = false;
  trial.measure.windows = 1;
  trial.measure.steps_per_window = 1;
  // Capture needs its eager warm-up steps; an eager run one step to settle lazy state.
  trial.measure.warmup = resolved.step.cuda_graph ? resolved.step.graph_warmup + 1 : 1;
  return largest_batch_that_fits(
      [&](std::int64_t batch) {
        trial.batch_size = batch;
        Trial t;
        try {
          const RunRecord record = run_training(trial);
          const auto reserved = record.metrics.find("peak_reserved_bytes");
          t.peak_bytes = reserved != record.metrics.end() ? reserved->second : kNotAvailable;
        } catch (const OutOfMemoryError& e) {
          t.outcome = TrialOutcome::kOutOfMemory;
          t.message = e.what();
        } catch (const ConfigError&) {
          throw;
        } catch (const std::exception& e) {
          t.outcome = TrialOutcome::kError;
          t.message = e.what();
        }
        // The try's step and its graph are gone: what it left behind may go too.
        release_step_memory(resolved.device);
        if (!run.quiet) {
          log::info(log::cat("batch ", batch, ": ", to_string(t.outcome),
                             std::isfinite(t.peak_bytes)
                                 ? " (peak " + format_bytes(t.peak_bytes) + " reserved)"
                                 : std::string()));
        }
        return t;
      },
      options);
}

RunRecord run_training_at_largest_batch(const TrainingRun& run, const BatchSearchOptions& options) {
  const BatchSearchResult found = find_largest_batch(run, options);
  if (!run.quiet) {
    log::info(log::cat("largest batch that trains: ", found.largest_fitting,
                       found.smallest_failing > 0
                           ? "; " + std::to_string(found.smallest_failing) + " does not"
                           : std::string("; every try up to the limit fit"),
                       " (", found.tries.size(), " tries); measuring it"));
  }
  // The batches that fit a try, largest first.
  std::vector<std::int64_t> fitting;
  for (const BatchTry& t : found.tries) {
    if (t.outcome == TrialOutcome::kFits) fitting.push_back(t.batch);
  }
  std::sort(fitting.rbegin(), fitting.rend());
  fitting.erase(std::unique(fitting.begin(), fitting.end()), fitting.end());
  TrainingRun at = run;
  at.back_off_on_out_of_memory = false;
  if (ModelRegistry::global().get(run.model).task != ModelTask::kLanguageModel)
    at.predict_memory = false;
  const torch::Device device = resolve(at).device;
  std::vector<std::string> fell_back;
  std::optional<RunRecord> measured;
  for (std::size_t i = 0; i < fitting.size() && !measured; ++i) {
    at.batch_size = fitting[i];
    try {
      measured = run_training(at);
    } catch (const OutOfMemoryError&) {
      if (i + 1 == fitting.size()) throw;
      release_step_memory(device);
      fell_back.push_back(
          "batch " + std::to_string(fitting[i]) +
          " fit the search's short try but ran out of memory when measured "
          "(at the edge of the memory, a capture or autotuning asked for more): measured batch " +
          std::to_string(fitting[i + 1]) + ", the next largest that fit");
      if (!run.quiet) log::warn(fell_back.back());
    }
  }
  RunRecord& record = *measured;
  record.warnings.insert(record.warnings.begin(), fell_back.begin(), fell_back.end());
  record.metrics["batch_search_largest_fitting"] = static_cast<double>(found.largest_fitting);
  record.metrics["batch_search_smallest_failing"] = static_cast<double>(found.smallest_failing);
  record.metrics["batch_search_tries"] = static_cast<double>(found.tries.size());
  return record;
}

}  // namespace gpuperf
