// gpu_info: what every GPU is doing right now, from NVML (the seed's pynvml script, in C++).
// Shows the telemetry layer on its own: NVML is loaded at run time, so this program starts and
// says "telemetry unavailable" on machines without a driver; it links no LibTorch.
//
//   gpu_info                          table: name, memory, utilization, temperature, power, clocks,
//                                     clock-event reasons, energy, ECC, PCIe, NVLink, processes
//   gpu_info --json                   the same as JSON
//   gpu_info --watch 1 --count 10     one line per GPU every second, 10 times (like nvidia-smi
//                                     dmon)
//   gpu_info --sample 5               sample every GPU for 5 s in the background and summarize
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/telemetry/sampler.h"
#include "gpuperf/telemetry/snapshot.h"
#include "gpuperf/telemetry/telemetry.h"
#include "program.h"

namespace {

// Watch mode repeats the column header this often, as nvidia-smi dmon does.
constexpr int kHeaderEvery = 20;
// The longest --watch, --sample and --sample-period, seconds.
constexpr double kMaxSeconds = 86400;

// The options as typed. The CLI11 options are kept to tell "not given" from a value and to quote
// a bad value as it was typed.
struct InfoOptions {
  bool json = false;
  double watch_seconds = 0;
  long count = 0;
  double sample_seconds = 0;
  double sample_period = gpuperf::TelemetrySamplerOptions{}.period_seconds;
  bool no_processes = false;
  std::string library = gpuperf::kNvmlLibrary;
  CLI::Option* watch_option = nullptr;
  CLI::Option* count_option = nullptr;
  CLI::Option* sample_option = nullptr;
};

std::string local_time_label() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

// Seconds are turned into the steady clock's integer ticks: beyond a day (1e10 overflowed them,
// and the watch returned at once) is refused with the value as typed.
CLI::Validator seconds_rule() {
  return gpuperf::program::number_rule([](double v) { return v > 0 && v <= kMaxSeconds; },
                                       "> 0 and <= 86400 seconds (a day)");
}

void add_options(CLI::App& app, InfoOptions& o) {
  app.add_flag("--json", o.json, "Write JSON (JSON Lines in watch mode) instead of a table");
  o.watch_option =
      app.add_option("--watch", o.watch_seconds, "Refresh every N seconds, one line per GPU")
          ->check(seconds_rule());
  o.count_option = app.add_option("--count", o.count, "With --watch: stop after K refreshes");
  o.sample_option = app.add_option("--sample", o.sample_seconds,
                                   "Sample every GPU for S seconds in the background and summarize")
                        ->check(seconds_rule());
  app.add_option("--sample-period", o.sample_period, "Seconds between background samples")
      ->capture_default_str()
      ->check(seconds_rule());
  app.add_flag("--no-processes", o.no_processes, "Do not list the processes using each GPU");
  app.add_option("--nvml-library", o.library, "NVML library to load")->capture_default_str();
}

// Bad values are rejected before anything is opened, naming the option and the value.
void check_options(const InfoOptions& o) {
  const bool watch = o.watch_option->count() > 0;
  const bool count = o.count_option->count() > 0;
  const bool sample = o.sample_option->count() > 0;
  if (watch && !(o.watch_seconds > 0 && std::isfinite(o.watch_seconds))) {
    throw gpuperf::ConfigError("--watch must be a positive number of seconds, got " +
                               o.watch_option->as<std::string>());
  }
  if (count && o.count < 1) {
    throw gpuperf::ConfigError("--count must be at least 1, got " +
                               o.count_option->as<std::string>());
  }
  if (count && !watch) {
    throw gpuperf::ConfigError("--count " + o.count_option->as<std::string>() + " needs --watch");
  }
  if (sample && !(o.sample_seconds > 0 && std::isfinite(o.sample_seconds))) {
    throw gpuperf::ConfigError("--sample must be a positive number of seconds, got " +
                               o.sample_option->as<std::string>());
  }
  if (sample && watch) throw gpuperf::ConfigError("--sample and --watch cannot be combined");
  if (!(o.sample_period > 0 && std::isfinite(o.sample_period))) {
    throw gpuperf::ConfigError("--sample-period must be a positive number of seconds, got " +
                               std::to_string(o.sample_period));
  }
}

void print_unavailable(const std::string& reason, bool json) {
  if (json) {
    std::cout << nlohmann::json{{"available", false}, {"unavailable_reason", reason}}.dump(2)
              << "\n";
  } else {
    std::cout << "telemetry unavailable: " << reason << "\n";
  }
}

nlohmann::json summary_json(std::size_t index, const gpuperf::TelemetrySummary& summary) {
  return {{"index", index},
          {"sample_count", summary.sample_count},
          {"duration_seconds", summary.duration_seconds},
          {"power_mean_watts", summary.power_mean_watts},
          {"power_max_watts", summary.power_max_watts},
          {"energy_joules", summary.energy_joules},
          {"energy_source", summary.energy_source},
          {"sm_clock_mean_hz", summary.sm_clock_mean_hz},
          {"sm_clock_min_hz", summary.sm_clock_min_hz},
          {"temperature_max_celsius", summary.temperature_max_celsius},
          {"clock_event_reasons", summary.clock_event_reasons},
          {"warnings", summary.warnings}};
}

// --sample: one sampler per GPU, all running at once, as they would beside a multi-GPU run.
void sample_gpus(gpuperf::TelemetrySystem& system, const InfoOptions& o) {
  gpuperf::TelemetrySamplerOptions sampler_options;
  sampler_options.period_seconds = o.sample_period;
  std::vector<std::unique_ptr<gpuperf::TelemetrySampler>> samplers;
  for (std::size_t i = 0; i < system.device_count(); ++i) {
    samplers.push_back(
        std::make_unique<gpuperf::TelemetrySampler>(system.device(i), sampler_options));
  }
  for (auto& sampler : samplers) sampler->start();
  std::this_thread::sleep_for(seconds(o.sample_seconds));
  nlohmann::json summaries = nlohmann::json::array();
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    const gpuperf::TelemetrySummary summary = samplers[i]->stop();
    if (o.json) {
      summaries.push_back(summary_json(i, summary));
    } else {
      std::cout << "GPU " << i << "\n";
      gpuperf::write_telemetry_summary(std::cout, summary);
    }
  }
  // nlohmann writes NaN as null, which is what "not available" means here.
  if (o.json) std::cout << nlohmann::json{{"summaries", summaries}}.dump(2) << "\n";
}

// The default: one snapshot, as a table or JSON.
void show_snapshot(gpuperf::TelemetrySystem& system, const InfoOptions& o) {
  const gpuperf::SystemSnapshot snapshot = gpuperf::take_snapshot(system, !o.no_processes);
  if (o.json) {
    std::cout << gpuperf::snapshot_to_json(snapshot) << "\n";
  } else {
    gpuperf::write_snapshot_table(std::cout, snapshot);
  }
}

// --watch: refresh on a fixed schedule so that the period does not drift with NVML's latency.
void watch_gpus(gpuperf::TelemetrySystem& system, const InfoOptions& o) {
  auto next = std::chrono::steady_clock::now();
  for (long refresh = 0; o.count == 0 || refresh < o.count; ++refresh) {
    // Processes are read for JSON Lines only: the watch rows have no column for them.
    const gpuperf::SystemSnapshot snapshot =
        gpuperf::take_snapshot(system, !o.no_processes && o.json);
    if (o.json) {
      std::cout << gpuperf::snapshot_to_json(snapshot, -1) << "\n";
    } else {
      if (refresh % kHeaderEvery == 0) gpuperf::write_watch_header(std::cout);
      gpuperf::write_watch_rows(std::cout, snapshot, local_time_label());
    }
    std::cout.flush();
    if (o.count != 0 && refresh + 1 == o.count) break;
    next += seconds(o.watch_seconds);
    std::this_thread::sleep_until(next);
  }
}

int show_gpus(const InfoOptions& o) {
  check_options(o);
  const gpuperf::OpenedTelemetry telemetry = gpuperf::open_nvml_telemetry(o.library);
  // No driver is an answer, not an error: this program is meant to run anywhere.
  if (!telemetry) {
    print_unavailable(telemetry.unavailable_reason, o.json);
  } else if (o.sample_option->count() > 0) {
    sample_gpus(*telemetry.system, o);
  } else if (o.watch_option->count() > 0) {
    watch_gpus(*telemetry.system, o);
  } else {
    show_snapshot(*telemetry.system, o);
  }
  return gpuperf::program::kExitOk;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"Shows every GPU's state from NVML: a table, JSON, or a line per GPU per refresh.",
               "gpu_info"};
  InfoOptions options;
  add_options(app, options);
  return gpuperf::program::run_program(app, argc, argv, [&] { return show_gpus(options); });
} catch (...) {
  return gpuperf::program::setup_failed("gpu_info");
}
