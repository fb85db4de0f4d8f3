// The serving module: the queueing simulation against theory (M/D/1, saturation, batching) and
// executed serving on a simulated and on the steady clock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/serving/serving.h"

namespace {

gpuperf::BatchServiceFunction constant_service(double seconds) {
  return [seconds](std::int64_t) { return seconds; };
}

// An executor that takes `seconds` of wall time per batch (spinning, as a device sync would
// block) and records the batch sizes it was given.
struct BusyExecutor {
  double seconds;
  std::vector<std::int64_t> sizes;
  void operator()(std::int64_t n) {
    sizes.push_back(n);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
};

// A ServingClock in simulated time: a wait jumps to its deadline plus a fixed wake-up delay, and
// SimulatedExecutor advances the time by a batch's service time. run_serving's outcome then
// depends on the policy alone, never on how busy the machine is.
struct SimulatedServingClock final : gpuperf::ServingClock {
  double t = 0;
  double wake_delay = 0;
  double now() override { return t; }
  void wait_until(double seconds) override {
    if (t < seconds) t = seconds + wake_delay;
  }
};

struct SimulatedExecutor {
  SimulatedServingClock& clock;
  gpuperf::BatchServiceFunction service;
  std::vector<std::int64_t> sizes;
  void operator()(std::int64_t n) {
    sizes.push_back(n);
    clock.t += service(n);
  }
};

}  // namespace

TEST_CASE(
    "At a low rate with constant service the latency is the service time and batches hold one "
    "request",
    "[infer]") {
  gpuperf::ServingOptions options;
  options.rate = 10;  // mean gap 100 ms against 1 ms of service: queueing is rare
  options.max_batch = 8;
  options.max_queue_delay = 0;
  options.requests = 2000;
  const auto r = gpuperf::simulate_serving(constant_service(1e-3), options);
  CHECK_FALSE(r.saturated);
  CHECK(r.latency.p50 == Approx(1e-3));
  CHECK(r.latency.min == Approx(1e-3));
  CHECK(r.mean_batch_size == Approx(1.0).epsilon(0.01));
  CHECK(r.achieved_rate == Approx(r.arrival_rate).epsilon(0.01));
  CHECK(r.capacity == Approx(8000));
}

TEST_CASE("A lone request waits the full queue delay for companions that do not come", "[infer]") {
  gpuperf::ServingOptions options;
  options.rate = 1;  // gaps of about a second against a 5 ms delay
  options.max_batch = 4;
  options.max_queue_delay = 5e-3;
  options.requests = 500;
  const auto r = gpuperf::simulate_serving(constant_service(2e-3), options);
  CHECK(r.latency.p50 == Approx(7e-3));
  CHECK(r.mean_wait == Approx(5e-3).epsilon(0.05));
  CHECK(r.mean_batch_size < 1.02);
}

TEST_CASE("A rate far above capacity is reported as saturated", "[infer]") {
  gpuperf::ServingOptions options;
  options.rate = 10000;  // capacity: 4 requests per 2 ms = 2000 req/s
  options.max_batch = 4;
  options.requests = 5000;
  const auto r = gpuperf::simulate_serving(constant_service(2e-3), options);
  CHECK(r.saturated);
  CHECK_THAT(r.saturation_reason, Catch::Contains("capacity"));
  CHECK(r.achieved_rate == Approx(2000).epsilon(0.01));
  CHECK(r.mean_batch_size == Approx(4).epsilon(0.01));
}

TEST_CASE("Batches grow toward max batch as the load rises", "[infer]") {
  gpuperf::ServingOptions options;
  options.max_batch = 16;
  options.requests = 20000;
  // Service 1 ms + 0.1 ms per request: capacity at batch 16 is 16 / 2.6 ms = 6154 req/s.
  const gpuperf::BatchServiceFunction service = [](std::int64_t n) { return 1e-3 + 1e-4 * n; };
  const auto sweep = gpuperf::sweep_serving(service, options, {4000, 100, 1000, 20000, 50000});
  REQUIRE(sweep.points.size() == 4);  // stops at 20000, the first saturated rate
  CHECK(sweep.reached_saturation);
  CHECK(sweep.points[0].offered_rate == 100);
  CHECK_FALSE(sweep.points[2].saturated);
  CHECK(sweep.points[3].saturated);
  CHECK(sweep.points[0].mean_batch_size < sweep.points[1].mean_batch_size);
  CHECK(sweep.points[1].mean_batch_size < sweep.points[2].mean_batch_size);
  CHECK(sweep.points[2].achieved_rate == Approx(4000).epsilon(0.05));
}

TEST_CASE("M/D/1 mean waiting time matches Pollaczek-Khinchine", "[infer]") {
  const double service = 1e-3;  // mu = 1000 req/s
  for (double rho : {0.3, 0.5, 0.7}) {
    gpuperf::ServingOptions options;
    options.rate = rho / service;
    options.max_batch = 1;
    options.requests = 400000;
    options.seed = 42;
    const auto r = gpuperf::simulate_serving(constant_service(service), options);
    const double mu = 1 / service;
    const double expected_wait = rho / (2 * mu * (1 - rho));
    INFO("rho " << rho << ": simulated wait " << r.mean_wait << " s, P-K " << expected_wait
                << " s");
    CHECK_FALSE(r.saturated);
    CHECK(r.mean_wait == Approx(expected_wait).epsilon(0.03));
    CHECK(r.latency.mean == Approx(expected_wait + service).epsilon(0.03));
    CHECK(r.mean_batch_size == 1);
  }
}

TEST_CASE("A fixed seed gives the same run and another seed a different one", "[infer]") {
  gpuperf::ServingOptions options;
  options.rate = 800;
  options.max_batch = 4;
  options.max_queue_delay = 1e-3;
  options.requests = 3000;
  const gpuperf::BatchServiceFunction service = [](std::int64_t n) { return 5e-4 + 2e-4 * n; };
  const auto a = gpuperf::simulate_serving(service, options);
  const auto b = gpuperf::simulate_serving(service, options);
  CHECK(a.latency.p99 == b.latency.p99);
  CHECK(a.latency.mean == b.latency.mean);
  CHECK(a.batches == b.batches);
  options.seed = 2;
  const auto c = gpuperf::simulate_serving(service, options);
  CHECK(a.latency.mean != c.latency.mean);
}

TEST_CASE("Executed serving on a simulated clock follows the modelled policy exactly",
          "[infer][serving]") {
  // Batches form (600 req/s against 0.5 ms + 0.2 ms per request, up to 4, 1 ms delay): the
  // executed path must dispatch, batch and stamp exactly as the model does.
  SimulatedServingClock clock;
  clock.t = 12.5;  // arrivals count from the clock's time at the start of the run
  const gpuperf::BatchServiceFunction service = [](std::int64_t n) { return 5e-4 + 2e-4 * n; };
  SimulatedExecutor executor{clock, service, {}};
  gpuperf::ServingOptions options;
  options.rate = 600;
  options.requests = 2000;
  options.max_batch = 4;
  options.max_queue_delay = 1e-3;
  const auto executed =
      gpuperf::run_serving([&](std::int64_t n) { executor(n); }, options, service, clock);
  const auto modelled = gpuperf::simulate_serving(service, options);
  CHECK(executed.batches == modelled.batches);
  CHECK(static_cast<std::int64_t>(executor.sizes.size()) == modelled.batches);
  CHECK(std::accumulate(executor.sizes.begin(), executor.sizes.end(), std::int64_t{0}) == 2000);
  CHECK(executed.mean_batch_size == Approx(modelled.mean_batch_size));
  CHECK(modelled.mean_batch_size > 1.2);  // the case exercises batching
  CHECK(executed.latency.p50 == Approx(modelled.latency.p50).epsilon(1e-9));
  CHECK(executed.latency.p99 == Approx(modelled.latency.p99).epsilon(1e-9));
  CHECK(executed.mean_wait == Approx(modelled.mean_wait).epsilon(1e-9));
  CHECK(executed.capacity == Approx(modelled.capacity));
  CHECK(executed.saturated == modelled.saturated);
}

TEST_CASE("Executed serving at light load measures the service time plus the wake-up delay",
          "[infer][serving]") {
  // 2 ms per batch, 40 req/s (load 0.08), one request per batch: a request that finds the server
  // idle waits only for the clock's wake-up (50 us here), so the median latency is the modelled
  // service time plus that delay.
  SimulatedServingClock clock;
  clock.wake_delay = 5e-5;
  SimulatedExecutor executor{clock, constant_service(2e-3), {}};
  gpuperf::ServingOptions options;
  options.rate = 40;
  options.requests = 60;
  options.seed = 9;
  const auto measured = gpuperf::run_serving([&](std::int64_t n) { executor(n); }, options,
                                             constant_service(2e-3), clock);
  const auto modelled = gpuperf::simulate_serving(constant_service(2e-3), options);
  REQUIRE(executor.sizes.size() == 60);
  CHECK(measured.requests == 60);
  CHECK_FALSE(measured.saturated);
  CHECK(measured.latency.min >= 2e-3);  // never faster than the work itself
  CHECK(modelled.latency.p50 == Approx(2e-3));
  CHECK(measured.latency.p50 == Approx(2e-3 + 5e-5).epsilon(1e-9));
  CHECK(measured.mean_service == Approx(2e-3));
  CHECK(measured.capacity == Approx(500));
}

TEST_CASE("Executed serving batches up to max batch and serves every request once",
          "[infer][serving]") {
  SimulatedServingClock clock;
  clock.wake_delay = 2e-5;
  SimulatedExecutor executor{clock, constant_service(3e-3), {}};
  gpuperf::ServingOptions options;
  options.rate = 600;  // faster than one request per 3 ms: batches must form
  options.requests = 300;
  options.max_batch = 4;
  options.max_queue_delay = 2e-3;
  const auto result =
      gpuperf::run_serving([&](std::int64_t n) { executor(n); }, options, {}, clock);
  CHECK(std::accumulate(executor.sizes.begin(), executor.sizes.end(), std::int64_t{0}) == 300);
  CHECK(*std::max_element(executor.sizes.begin(), executor.sizes.end()) == 4);
  CHECK(result.batches == static_cast<std::int64_t>(executor.sizes.size()));
  CHECK(result.mean_batch_size > 1.5);
  CHECK(result.latency.min >= 3e-3);
  // Capacity 4 / 3 ms = 1333 req/s: 600 req/s is sustained.
  CHECK_FALSE(result.saturated);
}

TEST_CASE("Executed serving beyond capacity reports the growing queue", "[infer][serving]") {
  SimulatedServingClock clock;
  SimulatedExecutor executor{clock, constant_service(4e-3), {}};
  gpuperf::ServingOptions options;
  options.rate = 1000;  // four times the 250 req/s one-at-a-time capacity
  options.requests = 120;
  const auto sweep =
      gpuperf::sweep_serving_measured([&](std::int64_t n) { executor(n); }, options, {1000, 50},
                                      /*seconds_per_rate=*/0.1, {}, clock);
  REQUIRE(sweep.points.size() == 2);  // 50 req/s first, then 1000
  CHECK(sweep.points[0].offered_rate == 50);
  CHECK(sweep.points[0].requests == 100);  // max(100, 50 x 0.1 s), capped at 120
  CHECK_FALSE(sweep.points[0].saturated);
  CHECK(sweep.points[1].requests == 100);
  CHECK(sweep.points[1].saturated);
  CHECK_THAT(sweep.points[1].saturation_reason, Catch::Contains("queue grows"));
  CHECK(sweep.reached_saturation);
  CHECK_THROWS_AS(gpuperf::sweep_serving_measured([](std::int64_t) {}, options, {10}, 0),
                  gpuperf::ConfigError);
}

TEST_CASE("Executed serving on the steady clock runs every batch for real", "[infer][serving]") {
  // The one real-time check: only what holds however busy the machine is (every request served
  // once, none faster than the work, the wall clock moved forward).
  BusyExecutor executor{1e-3, {}};
  gpuperf::ServingOptions options;
  options.rate = 200;
  options.requests = 40;
  options.max_batch = 4;
  const auto result = gpuperf::run_serving([&](std::int64_t n) { executor(n); }, options);
  CHECK(std::accumulate(executor.sizes.begin(), executor.sizes.end(), std::int64_t{0}) == 40);
  CHECK(result.batches == static_cast<std::int64_t>(executor.sizes.size()));
  CHECK(result.latency.min >= 1e-3);
  CHECK(result.mean_service >= 1e-3);
  CHECK(std::isfinite(result.latency.p99));
}

TEST_CASE("Serving options name the bad option and value", "[infer]") {
  gpuperf::ServingOptions options;
  options.rate = -3;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("ServingOptions::rate: ") && Catch::Contains("-3"));
  options = {};
  options.max_batch = 0;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("ServingOptions::max_batch: ") && Catch::Contains("0"));
  options = {};
  options.max_queue_delay = -0.001;
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("ServingOptions::max_queue_delay: "));
  options = {};
  options.requests = 0;
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("ServingOptions::requests: "));
  CHECK_THROWS_AS(gpuperf::simulate_serving([](std::int64_t) { return -1.0; }, {}), gpuperf::Error);
}

TEST_CASE("Measured service times interpolate between batch sizes and refuse to extrapolate",
          "[infer]") {
  const auto service = gpuperf::interpolated_service_time({{1, 1e-3}, {8, 1.7e-3}, {64, 5e-3}});
  CHECK(service(1) == Approx(1e-3));
  CHECK(service(4) == Approx(1e-3 + 3.0 / 7.0 * 0.7e-3));
  CHECK(service(8) == Approx(1.7e-3));
  CHECK(service(36) == Approx(1.7e-3 + 0.5 * 3.3e-3));
  CHECK_THROWS_WITH(service(65), Catch::Contains("serve_max_batch: ") && Catch::Contains("65"));
  CHECK_THROWS_AS(gpuperf::interpolated_service_time({}), gpuperf::ConfigError);
  const auto from_eight = gpuperf::interpolated_service_time({{8, 2e-3}});
  CHECK(from_eight(1) == Approx(2e-3));
}
