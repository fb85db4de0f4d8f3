// gpu_info: what every GPU is doing right now, from NVML (the seed's pynvml script, in C++).
// Shows the telemetry layer on its own: NVML is loaded at run time, so this program starts and
// says "telemetry unavailable" on machines without a driver; it links no LibTorch.
//
//   gpu_info                          table: name, memory, utilization, temperature, power, clocks,
//                                     clock-event reasons, energy, ECC, PCIe, NVLink, processes
//   gpu_info --json                   the same as JSON
//   gpu_info --watch 1 --count 10     one line per GPU every second, 10 times (like nvidia-smi
//   dmon) gpu_info --sample 5               sample every GPU for 5 s in the background and
//   summarize
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
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

namespace {

// Watch mode repeats the column header this often, as nvidia-smi dmon does.
constexpr int kHeaderEvery = 20;

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Shows every GPU's state from NVML: a table, JSON, or a line per GPU per refresh."};
  bool json = false;
  double watch_seconds = 0;
  long count = 0;
  double sample_seconds = 0;
  double sample_period = gpuperf::TelemetrySamplerOptions{}.period_seconds;
  bool no_processes = false;
  std::string library = gpuperf::kNvmlLibrary;
  app.add_flag("--json", json, "Write JSON (JSON Lines in watch mode) instead of a table");
  auto* watch_option =
      app.add_option("--watch", watch_seconds, "Refresh every N seconds, one line per GPU");
  auto* count_option = app.add_option("--count", count, "With --watch: stop after K refreshes");
  auto* sample_option = app.add_option(
      "--sample", sample_seconds, "Sample every GPU for S seconds in the background and summarize");
  app.add_option("--sample-period", sample_period, "Seconds between background samples")
      ->capture_default_str();
  app.add_flag("--no-processes", no_processes, "Do not list the processes using each GPU");
  app.add_option("--nvml-library", library, "NVML library to load")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpu_info: " << e.what() << "\n";
    return gpuperf::kExitUsage;
  }

  try {
    // Bad values are rejected before anything is opened, naming the option and the value.
    if (watch_option->count() > 0 && !(watch_seconds > 0 && std::isfinite(watch_seconds))) {
      throw gpuperf::ConfigError("--watch must be a positive number of seconds, got " +
                                 watch_option->as<std::string>());
    }
    if (count_option->count() > 0 && count < 1) {
      throw gpuperf::ConfigError("--count must be at least 1, got " +
                                 count_option->as<std::string>());
    }
    if (count_option->count() > 0 && watch_option->count() == 0) {
      throw gpuperf::ConfigError("--count " + count_option->as<std::string>() + " needs --watch");
    }
    if (sample_option->count() > 0 && !(sample_seconds > 0 && std::isfinite(sample_seconds))) {
      throw gpuperf::ConfigError("--sample must be a positive number of seconds, got " +
                                 sample_option->as<std::string>());
    }
    if (sample_option->count() > 0 && watch_option->count() > 0) {
      throw gpuperf::ConfigError("--sample and --watch cannot be combined");
    }
    if (!(sample_period > 0 && std::isfinite(sample_period))) {
      throw gpuperf::ConfigError("--sample-period must be a positive number of seconds, got " +
                                 std::to_string(sample_period));
    }
    gpuperf::TelemetrySamplerOptions sampler_options;
    sampler_options.period_seconds = sample_period;

    const gpuperf::OpenedTelemetry telemetry = gpuperf::open_nvml_telemetry(library);
    if (!telemetry) {
      if (json) {
        std::cout << nlohmann::json{{"available", false},
                                    {"unavailable_reason", telemetry.unavailable_reason}}
                         .dump(2)
                  << "\n";
      } else {
        std::cout << "telemetry unavailable: " << telemetry.unavailable_reason << "\n";
      }
      return 0;
    }
    gpuperf::TelemetrySystem& system = *telemetry.system;

    if (sample_option->count() > 0) {
      // One sampler per GPU, all running at once, as they would beside a multi-GPU run.
      std::vector<std::unique_ptr<gpuperf::TelemetrySampler>> samplers;
      for (std::size_t i = 0; i < system.device_count(); ++i) {
        samplers.push_back(
            std::make_unique<gpuperf::TelemetrySampler>(system.device(i), sampler_options));
      }
      for (auto& sampler : samplers) sampler->start();
      std::this_thread::sleep_for(seconds(sample_seconds));
      nlohmann::json summaries = nlohmann::json::array();
      for (std::size_t i = 0; i < samplers.size(); ++i) {
        const gpuperf::TelemetrySummary summary = samplers[i]->stop();
        if (json) {
          summaries.push_back({{"index", i},
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
                               {"warnings", summary.warnings}});
        } else {
          std::cout << "GPU " << i << "\n";
          gpuperf::write_telemetry_summary(std::cout, summary);
        }
      }
      // nlohmann writes NaN as null, which is what "not available" means here.
      if (json) std::cout << nlohmann::json{{"summaries", summaries}}.dump(2) << "\n";
      return 0;
    }

    if (watch_option->count() == 0) {
      const gpuperf::SystemSnapshot snapshot = gpuperf::take_snapshot(system, !no_processes);
      if (json) {
        std::cout << gpuperf::snapshot_to_json(snapshot) << "\n";
      } else {
        gpuperf::write_snapshot_table(std::cout, snapshot);
      }
      return 0;
    }

    // Watch mode: refresh on a fixed schedule so the period does not drift with NVML's latency.
    auto next = std::chrono::steady_clock::now();
    for (long refresh = 0; count == 0 || refresh < count; ++refresh) {
      const gpuperf::SystemSnapshot snapshot =
          gpuperf::take_snapshot(system, !no_processes && json);
      if (json) {
        std::cout << gpuperf::snapshot_to_json(snapshot, -1) << "\n";
      } else {
        if (refresh % kHeaderEvery == 0) gpuperf::write_watch_header(std::cout);
        gpuperf::write_watch_rows(std::cout, snapshot, local_time_label());
      }
      std::cout.flush();
      if (count != 0 && refresh + 1 == count) break;
      next += seconds(watch_seconds);
      std::this_thread::sleep_until(next);
    }
    return 0;
  } catch (const gpuperf::ConfigError& e) {
    std::cerr << "gpu_info: " << e.what() << "\n";
    return gpuperf::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "gpu_info: " << e.what() << "\n";
    return 1;
  }
}
