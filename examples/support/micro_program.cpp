// The microbench program: options -> measurements -> datasheet -> Markdown and JSON.
#include <c10/util/Exception.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "micro_cli.h"
#include "training_program.h"
#include "gpuperf/device/device.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/log.h"
#include "gpuperf/micro/interconnect.h"
#include "gpuperf/micro/micro.h"
#include "gpuperf/results/run_record.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string progress_line(const MicroResult& r) {
  if (!r.ok()) return log::cat(r.name, " ", r.shape, ": ", r.status);
  std::ostringstream line;
  line.precision(4);
  line << r.name << " " << r.shape << ": " << r.summary.median << " " << r.unit << " (median of "
       << r.windows.size() << " windows, " << r.summary.min << ".." << r.summary.max << ")";
  return line.str();
}

// Datasheet figures need a matching entry; a missing file or an unknown GPU costs the
// percentages, never the run.
void attach_datasheet(MicroReport& report, const std::string& specs_path) {
  if (report.device.kind != "cuda") {
    report.warnings.push_back("CPU variant: no datasheet comparison (the database describes GPUs)");
    return;
  }
  try {
    const SpecDatabase db = SpecDatabase::load_default(specs_path);
    const SpecMatch match =
        db.match_device(report.device.name, report.device.sm_count, report.device.memory_bytes);
    if (match.spec == nullptr) report.warnings.push_back(match.reason);
    apply_datasheet(report, match.spec);
  } catch (const Error& e) {
    report.warnings.push_back(std::string("datasheet figures unavailable: ") + e.what());
  }
}

// P2P copies between GPUs 0..n-1 and the collectives over them (NCCL); on the CPU, the
// collectives over 2 (or --ranks) threads with Gloo over loopback, labelled as no interconnect.
void run_interconnect(const MicrobenchArgs& args, bool cuda, const MicroOptions& options,
                      MicroReport& report, const std::function<void(MicroResult)>& add) {
  CollectiveOptions collectives;
  if (!args.collectives.empty())
    collectives.collectives = parse_collectives(args.collectives, "collectives");
  collectives.sizes = parse_byte_sizes(
      args.collective_sizes.empty() ? (cuda ? "1M..1G" : "64K..4M") : args.collective_sizes,
      "collective-sizes");
  if (cuda) {
    const int gpus = cuda_device_count();
    if (gpus < 2) {
      report.warnings.push_back("interconnect: " + std::to_string(gpus) +
                                " CUDA GPU here; P2P copies and NCCL collectives need 2 or more, "
                                "skipped");
      return;
    }
    const int ranks = args.ranks > 0 ? static_cast<int>(args.ranks) : gpus;
    std::vector<int> devices;
    for (int d = 0; d < ranks; ++d) devices.push_back(d);
    P2pReport p2p = run_p2p(devices, static_cast<double>(args.p2p_size_mib) * kMiB, 4, options);
    for (auto& r : p2p.results) add(std::move(r));
    report.peer_links = std::move(p2p.links);
    for (auto& w : p2p.warnings) report.warnings.push_back(std::move(w));
    collectives.backend = CollectiveBackend::kNccl;
    collectives.ranks = ranks;
    report.interconnect = "NCCL through c10d, " + std::to_string(ranks) + " GPUs";
  } else {
    collectives.backend = CollectiveBackend::kGloo;
    report.warnings.push_back(
        collective_backend_available(collectives.backend, nullptr)
            ? "interconnect: no CUDA GPU, so no P2P copies; the collectives ran on the CPU with "
              "Gloo over loopback, which measures no interconnect"
            : "interconnect: no CUDA GPU, so no P2P copies");
    collectives.ranks = args.ranks > 0 ? static_cast<int>(args.ranks) : 2;
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

MicroReport run_microbenchmarks(const MicrobenchArgs& args) {
  const torch::Device device = resolve_device(args.device);
  const bool cuda = device.is_cuda();
  GemmShape shape;
  if (!args.gemm_shape.empty()) {
    shape = parse_gemm_shape(args.gemm_shape, "gemm-shape");
  } else {
    const std::int64_t n = args.gemm_size > 0 ? args.gemm_size : (cuda ? 8192 : 1024);
    shape = {n, n, n};
  }
  const std::vector<GemmDtype> dtypes =
      args.dtypes.empty() ? default_gemm_dtypes(device) : parse_gemm_dtypes(args.dtypes, "dtypes");
  const double memory_bytes =
      static_cast<double>(args.memory_size_mib > 0 ? args.memory_size_mib : (cuda ? 1024 : 256)) *
      kMiB;
  const double host_bytes = static_cast<double>(args.host_size_mib) * kMiB;

  if (args.interconnect && cuda && args.ranks > cuda_device_count()) {
    // Refused before anything runs, like every other bad option.
    throw ConfigError("--ranks: must be <= the " + std::to_string(cuda_device_count()) +
                      " GPUs present, got " + std::to_string(args.ranks));
  }
  MicroOptions options;
  options.warmup_calls = args.warmup;
  options.calls_per_window = args.calls_per_window;
  options.windows = args.windows;
  options.seed = static_cast<std::uint64_t>(args.seed);
  options.validate();

  MicroReport report;
  report.timestamp_utc = utc_timestamp();
  report.command = args.command_line;
  report.device = collect_fingerprint(device);
  report.variant = cuda ? "gpu" : "cpu";
  report.timer = cuda ? "cuda-event" : "steady-clock";
  if (!args.quiet) {
    log::info(log::cat("microbenchmarks on ", report.device.name, " (", device.str(), ")",
                       cuda ? "" : ": CPU variant (host memory, CPU GEMMs)", "; ", options.windows,
                       " windows of ", options.calls_per_window, " calls after ",
                       options.warmup_calls, " warm-up calls"));
  }
  const auto add = [&](MicroResult r) {
    if (!args.quiet) log::info(progress_line(r));
    report.results.push_back(std::move(r));
  };
  if (args.gemm) {
    for (GemmDtype d : dtypes) add(run_gemm(d, shape, device, options));
  }
  if (args.memory) {
    for (MemoryOp op : default_memory_ops(device)) {
      const bool transfer =
          op == MemoryOp::kHostToDevicePinned || op == MemoryOp::kDeviceToHostPinned ||
          op == MemoryOp::kHostToDevicePageable || op == MemoryOp::kDeviceToHostPageable;
      add(run_memory(op, transfer ? host_bytes : memory_bytes, device, options));
    }
  }
  if (args.interconnect) run_interconnect(args, cuda, options, report, add);
  synchronize(device);
  attach_datasheet(report, args.specs_path);
  for (const auto& r : report.results) {
    if (r.ok() && r.summary.count >= 2 && r.summary.relative_ci95_half_width() > 0.05) {
      std::ostringstream text;
      text.precision(2);
      text << r.name << " is noisy: 95% CI half-width is " << std::fixed
           << 100 * r.summary.relative_ci95_half_width() << "% of the mean; use more --windows";
      report.warnings.push_back(text.str());
    }
  }
  return report;
}

int run_microbench(int argc, const char* const* argv) {
  const ParsedMicrobenchArgs parsed = parse_microbench_args(argc, argv, std::cout, std::cerr);
  if (parsed.exit_code) return *parsed.exit_code;
  const MicrobenchArgs& args = parsed.args;
  try {
    // Refuse bad output paths before the run, not after it.
    if (!args.json_path.empty()) check_writable(args.json_path, "json");
    if (!args.markdown_path.empty()) check_writable(args.markdown_path, "markdown");
    if (!args.specs_path.empty()) {
      try {
        (void)SpecDatabase::load_file(args.specs_path);
      } catch (const Error& e) {
        throw ConfigError(std::string("--specs: ") + e.what());
      }
    }
    const MicroReport report = run_microbenchmarks(args);
    std::ostringstream markdown;
    write_micro_markdown(report, markdown);
    std::cout << markdown.str();
    if (!args.markdown_path.empty()) {
      write_text_file_atomically(markdown.str(), args.markdown_path);
      std::cout << "\nMarkdown written to " << args.markdown_path << "\n";
    }
    if (!args.json_path.empty()) {
      write_micro_json_file(report, args.json_path);
      std::cout << "Results written to " << args.json_path << "\n";
    }
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const c10::OutOfMemoryError& e) {
    std::cerr << "error: CUDA out of memory (try a smaller --gemm-size or --memory-size-mib): "
              << e.what_without_backtrace() << "\n";
    return kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpuperf
