// The GPU advisor. Every figure it uses becomes a reason line, so that the ranking can be
// checked by hand; estimates say they are estimates.
#include "gpuperf/advise/advisor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "gpuperf/advise/fit.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/plan/memory_plan.h"
#include "gpuperf/specs/efficiency.h"

namespace gpuperf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kHoursPerYear = 365.25 * 24;
constexpr double kAmortizationYears = 3;
constexpr double kElectricityUsdPerKwh = 0.15;
constexpr double kContextReserveBytes = 1e9;
constexpr double kFragmentationShare = 0.05;

// Parameter and element counts read better as 25,557,032 or 7e+10 than as 2.5557e+07.
std::string count_text(double v) {
  return v < 1e12 && v == std::floor(v) ? format_grouped(v) : format_number(v, 6);
}

double activation_bytes_per_element(NumericFormat format) {
  if (is_16_bit(format)) return 2;
  if (is_8_bit(format)) return 1;
  return 4;
}

// Whether a result's or a publication's precision, as its file names it, is of the requested
// format's class: AMP recipes keep fp32 master weights; inference stores weights in the run's
// precision.
bool same_precision_class(const std::string& figure, NumericFormat wanted) {
  const bool half = figure == "fp16" || figure == "bf16" || figure == "amp";
  return is_16_bit(wanted) ? half : figure == to_string(wanted);
}

// The memory planner's precision of a training request: autocast keeps fp32 master weights.
TrainingPrecision training_precision(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp16:
      return TrainingPrecision::kAmpFp16;
    case NumericFormat::kBf16:
      return TrainingPrecision::kAmpBf16;
    case NumericFormat::kFp32:
    case NumericFormat::kTf32:
    case NumericFormat::kInt8:  // inference only: validate() refuses them in training
    case NumericFormat::kFp8:
      break;
  }
  return TrainingPrecision::kFp32;
}

struct Reference {
  const GpuSpec* spec;
  double per_gpu;    // 0 for a measured inference result none of whose batch sizes fit the budget
  std::string what;  // "measured (file)" or "published (source)"
  bool measured;
  std::int64_t batch_size = 0;  // inference: the batch size quoted
  double p50 = kNaN;            // inference: its per-call latency, seconds
  double p99 = kNaN;
  std::string precision{};  // of the measurement or publication ("" when unknown)
  // Measured runs and PyTorch published figures: gpuperf's own stack; false for MLPerf figures,
  // which are never ranked against it nor scaled to other GPUs.
  bool same_stack = true;
  // A measured run's energy per sample from its telemetry (NaN when none), and its origin.
  double joules_per_sample = kNaN;
  std::string energy_what{};
};

// The datasheet peak key of a precision as a capability: AMP runs fp16, fp8 and int8 have their
// own paths (peak_key_for_precision() leaves them out, having no efficiency to compute).
std::string capability_key(const std::string& precision, const GpuSpec& spec) {
  if (precision == "amp") return "fp16";
  if (precision == "fp8" || precision == "int8") return precision;
  return peak_key_for_precision(precision, &spec);
}

// Whether `a` is a better reference than `b` (null) for a request in `wanted`: the exact
// precision before another of its class (fp16 for bf16), then the faster; among inference results
// that all miss the latency budget (0 throughput), the one closest to it.
bool better_reference(const Reference& a, const Reference* b, NumericFormat wanted) {
  if (b == nullptr) return true;
  const std::string precision = to_string(wanted);
  const bool a_exact = a.precision == precision;
  const bool b_exact = b->precision == precision;
  if (a_exact != b_exact) return a_exact;
  return a.per_gpu > b->per_gpu || (a.per_gpu == b->per_gpu && a.p99 < b->p99);
}

std::string batch_list(const InferenceResult& r) {
  std::string out;
  for (const auto& b : r.batches) out += (out.empty() ? "" : ", ") + std::to_string(b.batch_size);
  return out;
}

// A measured inference result as a throughput reference: the batch size with the highest
// batch / p50 among those the request allows (its batch size, if given) whose p99 fits the
// latency budget. Null with `note` set when the file has none of the requested batch size.
std::optional<Reference> inference_reference(const LoadedInference& file, const GpuSpec* spec,
                                             const AdvisorRequest& request, std::string& note) {
  const InferenceResult& r = file.result;
  const bool budget = !std::isnan(request.latency_budget_seconds);
  const BatchSizeResult* best = nullptr;
  const BatchSizeResult* smallest = nullptr;
  for (const auto& b : r.batches) {
    if (request.batch_size > 0 && b.batch_size != request.batch_size) continue;
    if (smallest == nullptr || b.batch_size < smallest->batch_size) smallest = &b;
    if (budget && !(b.latency.p99 <= request.latency_budget_seconds)) continue;
    if (best == nullptr || b.throughput_median > best->throughput_median) best = &b;
  }
  const std::string setting = r.precision + ", " + (r.cuda_graph ? "CUDA graph" : "eager") +
                              (r.kernel_fusion == "none" ? "" : ", fused " + r.kernel_fusion);
  if (smallest == nullptr) {
    note = "measured " + file.path + " has no batch " + std::to_string(request.batch_size) +
           " (measured: " + batch_list(r) + "): not used";
    return std::nullopt;
  }
  // The quoted batch size: the best within the budget, or the smallest when none meets it.
  const auto quote = [&](const BatchSizeResult& b, double per_gpu, std::string what) {
    Reference ref{spec, per_gpu, std::move(what), true};
    ref.batch_size = b.batch_size;
    ref.p50 = b.latency.p50;
    ref.p99 = b.latency.p99;
    ref.precision = r.precision;
    return ref;
  };
  if (best == nullptr) {
    return quote(
        *smallest, 0,
        "measured, but no batch size meets p99 <= " + format_ms(request.latency_budget_seconds) +
            ": batch " + std::to_string(smallest->batch_size) + " has p99 " +
            format_ms(smallest->latency.p99) + " (" + file.path + ", " + setting + ")");
  }
  return quote(*best, best->throughput_median,
               "measured " + format_fixed_or(best->throughput_median, 0) + " samples/s at batch " +
                   std::to_string(best->batch_size) + " (batch / p50; p50 " +
                   format_ms(best->latency.p50) + ", p99 " + format_ms(best->latency.p99) +
                   (budget ? " <= budget " + format_ms(request.latency_budget_seconds) : "") +
                   "; " + file.path + ", " + setting + ")");
}

// What advise_with() derives from the request once, before looking at any GPU.
struct Workload {
  bool train = true;
  std::optional<ModelCount> count;  // nullopt for a model given by its parameter count
  double params = 0;
  double flops_per_sample = 0;
  std::string unit;  // "sample", or "token" for a parameter count without a sequence length
  int gpus = 1;
  MemoryEstimate memory;  // per GPU before sharding, without the GPU's reserve
  std::vector<std::string> memory_reasons;
  // Training on more than one GPU: the memory planner's data parallel, ZeRO-1, -2 and -3 rungs.
  std::vector<StrategyPlan> ladder;
  // The requested run in samples (tokens for a per-token workload) and how they were counted;
  // NaN and empty without a run.
  double run_samples = kNaN;
  std::string run_text;
  // Rental prices per GPU-hour of single GPUs, by datasheet id.
  std::map<std::string, double> price_by_id;
  // The default table's entries, by datasheet id (advise_with()'s default_prices).
  std::map<std::string, const RentalPrice*> table_by_id;
};

// A data-parallel training run of the requested model on a GPU of the database: how its global
// throughput scaled across its ranks. The efficiency is the record's own (against its baseline),
// else global / (ranks x a single-process run of it on the same GPU); NaN when neither exists.
struct ScalingReference {
  const GpuSpec* spec = nullptr;
  std::string path;
  std::string precision;
  std::string interconnect;
  int world_size = 1;
  double global = kNaN;  // samples/s of all ranks
  double efficiency = kNaN;
  double baseline = kNaN;     // the single-GPU samples/s it is judged against
  std::string baseline_what;  // "its recorded baseline" or "the 1-GPU run <file>"
};

// The throughput figures found for the request, on the GPUs they were measured or published on.
struct References {
  std::vector<Reference> refs;
  // Measured scaling of data-parallel runs, used for the request's GPU count on their GPU.
  std::vector<ScalingReference> scaling;
  // Notes about measured files that match a GPU but could not be used, said on that GPU.
  std::vector<std::pair<const GpuSpec*, std::string>> unused;
  // A run of the workload on JPEG files: its loader's images per second per busy core, its
  // decoding threads, its file, and the share of the files its threads decoded (the fastest such
  // run per core).
  struct LoaderRun {
    double per_core = kNaN;
    double threads = kNaN;
    std::string path;
    double host_share = 1;
    // Takes the run at `path` where none is kept yet or it is faster per core.
    void offer(double per_core_, double threads_, const std::string& path_, double share) {
      if (per_core >= per_core_) return;  // NaN compares false: the first is taken
      per_core = per_core_;
      threads = threads_;
      path = path_;
      host_share = share;
    }
  };
  LoaderRun host_loader;    // the threads decoded every file (the CPU path)
  LoaderRun hybrid_loader;  // the GPU path, its threads decoding a share of the files
};

void say(GpuAdvice& a, const std::string& line) { a.reasons.push_back(line); }

// Model states per GPU before sharding: weights, and in training gradients and optimizer state.
void add_model_state_memory(const AdvisorRequest& request, Workload& w) {
  MemoryEstimate& base = w.memory;
  const double params = w.params;
  const bool half = is_16_bit(request.precision);
  if (w.train) {
    const double weight_bytes = 4 + (half ? 2 : 0);
    base.weights = params * weight_bytes;
    base.gradients = params * 4;
    const OptimizerKind optimizer = optimizer_for(request);
    const double opt = optimizer == OptimizerKind::kSgd ? 4 : 8;
    base.optimizer_state = params * opt;
    w.memory_reasons.push_back("weights: " + count_text(params) + " params x " +
                               format_fixed_or(weight_bytes, 0) + " B (fp32 master" +
                               (half ? " + 2 B autocast copy" : "") +
                               ") = " + format_gb(base.weights));
    w.memory_reasons.push_back("gradients: " + count_text(params) +
                               " x 4 B (fp32) = " + format_gb(base.gradients));
    w.memory_reasons.push_back("optimizer state (" + to_string(optimizer) +
                               "): " + count_text(params) + " x " + format_fixed_or(opt, 0) +
                               " B = " + format_gb(base.optimizer_state));
  } else {
    const double b = activation_bytes_per_element(request.precision);
    base.weights = params * b;
    w.memory_reasons.push_back("weights: " + count_text(params) + " params x " +
                               format_fixed_or(b, 0) + " B (" + to_string(request.precision) +
                               ") = " + format_gb(base.weights));
  }
}

// Activations: as given, else estimated for a counted model and a batch size, else left out.
void add_activation_memory(const AdvisorRequest& request, Workload& w) {
  MemoryEstimate& base = w.memory;
  const double act_b = activation_bytes_per_element(request.precision);
  if (!std::isnan(request.activation_bytes)) {
    base.activations = request.activation_bytes;
    w.memory_reasons.push_back("activations: " + format_gb(base.activations) + " as given");
  } else if (w.count && request.batch_size > 0) {
    const ModelCount& count = *w.count;
    const double bs = static_cast<double>(request.batch_size);
    base.activations = w.train ? 2 * count.activation_elements * act_b * bs
                               : 2 * count.largest_output_elements * act_b * bs;
    w.memory_reasons.push_back(
        std::string("activations (estimate, +-50%): ") +
        (w.train ? "2 saved tensors per layer output, " + count_text(count.activation_elements) +
                       " elements"
                 : "2 largest layer outputs live, " + count_text(count.largest_output_elements) +
                       " elements") +
        " x " + format_fixed_or(act_b, 0) + " B x batch " + std::to_string(request.batch_size) +
        " = " + format_gb(base.activations));
  } else {
    w.memory_reasons.emplace_back(
        "activations: not estimated (needs a counted model and a batch size, or an explicit "
        "activation size); fit judged on model states alone");
  }
}

// The memory planner's strategies for a training run on w.gpus GPUs, counted as the fit mode
// (advise_fit()) counts them (mixed precision as the ZeRO paper: 16-bit weights and gradients, fp32
// master weights and optimizer states), with this workload's activations; the planner's overheads
// are left at zero, as the advisor adds its own reserve per GPU.
void add_strategy_ladder(const AdvisorRequest& request, Workload& w) {
  MemoryPlanRequest r;
  r.model.parameters = w.params;
  r.precision = training_precision(request.precision);
  r.optimizer = plan_optimizer(optimizer_for(request));
  if (w.count) {  // ZeRO-3 gathers its largest layer whole
    double largest = 0;
    for (const auto& layer : w.count->layers) largest = std::max(largest, layer.parameters);
    if (largest > 0) r.model.largest_layer_parameters = largest;
  }
  if (!std::isnan(w.memory.activations)) {
    r.micro_batch = std::max<std::int64_t>(request.batch_size, 1);
    r.model.activation_bytes_per_sample = w.memory.activations / static_cast<double>(r.micro_batch);
    r.model.activation_source = "the activations above";
  }
  r.strategy.gpus = w.gpus;
  r.overheads.cuda_context_bytes = 0;
  r.overheads.workspace_bytes = 0;
  r.overheads.fragmentation_factor = 1;
  w.ladder = strategy_ladder(r);
  // Checkpointing and offload change the training itself: the fit mode weighs them.
  const auto changes_training = [](const StrategyPlan& p) {
    return p.strategy.activation_checkpointing || p.strategy.offload_optimizer;
  };
  w.ladder.erase(std::remove_if(w.ladder.begin(), w.ladder.end(), changes_training),
                 w.ladder.end());
}

// The run asked for, in the workload's unit: ImageNet-1k epochs of an image model, or tokens
// (per sample of sequence_length tokens when there is one).
void describe_run(const AdvisorRequest& request, Workload& w) {
  if (!std::isnan(request.epochs)) {
    w.run_samples = request.epochs * kImageNet1kTrainImages;
    w.run_text = format_number(request.epochs, 6) + " epochs x " +
                 count_text(kImageNet1kTrainImages) +
                 " ImageNet-1k images = " + count_text(w.run_samples) + " samples";
  } else if (!std::isnan(request.tokens)) {
    if (request.sequence_length > 0) {
      w.run_samples = request.tokens / static_cast<double>(request.sequence_length);
      const bool whole = w.run_samples == std::floor(w.run_samples);
      w.run_text = format_number(request.tokens, 6) + " tokens / " +
                   std::to_string(request.sequence_length) + " per sample = " +
                   (whole ? count_text(w.run_samples) : format_fixed_or(w.run_samples, 1)) +
                   " samples";
    } else {
      w.run_samples = request.tokens;
      w.run_text = format_number(request.tokens, 6) + " tokens";
    }
  }
}

Workload describe_workload(const AdvisorRequest& request) {
  Workload w;
  w.train = request.mode == WorkloadKind::kTrain;
  w.count = request.model.empty() ? std::nullopt : count_model(request.model);
  if (std::isnan(request.parameters) && !w.count) {
    throw ConfigError("advisor: model '" + request.model +
                      "' has no parameter count; give the parameter count instead");
  }
  w.params = !std::isnan(request.parameters) ? request.parameters : w.count->parameters;
  const bool per_token = !w.count && request.sequence_length == 0;
  w.flops_per_sample =
      w.count ? w.count->flops_for(to_string(request.mode))
              : (w.train ? 6 : 2) * w.params *
                    static_cast<double>(std::max<std::int64_t>(request.sequence_length, 1));
  w.unit = per_token ? "token" : "sample";
  w.gpus = request.gpu_count;
  add_model_state_memory(request, w);
  add_activation_memory(request, w);
  if (w.train && w.gpus > 1) add_strategy_ladder(request, w);
  describe_run(request, w);
  return w;
}

double median_throughput(const RunRecord& r) {
  return r.throughput.count > 0 ? r.throughput.median : r.overall_throughput;
}

// A single-process run of `dp`'s precision and model on the same GPU entry, the same per-GPU
// batch size preferred: what "one GPU" means for a data-parallel run without a baseline.
const LoadedRun* single_gpu_run(const LoadedRun& dp, const GpuSpec& spec, const SpecDatabase& db,
                                const std::vector<LoadedRun>& measured) {
  const LoadedRun* best = nullptr;
  for (const auto& run : measured) {
    const RunRecord& r = run.record;
    if (r.distributed.world_size > 1 || r.config.model != dp.record.config.model ||
        r.config.workload != dp.record.config.workload ||
        r.config.precision != dp.record.config.precision || !(median_throughput(r) > 0)) {
      continue;
    }
    const SpecMatch m = db.match_device(r.device.name, r.device.sm_count, r.device.memory_bytes);
    if (m.spec == nullptr || m.spec->id != spec.id) continue;
    const bool same_batch = r.config.batch_size == dp.record.config.batch_size;
    if (best == nullptr ||
        (same_batch && best->record.config.batch_size != dp.record.config.batch_size)) {
      best = &run;
    }
  }
  return best;
}

// A data-parallel run as a scaling reference; its per-GPU rate is rank 0's, slowed by waiting on
// the all-reduce, so it is not a per-GPU figure and the GPU is told why.
void add_scaling_reference(const LoadedRun& run, const GpuSpec& spec, const SpecDatabase& db,
                           const std::vector<LoadedRun>& measured, References& found) {
  const RunRecord& r = run.record;
  const DistributedSummary& d = r.distributed;
  ScalingReference s;
  s.spec = &spec;
  s.path = run.path;
  s.precision = r.config.precision;
  s.interconnect = d.interconnect.empty() ? "interconnect not recorded" : d.interconnect;
  s.world_size = d.world_size;
  s.global = d.global_throughput;
  if (std::isfinite(d.scaling_efficiency) && d.scaling_efficiency > 0) {
    s.efficiency = d.scaling_efficiency;
    s.baseline = d.baseline_throughput;
    s.baseline_what = "its recorded baseline";
  } else if (const LoadedRun* one = single_gpu_run(run, spec, db, measured)) {
    s.baseline = median_throughput(one->record);
    s.efficiency = d.global_throughput / (d.world_size * s.baseline);
    s.baseline_what = "the 1-GPU run " + one->path;
  }
  if (!(s.efficiency > 0)) s.efficiency = kNaN;
  found.scaling.push_back(s);
  found.unused.emplace_back(
      &spec, "measured " + run.path + " ran data-parallel on " + std::to_string(d.world_size) +
                 " GPUs: its per-GPU rate includes waiting on the all-reduce, so it serves the "
                 "scaling across GPUs, not the per-GPU figure");
}

// Measured training runs of the requested workload, on the GPU each ran on.
void add_run_references(const AdvisorRequest& request, const SpecDatabase& db,
                        const std::vector<LoadedRun>& measured, References& found) {
  for (const auto& run : measured) {
    const RunRecord& r = run.record;
    if (r.config.model != request.model || r.config.workload != to_string(request.mode) ||
        !same_precision_class(r.config.precision, request.precision)) {
      continue;
    }
    const auto per_core = r.metrics.find("loader_images_per_second_per_core");
    const auto threads = r.metrics.find("loader_threads");
    // A run whose files the GPU decoded (nvJPEG) says how fast its threads read files, not how
    // fast a core decodes: the host's cores do not bound it that way.
    const auto on_gpu = r.metrics.find("loader_decodes_on_gpu");
    const bool host_decoded = on_gpu == r.metrics.end() || !(on_gpu->second > 0);
    const bool measured_loader = per_core != r.metrics.end() && threads != r.metrics.end() &&
                                 per_core->second > 0 && threads->second > 0;
    // The GPU path with a host share: its threads decoded that share (their rate per core is
    // decoding), nvJPEG the rest.
    const auto share = r.metrics.find("loader_host_decode_share");
    if (host_decoded && measured_loader) {
      found.host_loader.offer(per_core->second, threads->second, run.path, 1);
    } else if (measured_loader && share != r.metrics.end() && share->second > 0) {
      found.hybrid_loader.offer(per_core->second, threads->second, run.path,
                                std::min(1.0, share->second));
    }
    const SpecMatch m = db.match_device(r.device.name, r.device.sm_count, r.device.memory_bytes);
    if (m.spec != nullptr && r.distributed.world_size > 1) {
      add_scaling_reference(run, *m.spec, db, measured, found);
      continue;
    }
    const double thr = r.throughput.count > 0 ? r.throughput.median : r.overall_throughput;
    if (m.spec != nullptr && thr > 0) {
      Reference ref{m.spec, thr,
                    "measured " + format_fixed_or(thr, 0) + " samples/s (" + run.path + ", " +
                        r.config.precision + ", bs " + std::to_string(r.config.batch_size) + ")",
                    true};
      ref.precision = r.config.precision;
      const TelemetrySummary& t = r.telemetry;
      if (t.energy_per_sample_joules > 0 && std::isfinite(t.energy_per_sample_joules)) {
        ref.joules_per_sample = t.energy_per_sample_joules;
        ref.energy_what = format_fixed_or(t.energy_per_sample_joules, 4) + " J per sample (" +
                          (t.energy_source.empty() ? "telemetry" : t.energy_source) +
                          " over the timed windows, " + run.path + ")";
      }
      found.refs.push_back(ref);
    }
  }
}

// Measured inference results of the requested workload; one that matches a GPU but cannot be
// used leaves a note for that GPU instead.
void add_inference_references(const AdvisorRequest& request, const SpecDatabase& db,
                              const std::vector<LoadedInference>& inference, bool train,
                              References& found) {
  for (const auto& file : inference) {
    const InferenceResult& r = file.result;
    if (train || r.model != request.model ||
        !same_precision_class(r.precision, request.precision)) {
      continue;
    }
    const DeviceFingerprint& d = r.fingerprint;
    const SpecMatch m = db.match_device(d.name, d.sm_count, d.memory_bytes);
    if (m.spec == nullptr) continue;
    std::string note;
    if (auto ref = inference_reference(file, m.spec, request, note)) {
      found.refs.push_back(*ref);
    } else {
      found.unused.emplace_back(m.spec, note);
    }
  }
}

// Published training figures of the requested model and precision class.
void add_published_references(const AdvisorRequest& request, const SpecDatabase& db,
                              const std::vector<PublishedResult>& published, bool train,
                              References& found) {
  for (const auto& p : published) {
    if (p.model != request.model || !train ||
        !same_precision_class(p.precision, request.precision)) {
      continue;
    }
    const GpuSpec* s = db.find_id(p.gpu_id);
    if (s == nullptr) continue;
    const bool mlperf = p.stack == PublishedStack::kMlperf;
    const std::string what = "published " + format_fixed_or(p.per_gpu(), 0) + " img/s per GPU, " +
                             (mlperf ? "MLPerf" : "PyTorch") + " (" + p.setup + "; " + p.source +
                             ")";
    // A figure in a precision its GPU has no path for cannot be of that GPU: it is neither
    // quoted there nor scaled to others.
    if (const std::string key = capability_key(p.precision, *s);
        !key.empty() && s->peak(key) == 0) {
      const std::string why = " not used: it is " + p.precision +
                              ", and the datasheet gives this GPU no " + key + " path";
      found.unused.emplace_back(s, what + why);
      continue;
    }
    Reference ref{s, p.per_gpu(), what, false};
    ref.precision = p.precision;
    ref.same_stack = !mlperf;
    found.refs.push_back(ref);
  }
}

// What a rung of the ladder shards, for its reason line.
std::string strategy_text(const StrategyPlan& rung, int n) {
  const std::string over = " sharded over " + std::to_string(n) + " GPUs";
  switch (rung.strategy.zero) {
    case ZeroStage::kNone:
      return "data parallel, a whole replica on each of " + std::to_string(n) + " GPUs";
    case ZeroStage::kStage1:
      return "ZeRO-1, optimizer states" + over;
    case ZeroStage::kStage2:
      return "ZeRO-2, optimizer states and gradients" + over;
    case ZeroStage::kStage3:
      return "ZeRO-3, optimizer states, gradients and weights" + over;
  }
  return rung.name;
}

// Training on more than one GPU: the planner's per-GPU total of each strategy, cheapest first,
// plus this GPU's reserve, until one fits; its bytes and name are the row's.
void judge_strategies(GpuAdvice& a, const GpuSpec& spec, const Workload& w) {
  say(a, "memory per GPU over " + std::to_string(w.gpus) +
             " GPUs: the memory planner's count (as the fit mode counts it: mixed precision as the "
             "ZeRO paper, 16-bit weights and gradients, fp32 master weights and optimizer "
             "states) plus the reserve, cheapest strategy first");
  const StrategyPlan* chosen = nullptr;
  for (const auto& rung : w.ladder) {
    std::string terms;
    for (const auto& term : rung.plan.terms) {
      if (term.bytes > 0) terms += term.name + " " + format_gb(term.bytes) + " + ";
    }
    a.memory_need_bytes = rung.plan.total_bytes + a.memory.reserve;
    a.memory_strategy = rung.name;
    const bool fits = a.memory_need_bytes <= spec.memory_bytes;
    say(a, strategy_text(rung, w.gpus) + ": " + terms + "reserve " + format_gb(a.memory.reserve) +
               " = " + format_gb(a.memory_need_bytes) + " per GPU of " +
               format_gb(spec.memory_bytes) + ": " + (fits ? "fits" : "does not fit"));
    chosen = &rung;
    if (fits) break;
  }
  const bool fits = a.memory_need_bytes <= spec.memory_bytes;
  a.fits = fits && chosen->strategy.zero == ZeroStage::kNone;
  a.fits_sharded = fits && !a.fits;
  if (!fits) {
    say(a,
        "no sharding fits; activation checkpointing or optimizer offload may (the fit mode "
        "weighs them)");
  } else if (chosen->strategy.zero == ZeroStage::kStage3) {
    a.fast_link_needed = true;
    say(a,
        "needs ZeRO-3: it all-gathers the weights in forward and backward (1.5x data "
        "parallel's traffic), and needs a fast link");
  } else if (a.fits_sharded) {
    say(a, "needs " + chosen->name +
               ": its reduce-scatter and all-gather move no more than data parallel's all-reduce");
  }
  if (chosen->strategy.zero == ZeroStage::kStage3 &&
      !(chosen->plan.term("ZeRO-3 gathered layers").bytes > 0)) {
    say(a,
        "ZeRO-3's gathered layers are not counted: a parameter count says nothing of the "
        "largest layer");
  }
}

// Whether everything fits on each GPU, or only when sharded over all of them: on one GPU (and in
// inference) the advisor's own count, in training on more the memory planner's strategies.
void judge_memory(GpuAdvice& a, const GpuSpec& spec, const Workload& w) {
  a.memory = w.memory;
  for (const auto& line : w.memory_reasons) say(a, line);
  a.memory.reserve = kContextReserveBytes + kFragmentationShare * spec.memory_bytes;
  say(a, "reserve: 1 GB CUDA context and workspaces + 5% of " + format_gb(spec.memory_bytes) +
             " for allocator slack = " + format_gb(a.memory.reserve));
  if (!w.ladder.empty()) {
    judge_strategies(a, spec, w);
    return;
  }
  const double need = a.memory.total();
  const int n = w.gpus;
  a.fits = need <= spec.memory_bytes;
  a.memory_need_bytes = need;
  a.memory_strategy = n > 1 ? "data parallel" : "one GPU";
  say(a, "needs " + format_gb(need) + " per GPU of " + format_gb(spec.memory_bytes) + ": " +
             (a.fits ? "fits" : "does not fit"));
  if (!a.fits && n > 1) {
    // Inference: the weights split over the GPUs (tensor parallel), the rest on each.
    const double sharded = a.memory.weights / n + (need - a.memory.weights);
    a.fits_sharded = sharded <= spec.memory_bytes;
    a.memory_need_bytes = sharded;
    a.memory_strategy = "weights sharded";
    say(a, "weights sharded over " + std::to_string(n) +
               " GPUs (tensor parallel): " + format_gb(sharded) + " per GPU: " +
               (a.fits_sharded ? "fits, and needs a fast link" : "does not fit either"));
    if (a.fits_sharded) a.fast_link_needed = true;
  }
}

// The best measured (or published, of gpuperf's stack or not) reference on `spec`, or null.
const Reference* best_reference_on(const GpuSpec& spec, const std::vector<Reference>& refs,
                                   bool want_measured, NumericFormat precision,
                                   bool want_same_stack = true) {
  const Reference* best = nullptr;
  for (const auto& r : refs) {
    if (r.spec->id == spec.id && r.measured == want_measured && r.same_stack == want_same_stack &&
        better_reference(r, best, precision)) {
      best = &r;
    }
  }
  return best;
}

// A figure of the other 2-byte type (fp16 for bf16 or the reverse) stands in, and says so.
void say_if_carried_over(GpuAdvice& a, const Reference& r, NumericFormat wanted) {
  const std::string precision = to_string(wanted);
  if (!r.precision.empty() && r.precision != precision) {
    say(a, "precision: " + r.precision + " figure used for a " + precision +
               " request (the same tensor-core rate class on current GPUs; not measured in " +
               precision + ")");
  }
}

// Nothing measured or published on this GPU: the closest reference (measured preferred) scaled
// by the ratio of datasheet peaks, else a fraction of the peak over the FLOPs per sample.
double estimate_throughput(GpuAdvice& a, const AdvisorRequest& request, const Workload& w,
                           const std::vector<Reference>& refs, const std::string& key,
                           double peak) {
  const std::string precision = to_string(request.precision);
  const Reference* ref = nullptr;
  std::string other_stack;  // GPUs with an MLPerf figure only, for the reason line
  for (const auto& r : refs) {
    const double rp = r.spec->peak(peak_key_for_precision(precision, r.spec));
    if (!(rp > 0 && r.per_gpu > 0)) continue;
    if (!r.same_stack) {  // never scaled: another stack's tuning would carry over to every GPU
      if (other_stack.find(r.spec->name) == std::string::npos) {
        other_stack += (other_stack.empty() ? "" : ", ") + r.spec->name;
      }
      continue;
    }
    // Measured before published; among measured ones the exact precision, then the best
    // setting (e.g. a CUDA-graph run over an eager one), as the measured GPU itself quotes.
    if (!ref || (r.measured && !ref->measured) ||
        (r.measured == ref->measured && better_reference(r, ref, request.precision))) {
      ref = &r;
    }
  }
  a.throughput_basis = ThroughputBasis::kEstimate;
  if (ref != nullptr) {
    const double rp = ref->spec->peak(peak_key_for_precision(precision, ref->spec));
    const double per_gpu = ref->per_gpu * peak / rp;
    say(a, "throughput: estimate, " + ref->spec->name + " " + ref->what + " x datasheet " + key +
               " peak ratio " + format_fixed_or(peak / 1e12, 1) + "/" +
               format_fixed_or(rp / 1e12, 1) + " TFLOPS = " + format_fixed_or(per_gpu, 0) + " " +
               w.unit + "s/s (memory-bound layers scale less)");
    say_if_carried_over(a, *ref, request.precision);
    return per_gpu;
  }
  if (!other_stack.empty()) {
    const std::string mlperf = "the MLPerf figures (" + other_stack + ")";
    say(a, "throughput: no measured or PyTorch published figure of this workload to scale from; " +
               mlperf + " are another stack, never scaled to other GPUs");
  }
  const double per_gpu = peak * request.assumed_utilization / w.flops_per_sample;
  say(a, "throughput: estimate, " + format_fixed_or(request.assumed_utilization * 100, 0) +
             "% of datasheet " + key + " peak " + format_fixed_or(peak / 1e12, 1) + " TFLOPS / " +
             format_number(w.flops_per_sample, 6) + " FLOP per " + w.unit + " = " +
             format_fixed_or(per_gpu, 0) + " " + w.unit + "s/s");
  return per_gpu;
}

// Throughput per GPU: measured, else published, else estimated from the datasheet; NaN when
// there is no basis for a figure.
double throughput_per_gpu(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                          const Workload& w, const References& found) {
  for (const auto& [unused_spec, note] : found.unused) {
    if (unused_spec->id == spec.id) say(a, "throughput: " + note);
  }
  const std::string precision = to_string(request.precision);
  const std::string key = peak_key_for_precision(precision, &spec);
  const double peak = key.empty() ? kNaN : spec.peak(key);
  const Reference* r = best_reference_on(spec, found.refs, true, request.precision);
  if (r != nullptr && !r->precision.empty() && r->precision != precision && !(peak > 0)) {
    say(a, "throughput: " + r->what + " not used: the datasheet gives this GPU no " +
               (key.empty() ? precision : key) + " rate, so it cannot run a " + precision +
               " request");
    r = nullptr;
  }
  if (r != nullptr) {
    a.throughput_basis = ThroughputBasis::kMeasured;
    a.measured_batch_size = r->batch_size;
    a.latency_p50 = r->p50;
    a.latency_p99 = r->p99;
    if (!std::isnan(request.latency_budget_seconds)) {
      a.latency_status =
          r->per_gpu > 0 ? LatencyStatus::kMeetsBudget : LatencyStatus::kMissesBudget;
    }
    say(a, "throughput: " + r->what);
    say_if_carried_over(a, *r, request.precision);
    return r->per_gpu > 0 ? r->per_gpu : kNaN;
  }
  // Published figures: PyTorch per GPU (gpuperf's stack) first; an MLPerf figure only where no
  // PyTorch one exists, in a tier of its own. One of the other 2-byte type stands in only where
  // the GPU has the requested one: an fp16 (AMP) figure says nothing of bf16 on a V100.
  const Reference* same = best_reference_on(spec, found.refs, false, request.precision, true);
  const Reference* other = best_reference_on(spec, found.refs, false, request.precision, false);
  for (const Reference* p : {same, other}) {
    if (p == nullptr) continue;
    if (!(peak > 0)) {
      say(a, "throughput: " + p->what + " not used: the datasheet gives this GPU no " +
                 (key.empty() ? precision : key) + " rate, so it cannot run a " + precision +
                 " request");
      continue;
    }
    if (p == same) {
      a.throughput_basis = ThroughputBasis::kPublished;
      say(a, "throughput: " + p->what + " (gpuperf's stack, another setup: treat as indicative)");
      if (other != nullptr) {
        say(a, "throughput: " + other->what +
                   " not used: MLPerf is another stack (its own framework, optimizer and tuning), "
                   "never ranked against PyTorch figures");
      }
    } else {
      a.throughput_basis = ThroughputBasis::kMlperf;
      say(a, "throughput: " + p->what +
                 " (MLPerf: another stack and heavily tuned; ranked in its own tier, never against "
                 "PyTorch figures, and never scaled to other GPUs)");
    }
    say_if_carried_over(a, *p, request.precision);
    return p->per_gpu;
  }
  if (!(peak > 0)) {
    say(a, "throughput: datasheet has " + std::string(peak == 0 ? "no" : "no confirmed") + " " +
               (key.empty() ? precision : key) + " peak, so no estimate");
    return kNaN;
  }
  if (!w.train && (request.batch_size == 1 || !std::isnan(request.latency_budget_seconds))) {
    // One sample per call is bound by launches and memory, not by the tensor cores: FLOPs over a
    // peak gave the H200 about 11x the batch-1 rate it measures, so nothing is estimated; nor
    // under a latency budget, which only a measured latency can meet.
    say(a, std::string("throughput: not measured on this GPU, and ") +
               (request.batch_size == 1 ? "batch-1 inference is launch-bound"
                                        : "a latency budget needs a measured latency") +
               ": a datasheet cannot give batch-1 latency, so no estimate");
    return kNaN;
  }
  return estimate_throughput(a, request, w, found.refs, key, peak);
}

// A latency budget with nothing measured on this GPU is said to be unchecked.
void judge_latency(GpuAdvice& a, const AdvisorRequest& request) {
  if (!std::isnan(request.latency_budget_seconds) && a.latency_status == LatencyStatus::kNoBudget) {
    a.latency_status = LatencyStatus::kNotMeasured;
    say(a,
        "latency: not measured on this GPU; a datasheet cannot give per-call latency (batch-1 "
        "calls are launch-bound), so the p99 budget of " +
            format_ms(request.latency_budget_seconds) + " is not checked");
  }
}

// The datasheet link model of n > 1 GPUs: a data-parallel step all-reduces fp32 gradients (ring:
// 2(n-1)/n of them per GPU) while backward runs, so a step takes the longer of the two.
double link_model_total(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                        const Workload& w, double per_gpu) {
  const int n = w.gpus;
  double total = per_gpu * n;
  const bool has_link = spec.link_bytes_per_s > 0;
  const double bw = has_link ? spec.link_bytes_per_s / 2 : spec.pcie_bytes_per_s_per_direction();
  const std::string via =
      has_link ? spec.link_name + " " + format_fixed_or(bw / 1e9, 0) + " GB/s per direction"
               : "PCIe " + spec.pcie + " x16 " + format_fixed_or(bw / 1e9, 0) +
                     " GB/s per direction (no GPU link)";
  if (w.train && bw > 0) {
    const double comm = 2.0 * (n - 1) / n * w.params * 4 / bw;
    say(a, "all-reduce of " + format_gb(w.params * 4) + " gradients per step over " + via + ": " +
               format_fixed_or(comm * 1e3, 1) + " ms");
    if (request.batch_size > 0 && per_gpu > 0) {
      const double compute = static_cast<double>(request.batch_size) / per_gpu;
      say(a, "compute per step: batch " + std::to_string(request.batch_size) + " / " +
                 format_fixed_or(per_gpu, 0) + " = " + format_fixed_or(compute * 1e3, 1) +
                 " ms; the all-reduce overlaps backward, so a step takes the longer of the two");
      if (comm > 0.5 * compute) a.fast_link_needed = true;
      total = n * static_cast<double>(request.batch_size) / std::max(compute, comm);
    } else {
      say(a, "no batch size: linear scaling assumed, overlap with compute not checked");
      if (w.params >= 1e9) a.fast_link_needed = true;
    }
  } else if (!w.train) {
    say(a, "inference: replicas run independently; throughput scales with the GPU count");
  }
  if (a.fast_link_needed) {
    say(a, has_link ? "fast link needed: this GPU has " + spec.link_name
                    : "fast link needed but this GPU has none: expect poor scaling");
  }
  return total;
}

// Whether `a` is a better scaling reference than `b` (null) for `n` GPUs: a known efficiency,
// then the requested precision itself, then the GPU count closest to n (the larger on a tie).
bool better_scaling(const ScalingReference& a, const ScalingReference* b, NumericFormat wanted,
                    int n) {
  if (b == nullptr) return true;
  const std::string precision = to_string(wanted);
  const bool a_known = !std::isnan(a.efficiency);
  const bool b_known = !std::isnan(b->efficiency);
  if (a_known != b_known) return a_known;
  const bool a_exact = a.precision == precision;
  const bool b_exact = b->precision == precision;
  if (a_exact != b_exact) return a_exact;
  const int da = std::abs(a.world_size - n);
  const int db = std::abs(b->world_size - n);
  return da < db || (da == db && a.world_size > b->world_size);
}

// The measured scaling on this GPU, said before the link model; null when there is none. One
// without an efficiency is said to be unusable.
const ScalingReference* measured_scaling(GpuAdvice& a, const GpuSpec& spec,
                                         const AdvisorRequest& request, const References& found,
                                         int n) {
  const ScalingReference* best = nullptr;
  for (const auto& s : found.scaling) {
    if (s.spec->id == spec.id && better_scaling(s, best, request.precision, n)) best = &s;
  }
  if (best == nullptr) return nullptr;
  if (std::isnan(best->efficiency)) {
    say(a, "measured scaling: not known from " + best->path + " (" +
               std::to_string(best->world_size) + " GPUs, " + best->interconnect +
               "): no recorded baseline and no single-process run of it on this GPU; the link "
               "model is used");
    return nullptr;
  }
  say(a, "measured scaling: " + format_fixed_or(best->efficiency * 100, 1) + "% on " +
             std::to_string(best->world_size) + " GPUs (" + best->interconnect + ", " + best->path +
             ") = " + format_fixed_or(best->global, 0) + " global samples/s / (" +
             std::to_string(best->world_size) + " x " + format_fixed_or(best->baseline, 0) + ", " +
             best->baseline_what + ")" +
             (best->precision != to_string(request.precision)
                  ? "; a " + best->precision + " run used for a " + to_string(request.precision) +
                        " request"
                  : ""));
  return best;
}

// Throughput of all GPUs together: per GPU x n x the scaling measured on this GPU where a
// data-parallel run of the workload was given (the link model then only for comparison), else
// the datasheet link model.
double scale_to_all_gpus(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                         const Workload& w, const References& found, double per_gpu) {
  const int n = w.gpus;
  if (n <= 1) return per_gpu * n;
  const ScalingReference* m =
      w.train && !found.scaling.empty() ? measured_scaling(a, spec, request, found, n) : nullptr;
  const double linked = link_model_total(a, spec, request, w, per_gpu);
  if (m == nullptr || !(per_gpu > 0)) return linked;
  const double total = per_gpu * n * m->efficiency;
  say(a, "the link model predicts " + format_fixed_or(linked / (per_gpu * n) * 100, 1) + "% (" +
             format_fixed_or(linked, 0) + " " + w.unit +
             "s/s); the measured scaling is used instead");
  say(a, "all GPUs: " + std::to_string(n) + " x " + format_fixed_or(per_gpu, 0) + " x " +
             format_fixed_or(m->efficiency * 100, 1) + "% = " + format_fixed_or(total, 0) + " " +
             w.unit + "s/s" +
             (n == m->world_size
                  ? std::string()
                  : ", extrapolated from " + std::to_string(m->world_size) + " to " +
                        std::to_string(n) + " GPUs at the same efficiency (not measured on " +
                        std::to_string(n) + ")"));
  return total;
}

// The price per GPU-hour of `spec`: its own, else the one for all GPUs, else the default table's,
// else its purchase price written off over 3 years plus its energy; said on one line with where
// it came from.
void choose_price(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                  const Workload& w) {
  if (const auto own = w.price_by_id.find(spec.id); own != w.price_by_id.end()) {
    a.price_per_hour_usd = own->second;
    a.price_source = PriceSource::kGivenForGpu;
    say(a, "cost basis: " + format_fixed_or(a.price_per_hour_usd, 2) +
               " USD per GPU-hour, given for this GPU (rental)");
  } else if (request.price_per_hour_usd >= 0) {
    a.price_per_hour_usd = request.price_per_hour_usd;
    a.price_source = PriceSource::kGivenForAll;
    say(a, "cost basis: " + format_fixed_or(a.price_per_hour_usd, 2) +
               " USD per GPU-hour, given for " +
               (w.price_by_id.empty() ? "every GPU" : "every GPU without its own price") +
               " (rental)");
  } else if (const auto table = w.table_by_id.find(spec.id); table != w.table_by_id.end()) {
    const RentalPrice& p = *table->second;
    a.price_per_hour_usd = p.usd_per_gpu_hour;
    a.price_source = PriceSource::kDefaultTable;
    a.table_price = p;
    say(a, "cost basis: " + format_fixed_or(a.price_per_hour_usd, 2) +
               " USD per GPU-hour, on-demand at " + p.provider + ", " + p.date + " (" + p.source +
               (p.note.empty() ? "" : "; " + p.note) +
               "); prices vary by provider and term: give this GPU's own in "
               "AdvisorRequest::price_per_hour_by_gpu");
  } else if (spec.price_usd >= 0) {
    a.price_per_hour_usd = spec.price_usd / (kAmortizationYears * kHoursPerYear) +
                           spec.tdp_watts / 1000 * kElectricityUsdPerKwh;
    a.price_source = PriceSource::kPurchase;
    say(a, "cost basis: price " + format_fixed_or(spec.price_usd, 0) + " USD" +
               (spec.is_approximate("price_usd") ? " (upper end of a third-party range)" : "") +
               " over 3 years of 24/7 use + TDP energy at 0.15 USD/kWh = " +
               format_fixed_or(a.price_per_hour_usd, 3) +
               " USD/h per GPU (host and cooling not included)");
  } else {
    say(a, "cost: no price in the datasheet; give a price per hour");
  }
}

std::string price_source_text(const GpuAdvice& a) {
  switch (a.price_source) {
    case PriceSource::kGivenForGpu:
      return "given for this GPU";
    case PriceSource::kGivenForAll:
      return "given for all GPUs";
    case PriceSource::kDefaultTable:
      return "on-demand at " + a.table_price->provider + ", " + a.table_price->date;
    case PriceSource::kPurchase:
      return "purchase price over 3 years + energy";
    case PriceSource::kNone:
      break;
  }
  return "no price";
}

// The requested run on all GPUs: its hours at their throughput and its cost at the GPU's price.
void judge_run(GpuAdvice& a, const Workload& w) {
  if (std::isnan(w.run_samples)) return;
  const double total = a.samples_per_second;
  const int n = w.gpus;
  a.run_hours = w.run_samples / total / 3600;
  say(a, "run: " + w.run_text + " / " + format_fixed_or(total, 0) + " " + w.unit + "s/s (" +
             std::to_string(n) + " GPU(s) together) / 3600 = " + format_fixed_or(a.run_hours, 2) +
             " h");
  if (std::isnan(a.price_per_hour_usd)) {
    say(a, "run cost: no price known");
    return;
  }
  a.run_cost_usd = a.run_hours * n * a.price_per_hour_usd;
  say(a, "run cost: " + format_fixed_or(a.run_hours, 2) + " h x " + std::to_string(n) +
             " GPU(s) x " + format_fixed_or(a.price_per_hour_usd, 3) + " USD per GPU-hour (" +
             price_source_text(a) + ") = " + format_fixed_or(a.run_cost_usd, 2) + " USD");
}

// Energy per unit of work: a measured run's own (its telemetry) where the throughput is measured,
// at the power it drew per GPU over all GPUs' throughput; else an estimate at the datasheet TDP,
// which a busy GPU's draw can exceed or fall short of, so it bounds nothing.
void judge_energy(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                  const Workload& w, const References& found) {
  const double total = a.samples_per_second;
  const int n = w.gpus;
  const Reference* r = a.throughput_basis == ThroughputBasis::kMeasured
                           ? best_reference_on(spec, found.refs, true, request.precision)
                           : nullptr;
  if (r != nullptr && r->joules_per_sample > 0) {
    a.energy_basis = EnergyBasis::kMeasured;
    const double watts = r->joules_per_sample * r->per_gpu;
    a.joules_per_sample = watts * n / total;
    if (n == 1 && total == r->per_gpu) {
      say(a, "energy: measured, " + r->energy_what);
    } else {
      say(a, "energy: measured, " + r->energy_what + " x " + format_fixed_or(r->per_gpu, 0) + " " +
                 w.unit + "s/s = " + format_fixed_or(watts, 0) + " W per GPU; x " +
                 std::to_string(n) + " / " + format_fixed_or(total, 0) + " " + w.unit +
                 "s/s = " + format_fixed_or(a.joules_per_sample, 4) + " J per " + w.unit);
    }
    return;
  }
  if (spec.tdp_watts > 0) {
    a.energy_basis = EnergyBasis::kTdpEstimate;
    a.joules_per_sample = spec.tdp_watts * n / total;
    say(a, "energy: estimate, " + format_fixed_or(spec.tdp_watts, 0) + " W TDP x " +
               std::to_string(n) + " / " + format_fixed_or(total, 0) + " " + w.unit +
               "s/s = " + format_fixed_or(a.joules_per_sample, 4) + " J per " + w.unit +
               " (not measured: a GPU's real draw can be below or above its TDP)");
  }
}

// Cost and energy per unit of work, and the run's time and cost, for a GPU with a throughput.
void judge_running_cost(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                        const Workload& w, const References& found) {
  const double total = a.samples_per_second;
  if (!(total > 0)) return;
  const int n = w.gpus;
  choose_price(a, spec, request, w);
  if (a.price_per_hour_usd >= 0)
    a.cost_usd_per_million = a.price_per_hour_usd * n / 3600 / total * 1e6;
  judge_run(a, w);
  judge_energy(a, spec, request, w, found);
}

// Whether the budget is checked against the run's cost: a run at a rental price, given or the
// default table's.
bool budget_is_run_cost(const GpuAdvice& a, const Workload& w) {
  return !std::isnan(w.run_samples) && (a.price_source == PriceSource::kGivenForGpu ||
                                        a.price_source == PriceSource::kGivenForAll ||
                                        a.price_source == PriceSource::kDefaultTable);
}

// The purchase price of all GPUs, or a rented run's cost, against the budget when there is one.
void judge_budget(GpuAdvice& a, const GpuSpec& spec, const AdvisorRequest& request,
                  const Workload& w) {
  const int n = w.gpus;
  if (spec.price_usd >= 0) a.total_price_usd = spec.price_usd * n;
  if (std::isnan(request.budget_usd)) return;
  if (budget_is_run_cost(a, w)) {
    a.over_budget = a.run_cost_usd > request.budget_usd;
    say(a, "budget: the rented run costs " + format_fixed_or(a.run_cost_usd, 2) + " USD, " +
               (a.over_budget ? "exceeds " : "within ") + format_fixed_or(request.budget_usd, 0) +
               " USD");
    return;
  }
  if (std::isnan(a.total_price_usd)) {
    say(a, "budget: no purchase price known, budget not checked");
    return;
  }
  a.over_budget = a.total_price_usd > request.budget_usd;
  say(a, "budget: " + std::to_string(n) + " x " + format_fixed_or(spec.price_usd, 0) + " = " +
             format_fixed_or(a.total_price_usd, 0) + " USD purchase " +
             (a.over_budget ? "exceeds " : "within ") + format_fixed_or(request.budget_usd, 0) +
             " USD");
}

// Training on files: the host's decoding rate caps the GPUs' (cores per GPU x a measured run's
// rate per core x GPUs).
void judge_input(GpuAdvice& a, const AdvisorRequest& request, const Workload& w,
                 const References& found) {
  if (!w.train || !(a.samples_per_second > 0)) return;
  // A run where the threads decoded every file caps the rate; one where nvJPEG took the rest of
  // each batch only says whether the cores cover the threads' share (what nvJPEG taking more
  // would cost is not measured).
  const bool capped = found.host_loader.per_core > 0;
  const References::LoaderRun& run = capped ? found.host_loader : found.hybrid_loader;
  if (!(run.per_core > 0)) return;
  const bool given = !std::isnan(request.host_cores_per_gpu);
  const double cores = given ? request.host_cores_per_gpu : run.threads;
  const double host = cores * run.per_core * w.gpus;
  const std::string basis = format_fixed_or(cores, 0) + " CPU cores per GPU" +
                            (given ? "" : " (the measured run's threads)") + " x " +
                            format_fixed_or(run.per_core, 0) + " img/s per core (" + run.path +
                            ") x " + std::to_string(w.gpus) +
                            " GPU(s) = " + format_fixed_or(host, 0) + " img/s";
  if (capped) {
    if (a.samples_per_second > host) {
      say(a, "input-bound: JPEG decoding on the host delivers " + basis + ", below the GPUs' " +
                 format_fixed_or(a.samples_per_second, 0) + " samples/s; the rate is capped there");
      a.samples_per_second = host;
    } else {
      say(a, "the input keeps up: " + basis);
    }
    return;
  }
  const double needed = run.host_share * a.samples_per_second;
  const std::string share = format_fixed_or(100 * run.host_share, 0) + "%";
  if (host < needed) {
    say(a, "the host decodes " + basis + ", below the " + format_fixed_or(needed, 0) +
               " img/s that run's host share (" + share +
               " of the files) needs at this rate: nvJPEG would take more of each batch, at a "
               "cost not measured here (the rate is not capped)");
  } else {
    say(a, "the input keeps up: " + basis + " decode the run's host share (" + share +
               " of the files)");
  }
}

// One GPU's advice; the reasons come in the order the figures are decided.
GpuAdvice advise_gpu(const GpuSpec& spec, const AdvisorRequest& request, const Workload& w,
                     const References& found) {
  GpuAdvice a;
  a.spec = &spec;
  judge_memory(a, spec, w);
  const double per_gpu = throughput_per_gpu(a, spec, request, w, found);
  judge_latency(a, request);
  a.samples_per_second = scale_to_all_gpus(a, spec, request, w, found, per_gpu);
  judge_input(a, request, w, found);
  judge_running_cost(a, spec, request, w, found);
  judge_budget(a, spec, request, w);
  return a;
}

// Measured, published, estimated, unusable; within a tier: within budget and with a known
// price first; then a measured latency within budget before an unchecked one; then the faster.
void rank(std::vector<GpuAdvice>& advice, const AdvisorRequest& request, const Workload& w) {
  auto category = [&](const GpuAdvice& a) {
    if (!a.fits && !a.fits_sharded) return 4;
    if (!(a.samples_per_second > 0) || a.latency_status == LatencyStatus::kMissesBudget) {
      return 3;
    }
    if (a.over_budget) return 2;
    const double checked = budget_is_run_cost(a, w) ? a.run_cost_usd : a.total_price_usd;
    if (!std::isnan(request.budget_usd) && std::isnan(checked)) return 1;
    return 0;
  };
  std::stable_sort(advice.begin(), advice.end(), [&](const GpuAdvice& x, const GpuAdvice& y) {
    const EvidenceTier ex = evidence_tier(x);
    const EvidenceTier ey = evidence_tier(y);
    if (ex != ey) return ex < ey;
    const int cx = category(x);
    const int cy = category(y);
    if (cx != cy) return cx < cy;
    // A measured latency within budget beats an unchecked one.
    const bool mx = x.latency_status == LatencyStatus::kMeetsBudget;
    const bool my = y.latency_status == LatencyStatus::kMeetsBudget;
    if (mx != my) return mx;
    const double tx = x.samples_per_second > 0 ? x.samples_per_second : -1;
    const double ty = y.samples_per_second > 0 ? y.samples_per_second : -1;
    return tx > ty;
  });
}

// The run's length: epochs of an image model or tokens of a parameter-count model, in training.
void validate_run(const AdvisorRequest& r) {
  auto bad = [](const std::string& field, double value, const std::string& why) {
    throw ConfigError("AdvisorRequest::" + field, "'" + format_number(value, 6) + "' " + why);
  };
  const bool by_epochs = !std::isnan(r.epochs);
  const bool by_tokens = !std::isnan(r.tokens);
  if (by_epochs && by_tokens) {
    bad("epochs", r.epochs,
        "and {tokens} '" + format_number(r.tokens, 6) + "' both give the run: give one");
  }
  for (const auto& [field, value] :
       {std::pair{"epochs", r.epochs}, std::pair{"tokens", r.tokens}}) {
    if (std::isnan(value)) continue;
    if (r.mode != WorkloadKind::kTrain) {
      bad(field, value, "applies to training only (mode is '" + to_string(r.mode) + "')");
    }
    if (!(value > 0 && std::isfinite(value))) bad(field, value, "must be a number > 0");
  }
  const bool counted = !r.model.empty() && count_model(r.model).has_value();
  if (by_epochs && !counted) {
    bad("epochs", r.epochs,
        "applies to an image model (an ImageNet-1k epoch): give {tokens} for a parameter count");
  }
  if (by_tokens && counted) {
    bad("tokens", r.tokens,
        "applies to a parameter-count model: give {epochs} for image model '" + r.model + "'");
  }
}

// The per-GPU prices by datasheet id; ConfigError for a name that is no entry, or a second name
// of an entry already priced.
std::map<std::string, double> prices_by_id(const AdvisorRequest& request, const SpecDatabase& db) {
  const std::string field = "AdvisorRequest::price_per_hour_by_gpu";
  std::map<std::string, double> by_id;
  std::map<std::string, std::string> named_as;
  for (const auto& [name, usd] : request.price_per_hour_by_gpu) {
    const std::string quoted = "'" + name + "=" + format_number(usd, 6) + "'";
    const GpuSpec* spec = nullptr;
    try {
      spec = &db.resolve(name, field);
    } catch (const ConfigError& e) {
      throw ConfigError(field, quoted + ": " + e.problem());
    }
    if (const auto [it, added] = named_as.emplace(spec->id, name); !added) {
      throw ConfigError(
          field, quoted + ": prices " + spec->id + " a second time (also as '" + it->second + "')");
    }
    by_id[spec->id] = usd;
  }
  return by_id;
}

// The default table by datasheet id; ConfigError for an entry that names no GPU of `db`, a GPU
// priced twice or a price that is not finite and > 0 (a file read by load_rental_prices() has
// none of these; a table built by hand may).
std::map<std::string, const RentalPrice*> table_by_id(const std::vector<RentalPrice>& prices,
                                                      const SpecDatabase& db) {
  const std::string field = "default_prices";
  std::map<std::string, const RentalPrice*> by_id;
  for (const RentalPrice& p : prices) {
    const std::string quoted = "'" + p.gpu_id + "=" + format_number(p.usd_per_gpu_hour, 6) + "'";
    if (db.find_id(p.gpu_id) == nullptr) {
      throw ConfigError(field, quoted + ": '" + p.gpu_id + "' is not a datasheet id");
    }
    if (!(p.usd_per_gpu_hour > 0 && std::isfinite(p.usd_per_gpu_hour))) {
      throw ConfigError(field, quoted + " must be a finite price > 0 USD per GPU-hour");
    }
    if (!by_id.emplace(p.gpu_id, &p).second) {
      throw ConfigError(field, quoted + ": prices " + p.gpu_id + " a second time");
    }
  }
  return by_id;
}

}  // namespace

std::string to_string(ThroughputBasis value) {
  switch (value) {
    case ThroughputBasis::kMeasured:
      return "measured";
    case ThroughputBasis::kPublished:
      return "published";
    case ThroughputBasis::kMlperf:
      return "MLPerf";
    case ThroughputBasis::kEstimate:
      return "estimate";
    case ThroughputBasis::kNone:
      break;
  }
  return "";
}

std::string to_string(EnergyBasis value) {
  switch (value) {
    case EnergyBasis::kMeasured:
      return "measured";
    case EnergyBasis::kTdpEstimate:
      return "estimate: TDP";
    case EnergyBasis::kNone:
      break;
  }
  return "";
}

std::string to_string(LatencyStatus value) {
  switch (value) {
    case LatencyStatus::kMeetsBudget:
      return "meets budget";
    case LatencyStatus::kMissesBudget:
      return "misses budget";
    case LatencyStatus::kNotMeasured:
      return "not measured";
    case LatencyStatus::kNoBudget:
      break;
  }
  return "";
}

EvidenceTier evidence_tier(const GpuAdvice& a) {
  if ((!a.fits && !a.fits_sharded) || !(a.samples_per_second > 0) ||
      a.latency_status == LatencyStatus::kMissesBudget) {
    return EvidenceTier::kUnusable;
  }
  switch (a.throughput_basis) {
    case ThroughputBasis::kMeasured:
      return EvidenceTier::kMeasured;
    case ThroughputBasis::kPublished:
      return EvidenceTier::kPublished;
    case ThroughputBasis::kMlperf:
      return EvidenceTier::kMlperf;
    case ThroughputBasis::kNone:  // no throughput: unusable above
    case ThroughputBasis::kEstimate:
      break;
  }
  return EvidenceTier::kEstimate;
}

double MemoryEstimate::total() const {
  return weights + gradients + optimizer_state + (std::isnan(activations) ? 0 : activations) +
         reserve;
}

void AdvisorRequest::validate() const {
  auto bad = [](const std::string& field, const std::string& value, const std::string& why) {
    throw ConfigError("AdvisorRequest::" + field, "'" + value + "' " + why);
  };
  if (mode == WorkloadKind::kTrain && is_8_bit(precision)) {
    bad("precision", to_string(precision),
        "is not one of fp32, tf32, fp16, bf16 (int8 and fp8 for inference only)");
  }
  if (!std::isnan(parameters) && !(parameters > 0 && std::isfinite(parameters))) {
    bad("parameters", format_number(parameters, 6), "must be a positive number");
  }
  if (model.empty() && std::isnan(parameters)) {
    throw ConfigError("advisor: give a model name or a parameter count (both are empty)");
  }
  if (!model.empty() && !count_model(model) && std::isnan(parameters)) {
    bad("model", model, "has no built-in count (known: simple, resnet50): give a parameter count");
  }
  // A counted model and another parameter count: the estimate would take its memory from one
  // and its FLOPs from the other (and its heading named only the model).
  if (const auto count = model.empty() ? std::nullopt : count_model(model);
      count && !std::isnan(parameters) &&
      std::abs(parameters - count->parameters) > 0.01 * count->parameters) {
    bad("parameters", format_number(parameters, 6),
        "contradicts model '" + model + "' (" + format_number(count->parameters, 6) +
            " parameters): give the model or a parameter count, not both");
  }
  if (batch_size < 0) bad("batch_size", std::to_string(batch_size), "must be >= 0");
  if (sequence_length < 0) bad("sequence_length", std::to_string(sequence_length), "must be >= 0");
  if (!std::isnan(activation_bytes) &&
      !(activation_bytes >= 0 && std::isfinite(activation_bytes))) {
    bad("activation_bytes", format_number(activation_bytes, 6), "must be a number >= 0");
  }
  if (!std::isnan(latency_budget_seconds)) {
    if (mode != WorkloadKind::kInference) {
      bad("latency_budget_seconds", format_number(latency_budget_seconds, 6),
          "applies to inference only");
    }
    if (!(latency_budget_seconds > 0 && std::isfinite(latency_budget_seconds))) {
      bad("latency_budget_seconds", format_number(latency_budget_seconds, 6),
          "must be a number > 0");
    }
  }
  if (!std::isnan(budget_usd) && !(budget_usd >= 0 && std::isfinite(budget_usd))) {
    bad("budget_usd", format_number(budget_usd, 6), "must be a number >= 0");
  }
  if (gpu_count < 1 || gpu_count > 4096)
    bad("gpu_count", std::to_string(gpu_count), "must be 1..4096");
  if (!std::isnan(price_per_hour_usd) &&
      !(price_per_hour_usd >= 0 && std::isfinite(price_per_hour_usd))) {
    bad("price_per_hour_usd", format_number(price_per_hour_usd, 6), "must be a number >= 0");
  }
  for (const auto& [gpu, usd] : price_per_hour_by_gpu) {
    if (gpu.empty()) bad("price_per_hour_by_gpu", "=" + format_number(usd, 6), "names no GPU");
    if (!(usd > 0 && std::isfinite(usd))) {
      bad("price_per_hour_by_gpu", gpu + "=" + format_number(usd, 6),
          "must be a finite price > 0 USD per GPU-hour");
    }
  }
  validate_run(*this);
  if (!(assumed_utilization > 0 && assumed_utilization <= 1)) {
    bad("assumed_utilization", format_number(assumed_utilization, 6), "must be in (0, 1]");
  }
  if (!std::isnan(host_cores_per_gpu)) {
    if (mode != WorkloadKind::kTrain) {
      bad("host_cores_per_gpu", format_number(host_cores_per_gpu, 6), "applies to training only");
    }
    if (!(host_cores_per_gpu > 0 && host_cores_per_gpu <= 4096)) {
      bad("host_cores_per_gpu", format_number(host_cores_per_gpu, 6),
          "must be a number in (0, 4096]");
    }
  }
}

std::vector<GpuAdvice> advise(const AdvisorRequest& request, const SpecDatabase& db,
                              const std::vector<LoadedRun>& measured,
                              const std::vector<PublishedResult>& published,
                              const std::vector<RentalPrice>& default_prices) {
  return advise_with(request, db, LoadedResults{measured, {}}, published, default_prices);
}

std::vector<GpuAdvice> advise_with(const AdvisorRequest& request, const SpecDatabase& db,
                                   const LoadedResults& results,
                                   const std::vector<PublishedResult>& published,
                                   const std::vector<RentalPrice>& default_prices) {
  request.validate();
  Workload w = describe_workload(request);
  w.price_by_id = prices_by_id(request, db);
  w.table_by_id = table_by_id(default_prices, db);
  // Reference throughputs: measured runs first, then published figures.
  References found;
  add_run_references(request, db, results.runs, found);
  add_inference_references(request, db, results.inference, w.train, found);
  add_published_references(request, db, published, w.train, found);
  std::vector<GpuAdvice> out;
  for (const auto& spec : db.gpus()) {
    if (spec.reference_only && !request.include_reference_only) continue;
    out.push_back(advise_gpu(spec, request, w, found));
  }
  rank(out, request, w);
  return out;
}

OptimizerKind optimizer_for(const AdvisorRequest& request) {
  if (request.optimizer) return *request.optimizer;
  return request.model == "resnet50" ? OptimizerKind::kSgd : OptimizerKind::kAdam;
}

}  // namespace gpuperf
