#include "gpuperf/report/console.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "gpuperf/base/format.h"
#include "gpuperf/results/run_record.h"
#include "gpuperf/specs/efficiency.h"

namespace gpuperf {
void write_text(std::ostream& out, const RunRecord& r, const std::string& unit) {
  const Summary& t = r.throughput;
  const RunConfig& c = r.config;
  out << "Workload: " << c.model << ", batch " << c.batch_size
      << micro_batches_text(c.accumulation_steps) << ", " << c.precision << ", " << c.memory_format
      << ", " << c.optimizer << " (" << c.optimizer_impl << "), " << c.graph_mode << " on "
      << printable(r.device.name) << "\n";
  out << "Throughput: " << format_fixed(t.median, 2) << " " << unit << "\n";
  out << "  median of " << t.count << " windows x " << r.config.steps_per_window << " steps ("
      << r.timer << "); mean " << format_fixed(t.mean, 2) << ", 95% CI ["
      << format_fixed(t.ci95_low, 2) << ", " << format_fixed(t.ci95_high, 2) << "] (+/-"
      << format_fixed(100 * t.relative_ci95_half_width(), 2) << "%), IQR " << format_fixed(t.iqr, 2)
      << ", min " << format_fixed(t.min, 2) << ", max " << format_fixed(t.max, 2) << "\n";
  out << "  overall " << format_fixed(r.overall_throughput, 2) << " " << unit << " ("
      << r.timed_steps << " timed steps in " << format_fixed(r.timed_seconds, 3) << " s; "
      << r.config.warmup_steps << " warm-up steps excluded; stop: " << r.stop_reason << ")\n";
  out << "  skipped optimizer steps (inf/NaN gradients): " << r.skipped_steps << " of "
      << r.total_steps << "; final loss " << format_fixed(r.final_loss, 4);
  if (r.config.grad_scaler) out << "; loss scale " << format_fixed(r.final_loss_scale, 0);
  out << "\n";
  const auto metric = [&](const char* name) {
    const auto found = r.metrics.find(name);
    return found == r.metrics.end() ? std::numeric_limits<double>::quiet_NaN() : found->second;
  };
  out << "  peak memory: " << format_bytes(r.peak_memory_bytes)
      << (std::isfinite(r.peak_memory_bytes) ? " allocated" : "");
  if (std::isfinite(metric("peak_reserved_bytes")))
    out << ", " << format_bytes(metric("peak_reserved_bytes")) << " reserved";
  if (std::isfinite(metric("predicted_peak_allocated_bytes"))) {
    out << "; predicted " << format_bytes(metric("predicted_peak_allocated_bytes"));
    if (std::isfinite(metric("predicted_peak_error"))) {
      out << " (" << (metric("predicted_peak_error") >= 0 ? "+" : "")
          << format_fixed(100 * metric("predicted_peak_error"), 1) << "%)";
    }
    out << ", " << format_bytes(metric("predicted_peak_reserved_bytes")) << " reserved";
  }
  out << "\n";
  const DistributedSummary& d = r.distributed;
  if (d.world_size > 1) {
    out << "Data-parallel: " << d.world_size << " ranks (" << d.backend << ", " << d.launcher
        << "), " << d.interconnect << "\n";
    out << "  global " << format_fixed(d.global_throughput, 2) << " " << unit << "; per rank";
    for (double rank : d.rank_throughput) out << " " << format_fixed(rank, 2);
    if (std::isfinite(d.scaling_efficiency)) {
      out << "; scaling " << format_fixed(100 * d.scaling_efficiency, 1) << "% of " << d.world_size
          << " x " << format_fixed(d.baseline_throughput, 2);
    }
    out << "\n  gradients " << format_bytes(d.gradient_bytes) << " in " << d.buckets
        << " buckets; their all-reduce alone: " << format_fixed(d.allreduce_bus_gbps, 1)
        << " GB/s bus bandwidth, " << format_fixed(100 * d.allreduce_share_of_step, 1)
        << "% of a step; parameters identical on every rank: "
        << (d.parameters_identical ? "yes" : "NO") << "\n";
  }
  // A language model's figures, all the record's: tokens/s and the FLOP count behind MFU.
  if (const auto it = r.metrics.find("tokens_per_second"); it != r.metrics.end()) {
    out << "Tokens: " << format_fixed(it->second, 0) << " tokens/s (sequence "
        << format_fixed(metric("sequence_length"), 0) << ", " << c.kernel_fusion << ")";
    const double mfu = metric("fraction_of_datasheet_peak");
    if (std::isfinite(mfu))
      out << "; MFU " << format_fixed(100 * mfu, 1) << "% of the datasheet peak";
    out << "\n  training FLOPs per token 6N + 6LCT = "
        << format_number(metric("model_flops_per_token"), 4) << " (N "
        << format_number(metric("model_parameters"), 4) << " parameters, L "
        << format_fixed(metric("model_layers"), 0) << " layers, C "
        << format_fixed(metric("model_width"), 0) << " width, T "
        << format_fixed(metric("sequence_length"), 0) << " tokens)\n";
  }
  if (const double ratio = metric("data_to_synthetic_ratio"); std::isfinite(ratio)) {
    out << "On synthetic batches the same steps ran at "
        << format_number(metric("synthetic_images_per_second"), 6) << " img/s: the files reach "
        << format_fixed(100 * ratio, 1) << "% of it\n";
  }
  // The one rule of the projection (a 3x224x224 training model, at the job's rate): the figure
  // the record's metric and the HTML report hold.
  if (const double projected = imagenet_projection_seconds(r); std::isfinite(projected)) {
    // Where the rate's images were decoded: nvJPEG's records say so, and what share the host
    // threads took beside it (the adaptive share's mean over the run).
    std::string loading = "compute only: no data loading";
    if (r.config.data_source.rfind("image folder", 0) == 0) {
      const double host_share = metric("loader_host_decode_share");
      loading = !(metric("loader_decodes_on_gpu") > 0) ? "decoding the JPEG files on the CPU"
                // The GPU path's threads took every file (the adaptive share from 1): the GPU only
                // normalised their crops.
                : host_share >= 0.9995 ? "decoding the JPEG files on the CPU, the GPU normalising"
                : host_share > 0 ? "decoding the JPEG files on the GPU (nvJPEG) and the CPU (" +
                                       format_fixed(100 * host_share, 0) + "% of them)"
                                 : "decoding the JPEG files on the GPU (nvJPEG)";
    }
    out << "Projected " << format_number(kImageNetEpochs) << " epochs of ImageNet-1k ("
        << format_grouped(kImageNet1kTrainImages)
        << " images) at this rate: " << format_duration(projected) << " (" << loading << ", "
        << (d.world_size > 1 ? std::to_string(d.world_size) + " devices"
                             : std::string("one device"))
        << ")\n";
  }
  for (const auto& w : r.warnings) out << "warning: " << w << "\n";
}

}  // namespace gpuperf
