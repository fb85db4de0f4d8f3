#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/results/export.h"
#include "gpuperf/results/inference_result.h"
#include "gpuperf/timing/latency.h"
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

TEST_CASE("Latency percentiles interpolate between closest ranks like numpy", "[infer]") {
  // 1..10 ms: position q*(n-1); p90 -> 8.1 -> 9.1 ms, p95 -> 8.55 -> 9.55 ms, p99 -> 8.91 -> 9.91
  // ms.
  std::vector<double> ms;
  for (int i = 10; i >= 1; --i) ms.push_back(i * 1e-3);
  const auto s = gpuperf::summarize_latency(ms);
  CHECK(s.count == 10);
  CHECK(s.min == Approx(1e-3));
  CHECK(s.p50 == Approx(5.5e-3));
  CHECK(s.p90 == Approx(9.1e-3));
  CHECK(s.p95 == Approx(9.55e-3));
  CHECK(s.p99 == Approx(9.91e-3));
  CHECK(s.max == Approx(10e-3));
  CHECK(s.mean == Approx(5.5e-3));
  CHECK(s.tail_ratio() == Approx(9.91 / 5.5));
}

TEST_CASE("A single latency is every percentile and its tail ratio is one", "[infer]") {
  gpuperf::LatencyRecorder recorder;
  recorder.add(0.25);
  const auto s = recorder.summary();
  CHECK(s.p50 == 0.25);
  CHECK(s.p99 == 0.25);
  CHECK(s.max == 0.25);
  CHECK(s.tail_ratio() == 1.0);
}

TEST_CASE("The latency recorder refuses negative and non-finite samples and empty summaries",
          "[infer]") {
  gpuperf::LatencyRecorder recorder;
  CHECK_THROWS_AS(recorder.summary(), gpuperf::ConfigError);
  CHECK_THROWS_WITH(recorder.add(-1), Catch::Contains("-1"));
  CHECK_THROWS_AS(recorder.add(std::numeric_limits<double>::quiet_NaN()), gpuperf::ConfigError);
  CHECK(recorder.size() == 0);
}

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

TEST_CASE("An inference result has headline figures and JSON that marks serving as simulated",
          "[infer]") {
  gpuperf::InferenceResult result;
  result.model = "simple";
  for (auto [batch, p50] : {std::pair<std::int64_t, double>{1, 1e-3}, {8, 2e-3}, {64, 20e-3}}) {
    gpuperf::BatchSizeResult b;
    b.batch_size = batch;
    b.latency = gpuperf::summarize_latency({p50, p50, p50 * 1.1});
    b.throughput_median = static_cast<double>(batch) / b.latency.p50;
    result.batches.push_back(b);
  }
  const auto headline = gpuperf::inference_headline(result);
  CHECK(headline.has_batch1);
  CHECK(headline.batch1_p50 == Approx(1e-3));
  CHECK(headline.best_batch_size == 8);  // 4000/s beats 3200/s at 64
  CHECK(headline.best_throughput == Approx(4000));

  gpuperf::ServingOptions serving;
  serving.max_batch = 8;
  serving.requests = 500;
  result.serving_options = serving;
  result.serving = gpuperf::sweep_serving(
      gpuperf::interpolated_service_time({{1, 1e-3}, {8, 2e-3}}), serving, {100, 1e6});
  const auto j = nlohmann::json::parse(gpuperf::to_json(result));
  CHECK(j.at("schema") == "gpuperf.inference/3");
  CHECK(j.at("graph_mode") == "eager");
  CHECK_FALSE(j.contains("cuda_graph"));
  CHECK(j.at("batches").size() == 3);
  CHECK(j.at("headline").at("best_batch_size") == 8);
  CHECK(j.at("batches").at(0).at("latency").at("p50_s").get<double>() == Approx(1e-3));
  CHECK(j.at("serving").at("simulated") == true);
  CHECK(j.at("serving").at("points").size() == 2);
  CHECK(j.at("serving").at("reached_saturation") == true);

  std::ostringstream printed;
  gpuperf::write_text(printed, result);
  CHECK_THAT(printed.str(), Catch::Contains("Best throughput: 4000.0 samples/s at batch 8"));
  CHECK_THAT(printed.str(), Catch::Contains("SIMULATED"));

  result.batches.clear();
  CHECK_THROWS_AS(gpuperf::inference_headline(result), gpuperf::ConfigError);
}

TEST_CASE("An inference result reads back from its JSON with fingerprint and latencies",
          "[infer]") {
  gpuperf::InferenceResult result;
  result.model = "resnet50";
  result.device = "cuda:0";
  result.device_name = "NVIDIA H200";
  result.fingerprint.kind = "cuda";
  result.fingerprint.name = "NVIDIA H200";
  result.fingerprint.sm_count = 132;
  result.fingerprint.memory_bytes = 150e9;
  result.fingerprint.libtorch_version = "2.11.0";
  result.precision = "fp16";
  result.memory_format = "channels_last";
  result.cuda_graph = true;
  result.timer = "cuda-event";
  result.warmup = 2;
  result.iterations = 5;
  result.input_shape = {3, 224, 224};
  result.seed = 7;
  result.cudnn_benchmark = true;
  result.cudnn_benchmark_from_batch = 16;
  result.kernel_fusion = "conv+bias+relu";
  result.command = "inference_benchmark --model resnet50";
  gpuperf::BatchSizeResult b;
  b.batch_size = 4;
  b.latencies = {1e-3, 1.2e-3, 0.9e-3, 1.1e-3, 1e-3};
  b.latency = gpuperf::summarize_latency(b.latencies);
  b.iterations = 5;
  b.throughput_median = 4 / b.latency.p50;
  b.peak_memory_bytes = 123456789;
  result.batches.push_back(b);
  gpuperf::ServingOptions serving;
  serving.max_batch = 4;
  serving.requests = 200;
  result.serving_options = serving;
  result.serving =
      gpuperf::sweep_serving(gpuperf::interpolated_service_time({{4, 1e-3}}), serving, {100});

  const auto back = gpuperf::from_json<gpuperf::InferenceResult>(gpuperf::to_json(result));
  CHECK(back.model == "resnet50");
  CHECK(back.fingerprint.sm_count == 132);
  CHECK(back.fingerprint.memory_bytes == 150e9);
  CHECK(back.fingerprint.libtorch_version == "2.11.0");
  CHECK(back.input_shape == std::vector<std::int64_t>{3, 224, 224});
  CHECK(back.seed == 7);
  CHECK(back.cudnn_benchmark);
  CHECK(back.cudnn_benchmark_from_batch == 16);
  CHECK(back.cuda_graph);
  CHECK(back.kernel_fusion == "conv+bias+relu");
  REQUIRE(back.batches.size() == 1);
  CHECK(back.batches[0].latencies == b.latencies);
  CHECK(back.batches[0].latency.p50 == Approx(1e-3));
  CHECK(back.batches[0].latency.p99 == Approx(b.latency.p99));
  CHECK(back.batches[0].peak_memory_bytes == 123456789);
  REQUIRE(back.serving.points.size() == 1);
  CHECK(back.serving.points[0].offered_rate == 100);
  CHECK(back.serving_options.requests == 200);
  CHECK(back.device == "cuda:0");  // from the device object's kind and index
  CHECK(back.device_name == "NVIDIA H200");
  // What was read writes the same file again.
  CHECK(gpuperf::to_json(back) == gpuperf::to_json(result));

  // Version 1 files (the device as a string, the object under "fingerprint") still read.
  auto v1 = nlohmann::json::parse(gpuperf::to_json(result));
  v1["schema"] = "gpuperf.inference/1";
  v1.erase("graph_mode");
  v1["cuda_graph"] = true;
  v1["fingerprint"] = v1["device"];
  v1["device"] = "cuda:1";
  v1["device_name"] = "NVIDIA H200";
  const auto old = gpuperf::from_json<gpuperf::InferenceResult>(v1.dump());
  CHECK(old.device == "cuda:1");
  CHECK(old.cuda_graph);
  CHECK(old.fingerprint.sm_count == 132);
  CHECK(old.device_name == "NVIDIA H200");
  // Files written before the autotuning threshold was stored: cuDNN timed every batch size.
  auto before = nlohmann::json::parse(gpuperf::to_json(result));
  before.erase("cudnn_benchmark_from_batch");
  CHECK(gpuperf::from_json<gpuperf::InferenceResult>(before.dump()).cudnn_benchmark_from_batch ==
        1);
  // Files written before the peak memory was stored, and the CPU's null: not available.
  before["batches"][0].erase("peak_memory_bytes");
  CHECK(std::isnan(
      gpuperf::from_json<gpuperf::InferenceResult>(before.dump()).batches[0].peak_memory_bytes));
  before["batches"][0]["peak_memory_bytes"] = nullptr;
  CHECK(std::isnan(
      gpuperf::from_json<gpuperf::InferenceResult>(before.dump()).batches[0].peak_memory_bytes));
  std::ostringstream printed;
  gpuperf::write_text(printed, result);
  CHECK_THAT(printed.str(), Catch::Contains("| peak memory MiB |") && Catch::Contains("| 117.7 |"));
  // The CSV's last column: the batch size's peak, empty for the serving point.
  std::ostringstream csv;
  gpuperf::write_csv(csv, result);
  std::vector<std::string> lines;
  std::istringstream written(csv.str());
  for (std::string line; std::getline(written, line);) {
    lines.push_back(line.substr(0, line.find('\r')));  // rows end in CRLF (RFC 4180)
  }
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0], Catch::EndsWith(",saturated,peak_memory_bytes"));
  CHECK_THAT(lines[1],
             Catch::StartsWith(",resnet50,NVIDIA H200,fp16") && Catch::EndsWith(",123456789"));
  CHECK_THAT(lines[2], Catch::EndsWith(","));

  // Malformed files name the field.
  auto j = nlohmann::json::parse(gpuperf::to_json(result));
  j["batches"][0]["latency"]["p50_s"] = -1;
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(j.dump()),
                    Catch::Contains("inference result: field 'batches[0].latency.p50_s'"));
  j = nlohmann::json::parse(gpuperf::to_json(result));
  j["cudnn_benchmark_from_batch"] = 0;
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(j.dump()),
                    Catch::Contains("'cudnn_benchmark_from_batch' is 0"));
  j = nlohmann::json::parse(gpuperf::to_json(result));
  j["batches"][0]["latencies_s"].push_back(1e-3);  // 6 values for a count of 5
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(j.dump()),
                    Catch::Contains("'batches[0].latencies_s' holds 6 values"));
  j["batches"] = nlohmann::json::array();
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(j.dump()),
                    Catch::Contains("'batches' is empty"));
  j["schema"] = "gpuperf.run/1";
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(j.dump()),
                    Catch::Contains("field 'schema' is 'gpuperf.run/1'"));
  CHECK_THROWS_AS(gpuperf::from_json<gpuperf::InferenceResult>("{"), gpuperf::IoError);
}

TEST_CASE(
    "An inference result names its graph mode graph_mode and still reads version 2's "
    "cuda_graph",
    "[infer]") {
  gpuperf::InferenceResult result;
  result.model = "simple";
  result.fingerprint.kind = "cuda";
  result.fingerprint.name = "NVIDIA H200";
  result.precision = "fp16";
  result.memory_format = "channels_last";
  result.timer = "cuda-event";
  result.iterations = 3;
  result.cuda_graph = true;
  gpuperf::BatchSizeResult b;
  b.batch_size = 2;
  b.latency = gpuperf::summarize_latency({1e-3, 1.1e-3, 1.3e-3});
  b.throughput_median = 2 / b.latency.p50;
  b.iterations = 3;
  result.batches.push_back(b);
  using gpuperf::from_json;
  using gpuperf::InferenceResult;

  // Version 3: "graph_mode", as run records and the CSV exports name it; it reads back.
  const auto v3 = nlohmann::json::parse(gpuperf::to_json(result));
  CHECK(v3.at("schema") == gpuperf::kInferenceSchema);
  CHECK(v3.at("graph_mode") == "cuda-graph");
  CHECK_FALSE(v3.contains("cuda_graph"));
  CHECK(from_json<InferenceResult>(v3.dump()).cuda_graph);
  CHECK(std::string(gpuperf::graph_mode_name(result)) == "cuda-graph");
  result.cuda_graph = false;
  const auto eager = nlohmann::json::parse(gpuperf::to_json(result));
  CHECK(eager.at("graph_mode") == "eager");
  CHECK_FALSE(from_json<InferenceResult>(eager.dump()).cuda_graph);
  CHECK(gpuperf::to_json(from_json<InferenceResult>(eager.dump())) == gpuperf::to_json(result));

  // Version 2 (committed files under docs/results): the boolean "cuda_graph" still reads.
  auto v2 = v3;
  v2["schema"] = "gpuperf.inference/2";
  v2.erase("graph_mode");
  v2["cuda_graph"] = true;
  CHECK(from_json<InferenceResult>(v2.dump()).cuda_graph);
  v2["cuda_graph"] = false;
  CHECK_FALSE(from_json<InferenceResult>(v2.dump()).cuda_graph);
  // Written again, it is version 3.
  CHECK(nlohmann::json::parse(gpuperf::to_json(from_json<InferenceResult>(v2.dump())))
            .at("graph_mode") == "eager");

  // The versions' fields are not mixed: each refusal names the field.
  auto refused = [](const nlohmann::json& j, const std::string& message) {
    CHECK_THROWS_WITH(from_json<InferenceResult>(j.dump()),
                      Catch::Contains("inference result: field " + message));
  };
  auto bad = v3;
  bad["cuda_graph"] = true;  // beside graph_mode
  refused(bad, "'cuda_graph' is not part of gpuperf.inference/3");
  bad.erase("graph_mode");  // instead of it
  refused(bad, "'cuda_graph' is not part of gpuperf.inference/3");
  bad = v2;
  bad["graph_mode"] = "eager";  // beside cuda_graph
  refused(bad, "'graph_mode' is not part of gpuperf.inference/2");
  bad.erase("cuda_graph");  // instead of it
  refused(bad, "'graph_mode' is not part of gpuperf.inference/2");
  bad["schema"] = "gpuperf.inference/1";
  bad["fingerprint"] = bad["device"];
  bad["device"] = "cuda:0";
  bad["device_name"] = "NVIDIA H200";
  refused(bad, "'graph_mode' is not part of gpuperf.inference/1");
  bad = v3;
  bad["graph_mode"] = "graph";
  refused(bad, "'graph_mode' is 'graph', expected one of eager, cuda-graph");
  bad["graph_mode"] = true;
  refused(bad, "'graph_mode' is not a string");
  bad.erase("graph_mode");
  refused(bad, "'graph_mode' is missing");
  bad = v2;
  bad.erase("cuda_graph");
  refused(bad, "'cuda_graph' is missing");
}

TEST_CASE("Evenly spaced latencies keep the first call and stride over the run", "[infer]") {
  std::vector<double> values;
  for (int i = 0; i < 10; ++i) values.push_back(i);
  CHECK(gpuperf::evenly_spaced(values, 20) == values);
  CHECK(gpuperf::evenly_spaced(values, 5) == std::vector<double>{0, 2, 4, 6, 8});
  CHECK(gpuperf::evenly_spaced(values, 3) == std::vector<double>{0, 3, 6});
  CHECK(gpuperf::evenly_spaced(values, 0).empty());
}

TEST_CASE("The batch-size sweep doubles up to the maximum or takes the listed sizes", "[infer]") {
  CHECK(gpuperf::sweep_batch_sizes({}, 12) == std::vector<std::int64_t>{1, 2, 4, 8, 12});
  CHECK(gpuperf::sweep_batch_sizes({1, 8, 64}, 256) == std::vector<std::int64_t>{1, 8, 64});
}

TEST_CASE("Every number of an inference result is range-checked, the error naming the field",
          "[infer]") {
  gpuperf::InferenceResult result;
  result.model = "simple";
  result.fingerprint.kind = "cpu";
  result.warmup = 1;
  result.iterations = 3;
  gpuperf::BatchSizeResult b;
  b.batch_size = 2;
  b.latency = gpuperf::summarize_latency({1e-3, 1.1e-3, 1.3e-3});
  b.throughput_median = 2 / b.latency.p50;
  b.iterations = 3;
  result.batches.push_back(b);
  result.serving_options.max_batch = 2;
  result.serving_options.requests = 100;
  result.serving = gpuperf::sweep_serving(gpuperf::interpolated_service_time({{2, 1e-3}}),
                                          result.serving_options, {100});
  const auto good = nlohmann::json::parse(gpuperf::to_json(result));
  REQUIRE_NOTHROW(gpuperf::from_json<gpuperf::InferenceResult>(good.dump()));
  auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const char* field) {
    for (const char* schema :
         {"gpuperf.inference/3", "gpuperf.inference/2", "gpuperf.inference/1"}) {
      auto bad = good;
      if (std::string(schema) != "gpuperf.inference/3") {  // the older layouts read the same
        bad.erase("graph_mode");
        bad["cuda_graph"] = false;
      }
      if (std::string(schema) == "gpuperf.inference/1") {
        bad["fingerprint"] = bad["device"];
        bad["device"] = "cpu";
        bad["device_name"] = "CPU";
      }
      bad["schema"] = schema;
      edit(bad);
      CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(bad.dump()),
                        Catch::Contains(std::string("field '") + field + "'"));
    }
  };
  refused([](auto& j) { j["batches"][0]["throughput_median"] = 0; },
          "batches[0].throughput_median");
  refused([](auto& j) { j["batches"][0]["throughput_median"] = -5; },
          "batches[0].throughput_median");
  refused([](auto& j) { j["batches"][0]["throughput_median"] = 1e308; },
          "batches[0].throughput_median");
  refused([](auto& j) { j["batches"][0]["throughput_overall"] = -5; },
          "batches[0].throughput_overall");
  refused([](auto& j) { j["batches"][0]["total_seconds"] = -1; }, "batches[0].total_seconds");
  refused([](auto& j) { j["batches"][0]["peak_memory_bytes"] = -1; },
          "batches[0].peak_memory_bytes");
  refused([](auto& j) { j["batches"][0]["peak_memory_bytes"] = "1 GiB"; },
          "batches[0].peak_memory_bytes");
  refused([](auto& j) { j["batches"][0]["iterations"] = 0; }, "batches[0].iterations");
  refused([](auto& j) { j["batches"][0]["batch_size"] = 4294967296ll; }, "batches[0].batch_size");
  refused([](auto& j) { j["batches"][0]["latency"]["p90_s"] = 0.5e-3; },
          "batches[0].latency.p90_s");  // below p50
  refused([](auto& j) { j["batches"][0]["latency"]["max_s"] = 1e300; }, "batches[0].latency.max_s");
  refused([](auto& j) { j["batches"][0]["latency"]["count"] = 4611686018427387904ll; },
          "batches[0].latency.count");
  refused([](auto& j) { j["iterations"] = 0; }, "iterations");
  refused([](auto& j) { j["warmup"] = -1; }, "warmup");
  refused([](auto& j) { j["input_shape"] = {3, -32, 32}; }, "input_shape");
  refused([](auto& j) { j["serving"]["max_batch"] = 0; }, "serving.max_batch");
  refused([](auto& j) { j["serving"]["requests"] = -1; }, "serving.requests");
  refused([](auto& j) { j["serving"]["max_queue_delay_s"] = -1; }, "serving.max_queue_delay_s");
  refused([](auto& j) { j["serving"]["points"][0]["offered_rate"] = 1e300; },
          "serving.points[0].offered_rate");
  refused([](auto& j) { j["serving"]["points"][0]["mean_batch_size"] = 3; },
          "serving.points[0].mean_batch_size");  // above max_batch 2
  refused([](auto& j) { j["serving"]["points"][0]["batches"] = -1; }, "serving.points[0].batches");
  // ... and the numbers must agree with each other: order statistics, counts, batch / p50.
  refused([](auto& j) { j["batches"][0]["latency"]["mean_s"] = 5e-3; },
          "batches[0].latency.mean_s");  // above max_s
  refused([](auto& j) { j["batches"][0]["latency"]["count"] = 10; },
          "batches[0].latency.count");  // 3 iterations
  refused([](auto& j) { j["batches"][0]["throughput_median"] = 9e14; },
          "batches[0].throughput_median");  // calls of a millisecond
  refused([](auto& j) { j["batches"][0]["throughput_median"] = 1; },
          "batches[0].throughput_median");
  refused(
      [](auto& j) {
        j["batches"][0]["latencies_s"] = {1e-3, 1.1e-3, 2e-3};
      },
      "batches[0].latencies_s");  // 2 ms, above max_s
  refused([](auto& j) { j["serving"]["points"][0]["latency"]["mean_s"] = 0; },
          "serving.points[0].latency.mean_s");
  // A key twice in one object: nlohmann would keep the last.
  {
    std::string twice = good.dump();
    const std::string key = "\"batch_size\":2";
    REQUIRE(twice.find(key) != std::string::npos);
    twice.replace(twice.find(key), key.size(), key + ",\"batch_size\":4");
    CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::InferenceResult>(twice),
                      Catch::Contains("field 'batches[0].batch_size' appears twice"));
  }
}

TEST_CASE("An inference result nested too deep or over 64 MiB is refused, not a crash", "[infer]") {
  const std::size_t depth = 100000;
  const std::string deep = R"({"schema": "gpuperf.inference/3", "extra": )" +
                           std::string(depth, '[') + std::string(depth, ']') + "}";
  CHECK_THROWS_WITH(
      gpuperf::from_json<gpuperf::InferenceResult>(deep),
      Catch::Contains("inference result") && Catch::Contains("nested deeper than 256"));
  const std::string huge = "[" + std::string((64u << 20) + 1, ' ') + "]";
  CHECK_THROWS_WITH(
      gpuperf::from_json<gpuperf::InferenceResult>(huge),
      Catch::Contains("inference result") && Catch::Contains("over the 64 MiB limit"));
}
