#pragma once
// A run is a plain record; reporters only format it. Seconds, bytes, watts and hertz are stored
// in base units as double; NaN means "not available" (JSON null).
//
// Around your own step with gpuperf::core alone, a valid record in a few lines:
//
//   auto timer = gpuperf::make_steady_clock_timer();
//   const gpuperf::Measurement m = gpuperf::measure([&] { my_step(); }, 64, *timer, {});
//   gpuperf::RunRecord record = gpuperf::make_record("my_net", m, *timer);
//   record.device.kind = "cpu";                      // what ran it: "cpu" or "cuda"
//   record.device.name = "AMD EPYC 9654";
//   record.config.optimizer = "sgd";                 // what the step ran, where not the default
//   gpuperf::write_json_file(record, "my_net.json");  // ConfigError naming a field it would refuse

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuperf/base/fingerprint.h"
#include "gpuperf/results/json.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/telemetry/telemetry_summary.h"
#include "gpuperf/timing/measure.h"
#include "gpuperf/timing/statistics.h"
#include "gpuperf/timing/timer.h"

namespace gpuperf {

/// The settings of a training measurement.
struct RunConfig {
  std::string workload = "train";  ///< "train"
  std::string model;
  std::int64_t batch_size = 0;
  /// Micro-batches a step's batch ran in, one optimizer step after the last (gradient
  /// accumulation); written only where above 1.
  std::int64_t accumulation_steps = 1;
  std::vector<std::int64_t> input_shape;  ///< one sample, e.g. {3, 224, 224}
  std::int64_t num_classes = 0;
  // Defaults: those of TrainStepOptions, so that a record made by make_record() is valid.
  std::string precision = "fp32";               ///< fp32, tf32, fp16, bf16
  std::string memory_format = "contiguous";     ///< contiguous, channels_last
  std::string optimizer = "adam";               ///< adam, sgd, adamw
  std::string optimizer_impl = "torch::optim";  ///< "torch::optim" or "fused" (ATen kernels)
  double learning_rate = 0;
  std::string graph_mode = "eager";  ///< "eager" or "cuda-graph" (whole step captured)
  /// Kernel fusion in the model: "none" or "conv+bias+relu" (one cuDNN call per convolution).
  std::string kernel_fusion = "none";
  std::string data_source = "synthetic";
  bool cudnn_benchmark = false;
  bool grad_scaler = false;
  std::int64_t warmup_steps = 0;
  std::int64_t steps_per_window = 0;
  bool adaptive = false;
  std::int64_t seed = 0;
};

/// A data-parallel run's figures across its ranks (world_size 1: a single-process run, and the
/// JSON has no "distributed" object).
struct DistributedSummary {
  int world_size = 1;
  std::string backend;       ///< "nccl" or "gloo"
  std::string launcher;      ///< "torchrun", "mpi", "slurm" or "gpuperf" (its own launcher)
  std::string interconnect;  ///< what carried the all-reduce, in words (NVLink, PCIe, sockets...)
  /// Samples/s of all ranks together: the median over windows of the per-window sums.
  double global_throughput = kNotAvailable;
  std::vector<double> rank_throughput;  ///< each rank's median window throughput, by rank
  /// The single-process figure it is judged against (given, or measured in the same job).
  double baseline_throughput = kNotAvailable;
  /// global_throughput / (world_size x baseline_throughput).
  double scaling_efficiency = kNotAvailable;
  double gradient_bytes = kNotAvailable;  ///< all-reduced per step
  std::int64_t buckets = 0;               ///< gradient buckets
  /// Bus bandwidth of the gradient buckets' all-reduce timed alone after the run (nccl-tests'
  /// busbw, GB/s), and its time per step as a share of the step: an upper bound of the
  /// communication time the overlap with backward has to hide.
  double allreduce_bus_gbps = kNotAvailable;
  double allreduce_share_of_step = kNotAvailable;
  /// Every rank ended with bit-identical parameters (checked by a digest after the run).
  bool parameters_identical = false;
};

/// One measurement: configuration, machine, statistics and the command that reproduces it.
struct RunRecord {
  static constexpr const char* kSchema = "gpuperf.run/1";
  std::string schema = kSchema;
  std::string timestamp_utc;  ///< ISO 8601
  std::string command;        ///< the command line that produced it
  DeviceFingerprint device;
  RunConfig config;

  // Throughput, samples/s: statistics over timed windows (never a mean of per-step rates).
  Summary throughput;
  std::vector<double> window_throughput;
  std::vector<double> window_seconds;
  double overall_throughput = 0;  ///< all timed samples / all timed seconds
  std::int64_t timed_steps = 0;
  double timed_seconds = 0;
  std::string stop_reason;
  std::string timer;  ///< "cuda-event" or "steady-clock"

  double peak_memory_bytes = kNotAvailable;  ///< peak allocated by LibTorch's caching allocator
  std::int64_t skipped_steps = 0;            ///< optimizer steps skipped for inf/NaN gradients
  std::int64_t total_steps = 0;              ///< warm-up and timed steps
  /// The loss of the first step (warm-up included) and of the last: a run that trained ends
  /// with a finite loss below its first (benchmarks/python/headline.py refuses one that did not).
  double first_loss = kNotAvailable;
  double final_loss = kNotAvailable;
  double final_loss_scale = kNotAvailable;
  /// Training: the loss of each timed window's last step, in window order (NaN where it was not
  /// finite), read between windows while the device is idle; empty where none was kept.
  std::vector<double> window_losses;

  TelemetrySummary telemetry;      ///< power, energy, clocks, throttling over the timed windows
  DistributedSummary distributed;  ///< data-parallel figures; world_size 1 for one process

  std::map<std::string, double> metrics;  ///< derived figures, e.g. "imagenet_90_epochs_seconds"
  std::vector<std::string> warnings;
};

/// Copies what measure() measured into `record`: the throughput summary, the windows and their
/// times, the overall throughput, the timed steps and seconds, and why it stopped.
void set_measurement(RunRecord& record, const Measurement& measurement);

/// A record of `measurement`, taken with `timer` by measure(): schema, timestamp (now), the
/// throughput statistics and windows, steps, seconds, stop reason, the timer's name, the
/// configuration's batch size (samples per step), warm-up, steps per window and adaptive mode,
/// device.gpuperf_version; everything else at its default (fp32, contiguous, adam; not
/// available). Left to the caller: device.kind ("cpu" or "cuda") and name, and any setting that
/// differs from its default. ConfigError when `model` is empty or the measurement has no window
/// or a fractional batch.
[[nodiscard]] RunRecord make_record(const std::string& model, const Measurement& measurement,
                                    const Timer& timer);
/// " in 4 micro-batches" for a step of 4 (RunConfig::accumulation_steps), "" for one: how the
/// console, the log and gpuperf_compare's labels follow a batch size with it.
[[nodiscard]] std::string micro_batches_text(std::int64_t accumulation_steps);
/// Throws ConfigError naming the first field of `record` that gpuperf.run/1
/// (docs/schema/run-1.schema.json) or gpuperf's reader would refuse, with the value and the rule.
void validate(const RunRecord& record);
/// Writes `record` as JSON to `path` atomically, after validate(record): a record that would not
/// read back is never written (ConfigError naming the field; IoError when the file fails).
void write_json_file(const RunRecord& record, const std::string& path);
/// Serializes a record as JSON text (indented).
[[nodiscard]] std::string to_json(const RunRecord& record);
/// Parses a record from JSON text; throws IoError naming the field when it is malformed.
template <>
RunRecord from_json<RunRecord>(const std::string& text);
/// The figures of `record` that its efficiency is derived from: the median window throughput
/// (the overall rate for records without windows), measured power and energy where telemetry or
/// a "power_mean_watts" metric has them, the device's power limit.
[[nodiscard]] EfficiencyInput efficiency_input(const RunRecord& record);
/// compute_efficiency(efficiency_input(record), spec, options).
[[nodiscard]] Efficiency compute_efficiency(const RunRecord& record, const GpuSpec* spec,
                                            const EfficiencyOptions& options = {});
/// Writes the figures into record.metrics under the names listed in docs/efficiency.md
/// ("model_flops_per_sample", "fraction_of_datasheet_peak", ...), skipping unavailable ones, and
/// the record's imagenet_projection_seconds() as "imagenet_90_epochs_seconds".
void add_efficiency_metrics(RunRecord& record, const Efficiency& efficiency);
/// Seconds for kImageNetEpochs epochs of ImageNet-1k (kImageNet1kTrainImages images) at the
/// job's rate: all ranks' samples/s (distributed.global_throughput) when it ran on more than
/// one, else the median window (the overall rate without windows). Only a training record of a
/// 3x224x224 image model has one; NaN otherwise. The one rule for the record's metric, the
/// console and the HTML report.
[[nodiscard]] double imagenet_projection_seconds(const RunRecord& record);

}  // namespace gpuperf
