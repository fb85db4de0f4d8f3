#pragma once
// What telemetry adds to a run record: power, energy, clocks, temperature and throttling over
// the measured window. Plain data, no NVML or torch types: RunRecord includes it.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gpuperf {

/// Telemetry over one measurement window. NaN means "not available" (written as JSON null).
struct TelemetrySummary {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  bool available = false;  ///< false when nothing was sampled (no NVML, CPU run, not started)
  std::string unavailable_reason;   ///< why, when !available
  std::int64_t sample_count = 0;    ///< telemetry samples taken, including window start and end
  double duration_seconds = kNaN;   ///< from the first to the last sample
  double processed_samples = kNaN;  ///< training samples processed in the window (from stop())

  double power_mean_watts = kNaN;  ///< arithmetic mean of the power readings
  double power_max_watts = kNaN;
  double energy_joules = kNaN;  ///< energy used in the window
  std::string energy_source;    ///< "energy counter", "integrated power", or "" when unknown
  double energy_per_sample_joules = kNaN;  ///< energy_joules / processed_samples
  double samples_per_joule = kNaN;         ///< processed_samples / energy_joules

  double sm_clock_mean_hz = kNaN;
  double sm_clock_min_hz = kNaN;
  double sm_clock_max_hz = kNaN;
  double temperature_max_celsius = kNaN;
  double gpu_utilization_mean_percent = kNaN;
  double memory_used_max_bytes = kNaN;

  std::uint64_t clock_event_reasons = 0;  ///< union of NVML clock-event reason bits seen
  std::vector<std::string> warnings;      ///< throttling, clock movement, failed readings
};

}  // namespace gpuperf
