#pragma once
// A background thread that samples one GPU while a measurement runs. start() and stop() each
// take a sample themselves, so a window's energy covers exactly the time between them, whatever
// the period; the thread adds samples in between.
//
//   gpuperf::TelemetrySampler sampler(device);         // a TelemetryDevice from telemetry.h
//   sampler.start();
//   run_timed_windows();                              // e.g. 12,800 samples trained
//   gpuperf::TelemetrySummary t = sampler.stop(12800);
//   std::cout << t.samples_per_joule << " samples/J\n";
//   for (const auto& w : t.warnings) std::cout << "warning: " << w << "\n";

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/telemetry/telemetry.h"
#include "gpuperf/telemetry/telemetry_summary.h"

namespace gpuperf {

/// How often to sample and when to warn.
struct TelemetrySamplerOptions {
  double period_seconds = 0.1;  ///< time between samples, seconds (> 0)
  /// Warn when the SM clock's range in the window, (max - min) / max, exceeds this (0..1].
  double clock_change_warning_fraction = 0.1;

  /// Throws ConfigError naming the first bad field and its value.
  void validate() const;
};

/// One sample; absent readings stay empty.
struct TelemetrySample {
  double time_seconds = 0;  ///< since the window started (steady clock)
  std::optional<double> gpu_utilization_percent;
  std::optional<double> memory_utilization_percent;
  std::optional<double> memory_used_bytes;
  std::optional<double> power_watts;
  std::optional<double> sm_clock_mhz;
  std::optional<double> temperature_celsius;
  std::optional<std::uint64_t> clock_event_reasons;
  std::optional<std::uint64_t> total_energy_millijoules;
};

/// Reads one sample from `device` at `time_seconds`. Never throws: a reading that fails leaves
/// its field empty and adds the error to `errors` (once per distinct message).
[[nodiscard]] TelemetrySample read_telemetry_sample(const TelemetryDevice& device,
                                                    double time_seconds,
                                                    std::vector<std::string>& errors);

/// Summarizes a window of samples (in time order). `processed_samples` is the number of training
/// samples processed in the window (NaN when unknown); `errors` become warnings.
/// Energy: the total-energy counter difference between the first and last sample when both have
/// it and it never decreased; otherwise the trapezoid integral of the power readings.
[[nodiscard]] TelemetrySummary summarize_telemetry(const std::vector<TelemetrySample>& samples,
                                                   double processed_samples,
                                                   const TelemetrySamplerOptions& options = {},
                                                   const std::vector<std::string>& errors = {});

/// Samples a TelemetryDevice on a background thread between start() and stop().
/// start(), stop() and the getters may be called from any thread.
class TelemetrySampler {
 public:
  /// Samples `device` (which must outlive the sampler); validates `options`.
  explicit TelemetrySampler(TelemetryDevice& device, TelemetrySamplerOptions options = {});
  /// Stops a running window and discards it.
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Takes the first sample and starts the thread. Throws Error when already running.
  void start();
  /// Stops the thread, takes the last sample and summarizes the window; `processed_samples` is
  /// the number of training samples processed since start(). Throws Error when not running.
  TelemetrySummary stop(double processed_samples = TelemetrySummary::kNaN);
  /// True between start() and stop().
  [[nodiscard]] bool running() const;
  /// A copy of the samples of the running window, or of the last one after stop().
  [[nodiscard]] std::vector<TelemetrySample> samples() const;
  /// The options in use.
  [[nodiscard]] const TelemetrySamplerOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;

  void run();
  [[nodiscard]] double seconds_since_start(Clock::time_point now) const;

  TelemetryDevice& device_;
  const TelemetrySamplerOptions options_;
  const Clock::duration period_;

  // Serializes start() and stop() so that one never joins a thread the other is creating.
  std::mutex control_mutex_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  bool running_ = false;
  bool stop_requested_ = false;
  Clock::time_point window_start_{};
  std::vector<TelemetrySample> samples_;
  std::vector<std::string> errors_;
  std::thread thread_;
};

}  // namespace gpuperf
