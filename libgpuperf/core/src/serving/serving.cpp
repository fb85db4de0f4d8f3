#include "gpuperf/serving/serving.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
namespace {

// Exponential variates by inversion from 53 random bits: std::exponential_distribution's
// algorithm is left to the standard library, and a seed must give the same run everywhere.
double exponential(std::mt19937_64& rng, double rate) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
  return -std::log1p(-u) / rate;
}

double checked_service(const BatchServiceFunction& service, std::int64_t n) {
  const double s = service(n);
  if (!std::isfinite(s) || s < 0) {
    throw Error("serving: the service time of a batch of " + std::to_string(n) +
                " must be finite and >= 0 seconds, got " + format_number(s));
  }
  return s;
}

}  // namespace

void ServingOptions::validate() const {
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw ConfigError("ServingOptions::rate", "must be > 0 requests/s, got " + format_number(rate));
  }
  if (max_batch < 1) {
    throw ConfigError("ServingOptions::max_batch",
                      "must be >= 1, got " + std::to_string(max_batch));
  }
  if (!(max_queue_delay >= 0) || !std::isfinite(max_queue_delay)) {
    throw ConfigError("ServingOptions::max_queue_delay",
                      "must be >= 0 s, got " + format_number(max_queue_delay));
  }
  if (requests < 1) {
    throw ConfigError("ServingOptions::requests", "must be >= 1, got " + std::to_string(requests));
  }
  if (!(saturation_tolerance > 0 && saturation_tolerance < 1)) {
    throw ConfigError("saturation_tolerance: must be in (0, 1), got " +
                      format_number(saturation_tolerance));
  }
}

namespace {

// How the server's time passes: simulated (virtual time, service from a function) or measured
// (the steady clock, batches executed for real).
class ServerClock {
 public:
  virtual ~ServerClock() = default;
  /// The batch is due at `due` seconds: returns when it actually starts (>= due).
  virtual double start(double due) = 0;
  /// Runs a batch of `size` requests from `started`; returns its completion time.
  virtual double finish(std::int64_t size, double started) = 0;
};

class SimulatedClock final : public ServerClock {
 public:
  explicit SimulatedClock(const BatchServiceFunction& service) : service_(service) {}
  double start(double due) override { return due; }
  double finish(std::int64_t size, double started) override {
    return started + checked_service(service_, size);
  }

 private:
  const BatchServiceFunction& service_;
};

// Real time on a ServingClock, batches executed by `execute`.
class MeasuredClock final : public ServerClock {
 public:
  MeasuredClock(const BatchExecutor& execute, ServingClock& clock)
      : execute_(execute), clock_(clock) {}
  double start(double due) override {
    clock_.wait_until(due);
    return clock_.now();
  }
  double finish(std::int64_t size, double /*started*/) override {
    execute_(size);
    return clock_.now();
  }

 private:
  const BatchExecutor& execute_;
  ServingClock& clock_;
};

// Poisson arrival times (seconds from 0) of the run's requests.
std::vector<double> arrivals(const ServingOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::vector<double> arrival(static_cast<std::size_t>(options.requests));
  double t = 0;
  for (auto& a : arrival) {
    t += exponential(rng, options.rate);
    a = t;
  }
  return arrival;
}

// The server policy of the header comment, on `clock`. `capacity_service` is the service time
// of a full batch, for the capacity figure and the first saturation rule.
ServingResult serve(ServerClock& clock, const ServingOptions& options,
                    const std::vector<double>& arrival, double capacity_service) {
  const std::size_t n = arrival.size();
  const auto max_batch = static_cast<std::size_t>(options.max_batch);
  ServingResult out;
  out.offered_rate = options.rate;
  out.requests = options.requests;
  out.max_batch = options.max_batch;
  out.max_queue_delay = options.max_queue_delay;
  // 0: unknown (no full-batch service time given, or a zero one).
  out.capacity =
      capacity_service > 0 ? static_cast<double>(options.max_batch) / capacity_service : 0;
  LatencyRecorder latency;
  latency.reserve(n);
  double total_wait = 0;
  double total_service = 0;
  double free_at = arrival.front();
  std::size_t next = 0;  // oldest request not yet dispatched
  while (next < n) {
    // The batch leaves when it is full or its oldest request has waited long enough, and never
    // before the server is free.
    const std::size_t full_index = next + max_batch - 1;
    const double full_at =
        full_index < n ? arrival[full_index] : std::numeric_limits<double>::infinity();
    const double dispatch =
        clock.start(std::max(free_at, std::min(arrival[next] + options.max_queue_delay, full_at)));
    std::size_t end = next;
    while (end < n && end - next < max_batch && arrival[end] <= dispatch) ++end;
    const auto size = static_cast<std::int64_t>(end - next);
    const double done = clock.finish(size, dispatch);
    for (std::size_t i = next; i < end; ++i) {
      latency.add(done - arrival[i]);
      total_wait += dispatch - arrival[i];
      total_service += done - dispatch;
    }
    ++out.batches;
    free_at = done;
    next = end;
  }

  const double count = static_cast<double>(n);
  const double span = free_at - arrival.front();
  const double arrival_span = arrival.back() - arrival.front();
  out.arrival_rate = n > 1 && arrival_span > 0 ? (count - 1) / arrival_span : options.rate;
  out.achieved_rate = span > 0 ? count / span : std::numeric_limits<double>::infinity();
  out.latency = latency.summary();
  out.mean_wait = total_wait / count;
  out.mean_service = total_service / count;
  out.mean_batch_size = count / static_cast<double>(out.batches);
  // Two signs of an unsustainable rate: the arrivals outrun the server's best case, or the run
  // ended with a backlog that makes completions lag arrivals by more than the tolerance.
  const double tolerance = options.saturation_tolerance;
  if (out.capacity > 0 && options.rate > out.capacity * (1 + tolerance)) {
    out.saturated = true;
    out.saturation_reason = "offered " + format_number(options.rate) +
                            " req/s exceeds the capacity " + format_number(out.capacity) +
                            " req/s at batch " + std::to_string(options.max_batch);
  } else if (n > 1 && out.achieved_rate < out.arrival_rate * (1 - tolerance)) {
    out.saturated = true;
    out.saturation_reason = "achieved " + format_number(out.achieved_rate) + " req/s, more than " +
                            format_number(tolerance * 100) + "% below the arrival rate " +
                            format_number(out.arrival_rate) + " req/s: the queue grows";
  }
  return out;
}
}  // namespace

ServingResult simulate_serving(const BatchServiceFunction& service, const ServingOptions& options) {
  options.validate();
  if (!service) throw ConfigError("serving: the service function is empty");
  SimulatedClock clock(service);
  return serve(clock, options, arrivals(options), checked_service(service, options.max_batch));
}

SteadyServingClock::SteadyServingClock() : origin_(std::chrono::steady_clock::now()) {}

double SteadyServingClock::now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void SteadyServingClock::wait_until(double seconds) {
  // NOLINTNEXTLINE(clang-analyzer-security.FloatLoopCounter): a clock reading, not a counter
  for (double t = now(); t < seconds; t = now()) {
    if (seconds - t > 5e-4) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds - t - 3e-4));
    }
  }
}

ServingResult run_serving(const BatchExecutor& execute, const ServingOptions& options,
                          const BatchServiceFunction& capacity_service, ServingClock& clock) {
  options.validate();
  if (!execute) throw ConfigError("serving: the batch executor is empty");
  const double full = capacity_service ? checked_service(capacity_service, options.max_batch) : 0;
  // Arrival times count from the start of the run on the caller's clock.
  MeasuredClock server(execute, clock);
  auto arrival = arrivals(options);
  const double origin = clock.now();
  for (auto& a : arrival) a += origin;
  return serve(server, options, arrival, full);
}

ServingResult run_serving(const BatchExecutor& execute, const ServingOptions& options,
                          const BatchServiceFunction& capacity_service) {
  SteadyServingClock clock;
  return run_serving(execute, options, capacity_service, clock);
}

ServingSweep sweep_serving(const BatchServiceFunction& service, const ServingOptions& base,
                           std::vector<double> rates) {
  if (rates.empty()) throw ConfigError("serve_rates", "no rates given");
  std::sort(rates.begin(), rates.end());
  ServingSweep sweep;
  for (double rate : rates) {
    ServingOptions options = base;
    options.rate = rate;
    sweep.points.push_back(simulate_serving(service, options));
    if (sweep.points.back().saturated) {
      sweep.reached_saturation = true;
      break;
    }
  }
  return sweep;
}

ServingSweep sweep_serving_measured(const BatchExecutor& execute, const ServingOptions& base,
                                    std::vector<double> rates, double seconds_per_rate,
                                    const BatchServiceFunction& capacity_service,
                                    ServingClock& clock,
                                    const std::function<void(const ServingResult&)>& progress) {
  if (rates.empty()) throw ConfigError("serve_rates", "no rates given");
  if (!(seconds_per_rate > 0) || !std::isfinite(seconds_per_rate)) {
    throw ConfigError("serve_seconds", "must be > 0, got " + format_number(seconds_per_rate));
  }
  std::sort(rates.begin(), rates.end());
  ServingSweep sweep;
  for (double rate : rates) {
    ServingOptions options = base;
    options.rate = rate;
    const double wanted = std::max(100.0, std::ceil(rate * seconds_per_rate));
    options.requests = std::min(base.requests, static_cast<std::int64_t>(wanted));
    sweep.points.push_back(run_serving(execute, options, capacity_service, clock));
    if (progress) progress(sweep.points.back());
    if (sweep.points.back().saturated) {
      sweep.reached_saturation = true;
      break;
    }
  }
  return sweep;
}

ServingSweep sweep_serving_measured(const BatchExecutor& execute, const ServingOptions& base,
                                    std::vector<double> rates, double seconds_per_rate,
                                    const BatchServiceFunction& capacity_service) {
  SteadyServingClock clock;
  return sweep_serving_measured(execute, base, std::move(rates), seconds_per_rate, capacity_service,
                                clock);
}

BatchServiceFunction interpolated_service_time(
    const std::map<std::int64_t, double>& measured_seconds) {
  if (measured_seconds.empty()) throw ConfigError("serving: no measured service times");
  for (const auto& [batch, seconds] : measured_seconds) {
    if (batch < 1 || !std::isfinite(seconds) || seconds < 0) {
      throw ConfigError("serving: bad measured service time " + format_number(seconds) +
                        " s for batch " + std::to_string(batch));
    }
  }
  return [table = measured_seconds](std::int64_t n) {
    const auto largest = table.rbegin()->first;
    if (n > largest) {
      throw ConfigError("serve_max_batch", std::to_string(n) +
                                               " exceeds the largest measured batch size " +
                                               std::to_string(largest));
    }
    const auto above = table.lower_bound(n);
    if (above->first == n || above == table.begin()) return above->second;
    const auto below = std::prev(above);
    const double fraction =
        static_cast<double>(n - below->first) / static_cast<double>(above->first - below->first);
    return below->second + fraction * (above->second - below->second);
  };
}

}  // namespace gpuperf
