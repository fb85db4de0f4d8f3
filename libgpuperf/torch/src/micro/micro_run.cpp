// run_micro(): validate -> resolve -> measure -> datasheet and warnings, each once.
#include "gpuperf/micro/micro_run.h"

#include <c10/util/Exception.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/base/log.h"
#include "gpuperf/base/timestamp.h"
#include "gpuperf/device/device.h"
#include "gpuperf/micro/interconnect.h"
#include "gpuperf/results/micro_datasheet.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string progress_line(const MicroResult& r) {
  if (!r.ok()) return log::cat(r.name, " ", r.shape, ": ", r.status);
  return log::cat(r.name, " ", r.shape, ": ", format_number(r.summary.median), " ", r.unit,
                  " (median of ", r.windows.size(), " windows, ", format_number(r.summary.min),
                  "..", format_number(r.summary.max), ")");
}

// Datasheet figures need a matching entry; a missing file or an unknown GPU costs the
// percentages, never the run.
void attach_datasheet(MicroReport& report, const std::string& specs_path) {
  if (report.device.kind != "cuda") {
    report.warnings.emplace_back(
        "CPU variant: no datasheet comparison (the database describes GPUs)");
    return;
  }
  const std::optional<GpuSpec> spec = datasheet_entry(report.device, specs_path, report.warnings);
  apply_datasheet(report, spec ? &*spec : nullptr);
}

// P2P copies between GPUs 0..n-1 and the collectives over them (NCCL); on the CPU, the
// collectives over 2 (or run.ranks) threads with Gloo over loopback, labelled as no interconnect.
void run_interconnect(const MicroRun& run, const MicroOptions& options, bool cuda,
                      MicroReport& report, const std::function<void(MicroResult)>& add) {
  CollectiveOptions collectives;
  if (!run.collectives.empty()) collectives.collectives = run.collectives;
  collectives.sizes = !run.collective_sizes.empty()
                          ? run.collective_sizes
                          : parse_byte_sizes(cuda ? "1M..1G" : "64K..4M", "collective-sizes");
  if (cuda) {
    const int gpus = cuda_device_count();
    if (gpus < 2) {
      report.warnings.push_back("interconnect: " + std::to_string(gpus) +
                                " CUDA GPU here; P2P copies and NCCL collectives need 2 or more, "
                                "skipped");
      return;
    }
    const int ranks = run.ranks > 0 ? static_cast<int>(run.ranks) : gpus;
    std::vector<int> devices;
    devices.reserve(static_cast<std::size_t>(ranks));
    for (int d = 0; d < ranks; ++d) devices.push_back(d);
    P2pReport p2p = run_p2p(devices, static_cast<double>(run.p2p_size_mib) * kMiB, 4, options);
    for (auto& r : p2p.results) add(std::move(r));
    report.peer_links = std::move(p2p.links);
    for (auto& w : p2p.warnings) report.warnings.push_back(std::move(w));
    collectives.backend = C10dBackend::kNccl;
    collectives.ranks = ranks;
    report.interconnect = "NCCL through c10d, " + std::to_string(ranks) + " GPUs";
  } else {
    collectives.backend = C10dBackend::kGloo;
    report.warnings.emplace_back(
        collective_backend_available(collectives.backend, nullptr)
            ? "interconnect: no CUDA GPU, so no P2P copies; the collectives ran on the CPU with "
              "Gloo over loopback, which measures no interconnect"
            : "interconnect: no CUDA GPU, so no P2P copies");
    collectives.ranks = run.ranks > 0 ? static_cast<int>(run.ranks) : 2;
    report.interconnect = "CPU, Gloo over loopback: not an interconnect, " +
                          std::to_string(collectives.ranks) + " threads";
  }
  std::string reason;
  if (!collective_backend_available(collectives.backend, &reason)) {
    report.warnings.push_back("collectives skipped: " + reason);
    return;
  }
  for (auto& r : run_collectives(collectives, options)) add(std::move(r));
}

}  // namespace

void MicroRun::validate() const {
  RunBasics::validate();
  if (!kernel_trace.empty()) {
    throw ConfigError("MicroRun::kernel_trace", kernel_trace,
                      "must be empty: microbenchmarks write no kernel trace");
  }
  if (gemm_shape) {
    require_setting(gemm_shape->m > 0 && gemm_shape->n > 0 && gemm_shape->k > 0,
                    "MicroRun::gemm_shape", std::min({gemm_shape->m, gemm_shape->n, gemm_shape->k}),
                    "> 0");
  }
  require_setting(memory_size_mib >= 0, "MicroRun::memory_size_mib", memory_size_mib,
                  ">= 1 (0: the default)");
  require_setting(host_size_mib > 0, "MicroRun::host_size_mib", host_size_mib, "> 0");
  timing.validate();
  require_setting(p2p_size_mib > 0, "MicroRun::p2p_size_mib", p2p_size_mib, "> 0");
  require_setting(ranks == 0 || ranks >= 2, "MicroRun::ranks", ranks, ">= 2 (0: the default)");
  if (!gemm && !memory && !interconnect) {
    throw ConfigError("MicroRun::gemm",
                      "off, with {memory} and {interconnect} off too: nothing to run");
  }
}

namespace {

// The noise warnings, written into the report once.
void add_noise_warnings(MicroReport& report) {
  for (const auto& r : report.results) {
    if (r.ok() && r.summary.count >= 2 && r.summary.relative_ci95_half_width() > 0.05) {
      report.warnings.push_back(r.name + " is noisy: 95% CI half-width is " +
                                format_fixed(100 * r.summary.relative_ci95_half_width(), 2) +
                                "% of the mean; use more MicroTiming::windows");
    }
  }
}

MicroReport describe(const MicroRun& run, const torch::Device& device) {
  MicroReport report;
  report.timestamp_utc = utc_timestamp();
  report.command = run.command_line;
  report.device = collect_fingerprint(device);
  report.variant = device.is_cuda() ? "gpu" : "cpu";
  report.timer = device.is_cuda() ? "cuda-event" : "steady-clock";
  if (!run.quiet) {
    const MicroTiming& o = run.timing;
    log::info(log::cat("microbenchmarks on ", report.device.name, " (", device.str(), ")",
                       device.is_cuda() ? "" : ": CPU variant (host memory, CPU GEMMs)", "; ",
                       o.windows, " windows of ", o.calls_per_window, " calls after ", o.warmup,
                       " warm-up calls"));
  }
  return report;
}

// What each measurement gets: the run's timing and its one seed, RunBasics::seed.
MicroOptions measurement_options(const MicroRun& run) {
  MicroOptions options;
  static_cast<MicroTiming&>(options) = run.timing;
  options.seed = static_cast<std::uint64_t>(run.seed);
  return options;
}

void measure_micro(const MicroRun& run, const torch::Device& device, MicroReport& report) {
  const MicroOptions options = measurement_options(run);
  const bool cuda = device.is_cuda();
  const std::int64_t edge = cuda ? 8192 : 1024;
  const GemmShape shape = run.gemm_shape.value_or(GemmShape{edge, edge, edge});
  const std::vector<GemmDtype> dtypes =
      run.dtypes.empty() ? default_gemm_dtypes(device) : run.dtypes;
  const double memory_bytes =
      static_cast<double>(run.memory_size_mib > 0 ? run.memory_size_mib : (cuda ? 1024 : 256)) *
      kMiB;
  const double host_bytes = static_cast<double>(run.host_size_mib) * kMiB;
  const auto add = [&](MicroResult r) {
    if (!run.quiet) log::info(progress_line(r));
    report.results.push_back(std::move(r));
  };
  if (run.gemm) {
    for (GemmDtype d : dtypes) add(run_gemm(d, shape, device, options));
  }
  if (run.memory) {
    for (MemoryOp op : default_memory_ops(device)) {
      const bool transfer =
          op == MemoryOp::kHostToDevicePinned || op == MemoryOp::kDeviceToHostPinned ||
          op == MemoryOp::kHostToDevicePageable || op == MemoryOp::kDeviceToHostPageable;
      add(run_memory(op, transfer ? host_bytes : memory_bytes, device, options));
    }
  }
  if (run.interconnect) run_interconnect(run, options, cuda, report, add);
  synchronize(device);
}

}  // namespace

MicroReport run_micro(const MicroRun& run) {
  run.validate();
  const torch::Device device = resolve_device(run.device);
  set_intra_op_threads(run.threads);
  if (run.interconnect && device.is_cuda() && run.ranks > cuda_device_count()) {
    // Refused before anything runs, like every other bad option.
    throw ConfigError("MicroRun::ranks", "must be <= the " + std::to_string(cuda_device_count()) +
                                             " GPUs present, got " + std::to_string(run.ranks));
  }
  MicroReport report = describe(run, device);
  try {
    measure_micro(run, device, report);
  } catch (const c10::OutOfMemoryError& e) {
    throw OutOfMemoryError(std::string("CUDA out of memory (try a smaller MicroRun::gemm_shape or "
                                       "MicroRun::memory_size_mib): ") +
                           e.what_without_backtrace());
  }
  attach_datasheet(report, run.specs_path);
  add_noise_warnings(report);
  return report;
}

}  // namespace gpuperf
