// A run record's efficiency: its figures in, the derived metrics back into the record.
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpuperf/results/run_record.h"

namespace gpuperf {

EfficiencyInput efficiency_input(const RunRecord& record) {
  EfficiencyInput input;
  input.model = record.config.model;
  input.workload = record.config.workload;
  input.precision = record.config.precision;
  // The median window is robust to a stray slow window; the overall rate is the fallback for
  // records written without windows.
  input.samples_per_second =
      record.throughput.count > 0 ? record.throughput.median : record.overall_throughput;
  if (record.telemetry.available && record.telemetry.power_mean_watts > 0) {
    input.measured_power_watts = record.telemetry.power_mean_watts;
  } else if (auto it = record.metrics.find("power_mean_watts");
             it != record.metrics.end() && it->second > 0) {
    input.measured_power_watts = it->second;
  }
  if (record.telemetry.available && record.telemetry.samples_per_joule > 0) {
    input.measured_samples_per_joule = record.telemetry.samples_per_joule;
  }
  input.power_limit_watts = record.device.power_limit_watts;
  // A language model's count, written by the run (it depends on the sequence length).
  if (!count_model(record.config.model)) {
    if (auto it = record.metrics.find("model_flops_per_sample");
        it != record.metrics.end() && it->second > 0) {
      input.flops_per_sample = it->second;
    }
  }
  return input;
}

Efficiency compute_efficiency(const RunRecord& record, const GpuSpec* spec,
                              const EfficiencyOptions& options) {
  return compute_efficiency(efficiency_input(record), spec, options);
}

void add_efficiency_metrics(RunRecord& record, const Efficiency& e) {
  auto put = [&](const char* name, double value) {
    if (std::isfinite(value)) record.metrics[name] = value;
  };
  put("model_flops_per_sample", e.flops_per_sample);
  put("achieved_flops_per_second", e.achieved_flops_per_second);
  put("datasheet_peak_flops_per_second", e.peak_flops_per_second);
  put("fraction_of_datasheet_peak", e.fraction_of_peak);
  put("power_watts", e.power_watts);
  if (!e.power_basis.empty())
    record.metrics["power_measured"] = e.power_basis == "measured" ? 1 : 0;
  put("samples_per_joule", e.samples_per_joule);
  put("cost_usd_per_million_samples", e.cost_usd_per_million_samples);
  put("imagenet_90_epochs_seconds", imagenet_projection_seconds(record));
}

double imagenet_projection_seconds(const RunRecord& record) {
  const std::vector<std::int64_t> kImageNetShape = {3, 224, 224};
  if (record.config.workload != "train" || record.config.input_shape != kImageNetShape) {
    return kNotAvailable;
  }
  const double rate = record.distributed.world_size > 1 ? record.distributed.global_throughput
                      : record.throughput.count > 0     ? record.throughput.median
                                                        : record.overall_throughput;
  return rate > 0 ? kImageNetEpochs * kImageNet1kTrainImages / rate : kNotAvailable;
}

}  // namespace gpuperf
