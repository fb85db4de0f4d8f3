// The background sampler and the arithmetic that turns samples into a TelemetrySummary.
#include "gpuperf/telemetry/sampler.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>
#include <utility>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/base/log.h"
#include "gpuperf/telemetry/clock_events.h"

namespace gpuperf {
namespace {

// Runs one reading; a failure becomes an empty field and an error message (each message once).
template <typename Read>
auto guarded(Read&& read, std::vector<std::string>& errors) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception& e) {
    const std::string message = e.what();
    if (std::find(errors.begin(), errors.end(), message) == errors.end()) {
      errors.push_back(message);
    }
    return {};
  }
}

std::string percent_text(double fraction) {
  return format_percent(fraction, fraction < 0.1 ? 2 : 3);
}

struct Stats {
  std::size_t count = 0;
  double sum = 0;
  double min = TelemetrySummary::kNaN;
  double max = TelemetrySummary::kNaN;

  void add(double value) {
    if (!std::isfinite(value)) return;
    min = count == 0 ? value : std::min(min, value);
    max = count == 0 ? value : std::max(max, value);
    sum += value;
    ++count;
  }
  [[nodiscard]] double mean() const {
    return count == 0 ? TelemetrySummary::kNaN : sum / static_cast<double>(count);
  }
};

// Energy from the total-energy counter: the difference between the first and last sample, only
// when both have it and it never went down in between (a decrease means the driver reset it).
// Returns NaN otherwise; sets `reset` when a decrease was seen.
double counter_energy_joules(const std::vector<TelemetrySample>& samples, bool& reset) {
  reset = false;
  if (samples.empty() || !samples.front().total_energy_millijoules ||
      !samples.back().total_energy_millijoules) {
    return TelemetrySummary::kNaN;
  }
  std::optional<std::uint64_t> previous;
  for (const TelemetrySample& s : samples) {
    if (!s.total_energy_millijoules) continue;
    if (previous && *s.total_energy_millijoules < *previous) reset = true;
    previous = s.total_energy_millijoules;
  }
  if (reset) return TelemetrySummary::kNaN;
  const std::uint64_t millijoules =
      *samples.back().total_energy_millijoules - *samples.front().total_energy_millijoules;
  return static_cast<double>(millijoules) / 1000.0;
}

// Trapezoid integral of power over time, bridging samples whose power reading is missing.
// NaN with fewer than two power readings.
double integrated_energy_joules(const std::vector<TelemetrySample>& samples) {
  const TelemetrySample* previous = nullptr;
  double joules = 0;
  int readings = 0;
  for (const TelemetrySample& s : samples) {
    if (!s.power_watts) continue;
    ++readings;
    if (previous != nullptr) {
      joules += 0.5 * (*previous->power_watts + *s.power_watts) *
                (s.time_seconds - previous->time_seconds);
    }
    previous = &s;
  }
  return readings >= 2 ? joules : TelemetrySummary::kNaN;
}

// Samples whose clock-event reasons include each throttling cause, of those that had reasons.
struct ThrottleCounts {
  std::size_t thermal = 0, power_cap = 0, hardware = 0, with_reasons = 0;
};

// Energy from the counter when it is consistent, else integrated from the power readings, and
// per processed sample when that count is known.
void add_energy(TelemetrySummary& t, const std::vector<TelemetrySample>& samples,
                double processed_samples) {
  bool counter_reset = false;
  t.energy_joules = counter_energy_joules(samples, counter_reset);
  if (std::isfinite(t.energy_joules)) {
    t.energy_source = "energy counter";
  } else {
    t.energy_joules = integrated_energy_joules(samples);
    if (std::isfinite(t.energy_joules)) t.energy_source = "integrated power";
    if (counter_reset) {
      t.warnings.push_back("the energy counter went backwards (driver reset?); energy " +
                           std::string(std::isfinite(t.energy_joules)
                                           ? "integrated from power readings instead"
                                           : "unknown"));
    }
  }
  if (std::isfinite(t.energy_joules) && std::isfinite(processed_samples) && processed_samples > 0) {
    t.energy_per_sample_joules = t.energy_joules / processed_samples;
    if (t.energy_joules > 0) t.samples_per_joule = processed_samples / t.energy_joules;
  }
}

// Warnings for throttling, and for an SM clock that moved during measurement by more than the
// options allow.
void add_clock_warnings(TelemetrySummary& t, const ThrottleCounts& c, const Stats& clock,
                        const TelemetrySamplerOptions& options) {
  const auto share = [&](std::size_t n) {
    return " (" + std::to_string(n) + " of " + std::to_string(c.with_reasons) + " samples: " +
           describe_clock_event_reasons(t.clock_event_reasons & clock_event::kThrottling, ", ") +
           ")";
  };
  if (c.thermal > 0) {
    t.warnings.push_back("thermal throttling during measurement" + share(c.thermal));
  }
  if (c.power_cap > 0) {
    t.warnings.push_back("power-cap throttling during measurement" + share(c.power_cap));
  }
  if (c.hardware > 0) {
    t.warnings.push_back("hardware slowdown during measurement" + share(c.hardware));
  }
  if (clock.count >= 2 && clock.max > 0) {
    const double moved = (clock.max - clock.min) / clock.max;
    if (moved > options.clock_change_warning_fraction) {
      std::ostringstream out;
      out << "SM clock moved by more than " << percent_text(options.clock_change_warning_fraction)
          << " during measurement (" << clock.min << " to " << clock.max << " MHz, "
          << percent_text(moved) << ")";
      t.warnings.push_back(out.str());
    }
  }
}

}  // namespace

void TelemetrySamplerOptions::validate() const {
  if (!(period_seconds > 0) || !std::isfinite(period_seconds)) {
    throw ConfigError(
        "TelemetrySamplerOptions.period_seconds must be a positive number of "
        "seconds, got " +
        std::to_string(period_seconds));
  }
  if (!(clock_change_warning_fraction > 0 && clock_change_warning_fraction <= 1)) {
    throw ConfigError(
        "TelemetrySamplerOptions.clock_change_warning_fraction must be in (0, 1], "
        "got " +
        std::to_string(clock_change_warning_fraction));
  }
}

TelemetrySample read_telemetry_sample(const TelemetryDevice& device, double time_seconds,
                                      std::vector<std::string>& errors) {
  TelemetrySample s;
  s.time_seconds = time_seconds;
  if (const auto u = guarded([&] { return device.utilization(); }, errors)) {
    s.gpu_utilization_percent = u->gpu_percent;
    s.memory_utilization_percent = u->memory_percent;
  }
  if (const auto m = guarded([&] { return device.memory(); }, errors)) {
    s.memory_used_bytes = m->used_bytes;
  }
  s.power_watts = guarded([&] { return device.power_watts(); }, errors);
  s.sm_clock_mhz = guarded([&] { return device.clock_mhz(ClockDomain::kSm); }, errors);
  s.temperature_celsius = guarded([&] { return device.temperature_celsius(); }, errors);
  s.clock_event_reasons = guarded([&] { return device.clock_event_reasons(); }, errors);
  s.total_energy_millijoules = guarded([&] { return device.total_energy_millijoules(); }, errors);
  return s;
}

TelemetrySummary summarize_telemetry(const std::vector<TelemetrySample>& samples,
                                     double processed_samples,
                                     const TelemetrySamplerOptions& options,
                                     const std::vector<std::string>& errors) {
  options.validate();
  TelemetrySummary t;
  t.processed_samples = processed_samples;
  if (samples.empty()) {
    t.unavailable_reason = "no telemetry samples were taken";
    return t;
  }
  t.available = true;
  t.sample_count = static_cast<std::int64_t>(samples.size());
  t.duration_seconds = samples.back().time_seconds - samples.front().time_seconds;

  Stats power;
  Stats clock;
  Stats temperature;
  Stats utilization;
  Stats memory;
  ThrottleCounts throttled;
  for (const TelemetrySample& s : samples) {
    if (s.power_watts) power.add(*s.power_watts);
    if (s.sm_clock_mhz) clock.add(*s.sm_clock_mhz);
    if (s.temperature_celsius) temperature.add(*s.temperature_celsius);
    if (s.gpu_utilization_percent) utilization.add(*s.gpu_utilization_percent);
    if (s.memory_used_bytes) memory.add(*s.memory_used_bytes);
    if (s.clock_event_reasons) {
      const std::uint64_t bits = *s.clock_event_reasons;
      ++throttled.with_reasons;
      t.clock_event_reasons |= bits;
      if ((bits & clock_event::kThermal) != 0) ++throttled.thermal;
      if ((bits & clock_event::kPowerCap) != 0) ++throttled.power_cap;
      if ((bits & clock_event::kHardware) != 0) ++throttled.hardware;
    }
  }
  t.power_mean_watts = power.mean();
  t.power_max_watts = power.max;
  t.sm_clock_mean_hz = clock.mean() * 1e6;
  t.sm_clock_min_hz = clock.min * 1e6;
  t.sm_clock_max_hz = clock.max * 1e6;
  t.temperature_max_celsius = temperature.max;
  t.gpu_utilization_mean_percent = utilization.mean();
  t.memory_used_max_bytes = memory.max;

  add_energy(t, samples, processed_samples);
  add_clock_warnings(t, throttled, clock, options);
  for (const std::string& error : errors)
    t.warnings.push_back("telemetry reading failed: " + error);
  return t;
}

TelemetrySampler::TelemetrySampler(TelemetryDevice& device, TelemetrySamplerOptions options)
    : device_(device),
      options_((options.validate(), options)),
      period_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options.period_seconds))) {}

TelemetrySampler::~TelemetrySampler() {
  std::lock_guard<std::mutex> control(control_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_) return;
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double TelemetrySampler::seconds_since_start(Clock::time_point now) const {
  return std::chrono::duration<double>(now - window_start_).count();
}

void TelemetrySampler::start() {
  std::lock_guard<std::mutex> control(control_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_) throw Error("TelemetrySampler::start: already running");
  }
  // The thread is not running here, so the first sample is read without the lock held.
  const Clock::time_point start = Clock::now();
  std::vector<std::string> errors;
  TelemetrySample first = read_telemetry_sample(device_, 0.0, errors);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    window_start_ = start;
    samples_.clear();
    samples_.push_back(first);
    errors_ = std::move(errors);
    stop_requested_ = false;
    running_ = true;
  }
  try {
    thread_ = std::thread(&TelemetrySampler::run, this);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    throw;
  }
}

TelemetrySummary TelemetrySampler::stop(double processed_samples) {
  std::lock_guard<std::mutex> control(control_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_) throw Error("TelemetrySampler::stop: not running");
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
  // The last sample marks the end of the window, so the energy covers start() to stop().
  std::vector<std::string> errors;
  TelemetrySample last = read_telemetry_sample(device_, seconds_since_start(Clock::now()), errors);
  std::vector<TelemetrySample> samples;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.push_back(last);
    for (std::string& e : errors) {
      if (std::find(errors_.begin(), errors_.end(), e) == errors_.end()) {
        errors_.push_back(std::move(e));
      }
    }
    running_ = false;
    samples = samples_;
    errors = errors_;
  }
  return summarize_telemetry(samples, processed_samples, options_, errors);
}

bool TelemetrySampler::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

std::vector<TelemetrySample> TelemetrySampler::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

void TelemetrySampler::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point next = window_start_ + period_;
  while (!wake_.wait_until(lock, next, [this] { return stop_requested_; })) {
    const double at = seconds_since_start(Clock::now());
    std::vector<std::string> errors;
    // Reading takes NVML calls (around a millisecond): do it without holding the lock so that
    // stop() and the getters never wait on the device.
    lock.unlock();
    TelemetrySample sample = read_telemetry_sample(device_, at, errors);
    lock.lock();
    samples_.push_back(sample);
    for (std::string& e : errors) {
      if (std::find(errors_.begin(), errors_.end(), e) == errors_.end()) {
        errors_.push_back(std::move(e));
      }
    }
    // A fixed schedule keeps the period from drifting; after a stall, skip the missed ticks
    // rather than sample in a burst.
    next += period_;
    const Clock::time_point now = Clock::now();
    if (next <= now) next = now + period_;
  }
}

}  // namespace gpuperf
