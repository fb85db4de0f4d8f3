#pragma once
// An inference server model: open-loop Poisson arrivals, dynamic batching, one FIFO server.
// simulate_serving drives it with a function that says how long a batch of n requests takes: time
// is virtual, so a run of a million requests takes milliseconds and is exactly repeatable for a
// seed. run_serving executes the same policy in real time, running each batch for real.
//
// The model:
//   - Requests arrive open-loop (arrivals do not wait for responses) with exponential
//     inter-arrival times of mean 1/rate, drawn from std::mt19937_64 seeded with `seed`.
//   - One server, FIFO. When the server is free and a request is queued, a batch is dispatched at
//     the earliest of: (a) max_batch requests are queued; (b) the oldest queued request has waited
//     max_queue_delay. Batch = min(queued, max_batch) requests at that moment. With
//     max_queue_delay 0 the server takes whatever is queued as soon as it is free.
//   - The batch occupies the server for service(n) seconds; all its requests complete together.
//   - End-to-end latency of a request = completion - arrival (queueing + batching wait + service).
//
//   gpuperf::ServingOptions options;
//   options.rate = 500;  options.max_batch = 8;  options.max_queue_delay = 0.002;
//   auto result = gpuperf::simulate_serving([](std::int64_t n) { return 1e-3 + 2e-4 * n; },
//   options); std::cout << result.achieved_rate << " req/s, p99 " << result.latency.p99 << " s\n";

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gpuperf/timing/latency.h"

namespace gpuperf {

/// Seconds the server needs for one batch of `batch_size` requests (>= 1).
using BatchServiceFunction = std::function<double(std::int64_t batch_size)>;

/// Options of one simulated serving run.
struct ServingOptions {
  double rate = 100;              ///< offered load, requests per second (> 0)
  std::int64_t max_batch = 1;     ///< largest batch the server forms (>= 1)
  double max_queue_delay = 0;     ///< seconds the oldest request may wait for a fuller batch
  std::int64_t requests = 10000;  ///< requests in the run (>= 1)
  std::uint64_t seed = 1;         ///< seeds the arrival process
  /// Saturated when achieved throughput falls below the realised arrival rate by more than this
  /// fraction, or the offered rate exceeds the capacity max_batch / service(max_batch).
  double saturation_tolerance = 0.05;

  /// Throws ConfigError naming the first bad field and its value.
  void validate() const;
};

/// What one simulated run produced.
struct ServingResult {
  double offered_rate = 0;   ///< options.rate, requests/s
  double arrival_rate = 0;   ///< realised: (requests - 1) / (last arrival - first arrival)
  double achieved_rate = 0;  ///< requests / (last completion - first arrival)
  double capacity = 0;  ///< max_batch / service(max_batch): the most the server can do; 0 unknown
  LatencySummary latency;      ///< end-to-end, seconds
  double mean_wait = 0;        ///< mean seconds from arrival to dispatch (queueing + batching)
  double mean_service = 0;     ///< mean service seconds seen by a request
  double mean_batch_size = 0;  ///< requests / batches
  std::int64_t batches = 0;
  std::int64_t requests = 0;
  std::int64_t max_batch = 0;
  double max_queue_delay = 0;
  bool saturated = false;
  std::string saturation_reason;  ///< empty when the rate was sustained
};

/// Runs the model described in the file comment. Throws ConfigError for bad options and Error
/// when `service` returns a negative or non-finite time.
[[nodiscard]] ServingResult simulate_serving(const BatchServiceFunction& service,
                                             const ServingOptions& options);

/// Runs one batch of `batch_size` requests for real and returns once its results are ready (after
/// a device synchronisation, for a GPU).
using BatchExecutor = std::function<void(std::int64_t batch_size)>;

/// The time source of run_serving: seconds since an arbitrary origin and a wait until a time.
/// Programs use SteadyServingClock; tests inject a simulated clock, so that how busy the machine
/// is cannot change what they check.
class ServingClock {
 public:
  virtual ~ServingClock() = default;
  /// Seconds since the clock's origin; never decreases.
  [[nodiscard]] virtual double now() = 0;
  /// Returns once now() >= `seconds` (at once when that time has passed).
  virtual void wait_until(double seconds) = 0;
};

/// std::chrono::steady_clock from construction. Waits sleep until ~0.3 ms before the deadline,
/// then spin: sleeps overshoot by tens of microseconds, which would add to every latency at
/// sub-millisecond service times.
class SteadyServingClock final : public ServingClock {
 public:
  SteadyServingClock();
  [[nodiscard]] double now() override;
  void wait_until(double seconds) override;

 private:
  std::chrono::steady_clock::time_point origin_;
};

/// The policy of simulate_serving, executed in real time: arrivals are scheduled on `clock`
/// from the same seeded Poisson process (open loop: a late server does not delay later
/// arrivals, they queue), the server waits until a batch is due, runs `execute` and stamps the
/// completion when it returns. Latencies, waits and service times are measured, not modelled.
/// `capacity_service` (optional) gives a full batch's service time for the capacity figure and
/// the first saturation rule; without it only the queue-growth rule applies. Throws ConfigError
/// for bad options.
[[nodiscard]] ServingResult run_serving(const BatchExecutor& execute, const ServingOptions& options,
                                        const BatchServiceFunction& capacity_service,
                                        ServingClock& clock);

/// run_serving on a SteadyServingClock.
[[nodiscard]] ServingResult run_serving(const BatchExecutor& execute, const ServingOptions& options,
                                        const BatchServiceFunction& capacity_service = {});

/// Results of a sweep over offered rates.
struct ServingSweep {
  std::vector<ServingResult> points;  ///< in order of increasing rate, up to the first saturated
  bool reached_saturation = false;    ///< whether the last point is saturated
};

/// Simulates each rate (sorted ascending) with `base`'s other options and stops after the first
/// saturated rate: the latency-versus-throughput curve up to saturation.
[[nodiscard]] ServingSweep sweep_serving(const BatchServiceFunction& service,
                                         const ServingOptions& base, std::vector<double> rates);

/// run_serving for each rate (sorted ascending), stopping after the first saturated one. Each
/// rate runs max(100, rate x seconds_per_rate) requests, at most base.requests, so that slow
/// rates do not take minutes. `progress` (optional) is called with each rate's result.
[[nodiscard]] ServingSweep sweep_serving_measured(
    const BatchExecutor& execute, const ServingOptions& base, std::vector<double> rates,
    double seconds_per_rate, const BatchServiceFunction& capacity_service, ServingClock& clock,
    const std::function<void(const ServingResult&)>& progress = {});

/// sweep_serving_measured on a SteadyServingClock.
[[nodiscard]] ServingSweep sweep_serving_measured(
    const BatchExecutor& execute, const ServingOptions& base, std::vector<double> rates,
    double seconds_per_rate, const BatchServiceFunction& capacity_service = {});

/// A service function from measured (batch size -> seconds) points: linear interpolation between
/// them, the smallest measured time below the smallest batch size. Throws ConfigError when the
/// table is empty or holds a bad time; asking beyond the largest measured batch size throws
/// ConfigError (an extrapolated service time would be a guess, not a measurement).
[[nodiscard]] BatchServiceFunction interpolated_service_time(
    const std::map<std::int64_t, double>& measured_seconds);

}  // namespace gpuperf
