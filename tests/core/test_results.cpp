// The results module's run records: the JSON round trip and its reader's refusals, the writer
// (whole or nothing, refusing what the schema would), make_record.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "gpuperf/base/files.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/version.h"
#include "gpuperf/results/run_record.h"

namespace {

gpuperf::RunRecord sample_record() {
  gpuperf::RunRecord r;
  r.timestamp_utc = "2026-11-29T20:00:00Z";
  r.command = "seed_benchmark --batch-size 256";
  r.device.kind = "cuda";
  r.device.name = "NVIDIA H200";
  r.device.sm_count = 132;
  r.device.compute_capability = "9.0";
  r.device.memory_bytes = 150e9;
  r.config.model = "simple";
  r.config.batch_size = 256;
  r.config.input_shape = {3, 32, 32};
  r.config.precision = "fp16";
  r.config.steps_per_window = 10;
  r.stop_reason = "fixed window count";
  r.timer = "cuda-event";
  r.throughput = gpuperf::summarize({100, 110, 105});
  r.window_throughput = {100, 110, 105};
  r.window_seconds = {2.56, 2.33, 2.44};
  r.overall_throughput = 104.8;
  r.skipped_steps = 2;
  r.metrics["imagenet_90_epochs_seconds"] = 1234.5;
  r.warnings.push_back("thermal throttling");
  r.telemetry.available = true;
  r.telemetry.sample_count = 51;
  r.telemetry.duration_seconds = 5.0;
  r.telemetry.processed_samples = 12800;
  r.telemetry.power_mean_watts = 650.5;
  r.telemetry.energy_joules = 3250;
  r.telemetry.energy_source = "energy counter";
  r.telemetry.samples_per_joule = 12800 / 3250.0;
  r.telemetry.sm_clock_min_hz = 1.755e9;
  r.telemetry.clock_event_reasons = 0x4 | 0x20;
  r.telemetry.warnings.push_back("power-cap throttling during measurement");
  return r;
}

}  // namespace

TEST_CASE("a run record survives a JSON round trip with NaN as null", "[report]") {
  const auto original = sample_record();
  const std::string text = gpuperf::to_json(original);
  CHECK(text.find("\"power_limit_watts\": null") != std::string::npos);
  const auto back = gpuperf::from_json<gpuperf::RunRecord>(text);
  CHECK(back.device.name == "NVIDIA H200");
  CHECK(back.device.sm_count == 132);
  CHECK(std::isnan(back.device.power_limit_watts));
  CHECK(back.config.input_shape == std::vector<std::int64_t>{3, 32, 32});
  CHECK(back.throughput.median == original.throughput.median);
  CHECK(back.window_seconds == original.window_seconds);
  CHECK(back.skipped_steps == 2);
  CHECK(back.metrics.at("imagenet_90_epochs_seconds") == 1234.5);
  CHECK(back.warnings == original.warnings);
  CHECK(back.telemetry.available);
  CHECK(back.telemetry.sample_count == 51);
  CHECK(back.telemetry.energy_joules == 3250);
  CHECK(back.telemetry.energy_source == "energy counter");
  CHECK(back.telemetry.samples_per_joule == original.telemetry.samples_per_joule);
  CHECK(std::isnan(back.telemetry.power_max_watts));
  CHECK(back.telemetry.clock_event_reasons == (0x4u | 0x20u));
  CHECK(back.telemetry.warnings == original.telemetry.warnings);
  CHECK(text.find("\"clock_event_reason_names\": [\n      \"sw_power_cap\",") != std::string::npos);
  CHECK(gpuperf::to_json(back) == text);
}

TEST_CASE("a run record keeps each window's loss, a loss that was not finite as null", "[report]") {
  gpuperf::RunRecord r = sample_record();
  r.window_losses = {2.5, std::numeric_limits<double>::infinity(), 1.25};
  const std::string text = gpuperf::to_json(r);
  CHECK(text.find("\"window_losses\": [\n    2.5,\n    null,\n    1.25\n  ]") != std::string::npos);
  const auto back = gpuperf::from_json<gpuperf::RunRecord>(text);
  REQUIRE(back.window_losses.size() == 3);
  CHECK(back.window_losses[0] == 2.5);
  CHECK(std::isnan(back.window_losses[1]));
  CHECK(back.window_losses[2] == 1.25);
  // Records written before the losses were kept read with none; a record without them writes [].
  auto older = nlohmann::json::parse(text);
  older.erase("window_losses");
  CHECK(gpuperf::from_json<gpuperf::RunRecord>(older.dump()).window_losses.empty());
  CHECK(gpuperf::to_json(sample_record()).find("\"window_losses\": []") != std::string::npos);
}

TEST_CASE("a run record written before telemetry existed reads as telemetry unavailable",
          "[report]") {
  auto parsed = nlohmann::json::parse(gpuperf::to_json(sample_record()));
  parsed.erase("telemetry");
  const auto back = gpuperf::from_json<gpuperf::RunRecord>(parsed.dump());
  CHECK_FALSE(back.telemetry.available);
  CHECK(back.telemetry.sample_count == 0);
}

TEST_CASE("reading a malformed run record names the field", "[report]") {
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>("{"), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>("{\"schema\": \"other/1\"}"),
                    Catch::Contains("schema"));
  std::string text = gpuperf::to_json(sample_record());
  const auto at = text.find("\"batch_size\": 256");
  REQUIRE(at != std::string::npos);
  text.replace(at, 17, "\"batch_size\": \"x\"");
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(text),
                    Catch::Contains("config.batch_size"));
  CHECK_THROWS_AS(gpuperf::from_json<gpuperf::RunRecord>(text), gpuperf::IoError);
}

TEST_CASE("a run record nested too deep is an IoError, not a crash", "[report]") {
  // A valid record with a hostile extra field: refused while parsing, before the reader looks.
  auto parsed = nlohmann::json::parse(gpuperf::to_json(sample_record()));
  parsed["extra"] = nullptr;
  std::string text = parsed.dump();
  const std::size_t depth = 100000;
  const auto at = text.find("\"extra\":null");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"extra\":" + std::string(depth, '[') + std::string(depth, ']'));
  CHECK_THROWS_AS(gpuperf::from_json<gpuperf::RunRecord>(text), gpuperf::IoError);
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(text),
                    Catch::Contains("run record") && Catch::Contains("nested deeper than 256"));
}

TEST_CASE("write_json_file replaces the file whole and check_writable refuses bad paths",
          "[report]") {
  const std::string path = "test_report_output.json";
  gpuperf::write_json_file(sample_record(), path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(gpuperf::from_json<gpuperf::RunRecord>(text.str()).config.model == "simple");
  std::remove(path.c_str());

  CHECK_NOTHROW(gpuperf::check_writable(path, "json"));
  CHECK_THROWS_WITH(gpuperf::check_writable("/nonexistent-dir/x.json", "json"),
                    Catch::Contains("json: ") && Catch::Contains("/nonexistent-dir/x.json"));
  CHECK_THROWS_AS(gpuperf::write_json_file(sample_record(), "/nonexistent-dir/x.json"),
                  gpuperf::IoError);
}

TEST_CASE("A record no measurement can have written is refused, naming the field", "[report]") {
  gpuperf::RunRecord r;
  r.config.model = "simple";
  r.config.batch_size = 8;
  r.window_throughput = {100, 110};
  r.window_seconds = {0.08, 0.0727};
  r.throughput = gpuperf::summarize(r.window_throughput);
  r.overall_throughput = 105;
  CHECK_NOTHROW(gpuperf::from_json<gpuperf::RunRecord>(gpuperf::to_json(r)));
  auto refused = [&](gpuperf::RunRecord bad, const char* field) {
    CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(gpuperf::to_json(bad)),
                      Catch::Contains(field));
  };
  auto bad = r;
  bad.config.batch_size = -4;
  refused(bad, "config.batch_size");
  bad = r;
  bad.window_throughput = {0, 110};
  refused(bad, "window_throughput");
  bad = r;
  bad.window_seconds = {0.08};
  refused(bad, "window_seconds");
  bad = r;
  bad.overall_throughput = 1e308;
  refused(bad, "overall_throughput");
}

TEST_CASE("make_record turns a measure() result into a record that writes and reads back",
          "[report]") {
  // A core user's whole record: a measurement, the model's name, what ran it.
  auto timer = gpuperf::make_steady_clock_timer();
  gpuperf::MeasureOptions options;
  options.warmup = 1;
  options.steps_per_window = 2;
  options.windows = 3;
  volatile double sink = 0;
  const gpuperf::Measurement m = gpuperf::measure(
      [&] {
        for (int i = 0; i < 1000; ++i) sink = sink + i;
      },
      32, *timer, options);
  gpuperf::RunRecord record = gpuperf::make_record("my_net", m, *timer);
  record.device.kind = "cpu";
  record.device.name = "test CPU";
  const std::string path = "test_report_make_record.json";
  gpuperf::write_json_file(record, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  const auto back = gpuperf::from_json<gpuperf::RunRecord>(text.str());
  CHECK(back.config.model == "my_net");
  CHECK(back.config.batch_size == 32);
  CHECK(back.config.steps_per_window == 2);
  CHECK(back.config.warmup_steps == 1);
  CHECK_FALSE(back.config.adaptive);
  CHECK(back.window_throughput.size() == 3);
  CHECK(back.timed_steps == 6);
  CHECK(back.total_steps == 7);
  CHECK(back.timer == "steady-clock");
  CHECK(back.stop_reason == "fixed window count");
  CHECK(back.device.gpuperf_version == gpuperf::kBuildVersion);
  CHECK(back.throughput.median == Approx(m.throughput.median));

  CHECK_THROWS_WITH(gpuperf::make_record("", m, *timer), Catch::Contains("model"));
  gpuperf::Measurement fractional = m;
  fractional.samples_per_step = 2.5;
  CHECK_THROWS_WITH(gpuperf::make_record("my_net", fractional, *timer), Catch::Contains("2.5"));
  CHECK_THROWS_WITH(gpuperf::make_record("my_net", gpuperf::Measurement{}, *timer),
                    Catch::Contains("no timed window"));
}

TEST_CASE("write_json_file refuses a record the schema would refuse, naming the field",
          "[report]") {
  gpuperf::RunRecord good = sample_record();
  CHECK_NOTHROW(gpuperf::validate(good));
  const std::string path = "test_report_refused.json";
  const auto refused = [&](const std::function<void(gpuperf::RunRecord&)>& spoil,
                           const std::string& field) {
    gpuperf::RunRecord bad = good;
    spoil(bad);
    CHECK_THROWS_AS(gpuperf::write_json_file(bad, path), gpuperf::ConfigError);
    CHECK_THROWS_WITH(gpuperf::validate(bad), Catch::Contains("field '" + field + "'"));
    // Nothing is written: the check comes before the file.
    CHECK_FALSE(std::ifstream(path).good());
  };
  // Outside the schema's vocabularies and forms, which the reader does not check.
  refused([](auto& r) { r.config.precision = "fp8"; }, "config.precision");
  refused([](auto& r) { r.config.precision.clear(); }, "config.precision");
  refused([](auto& r) { r.config.optimizer = "lamb"; }, "config.optimizer");
  // Written only above 1, read back as gpuperf's reader reads it (1..batch_size).
  refused([](auto& r) { r.config.accumulation_steps = 0; }, "config.accumulation_steps");
  refused([](auto& r) { r.config.accumulation_steps = r.config.batch_size + 1; },
          "config.accumulation_steps");
  refused([](auto& r) { r.config.model.clear(); }, "config.model");
  refused([](auto& r) { r.config.steps_per_window = 0; }, "config.steps_per_window");
  refused([](auto& r) { r.timestamp_utc = "yesterday"; }, "timestamp_utc");
  refused([](auto& r) { r.device.kind.clear(); }, "device.kind");
  refused([](auto& r) { r.device.compute_capability = "sm90"; }, "device.compute_capability");
  refused([](auto& r) { r.stop_reason = "fixed windows"; }, "stop_reason");
  refused([](auto& r) { r.timer.clear(); }, "timer");
  refused([](auto& r) { r.timed_seconds = gpuperf::kNotAvailable; }, "timed_seconds");
  refused([](auto& r) { r.metrics["Bad Name"] = 1; }, "metrics.Bad Name");
  refused(
      [](auto& r) {
        r.telemetry.available = false;
        r.telemetry.unavailable_reason.clear();
      },
      "telemetry.unavailable_reason");
  refused(
      [](auto& r) {
        r.distributed.world_size = 2;
        r.distributed.backend = "mpi";
      },
      "distributed.backend");
  // And what the reader refuses: ranges and agreement between fields.
  refused([](auto& r) { r.config.batch_size = 0; }, "config.batch_size");
  refused([](auto& r) { r.window_seconds = {1}; }, "window_seconds");
}

TEST_CASE("A command line that is not UTF-8 still gives a result file", "[report]") {
  gpuperf::RunRecord r;
  r.config.batch_size = 1;
  r.command = std::string("seed_benchmark --json r\xff\xfe.json");
  std::string text;
  REQUIRE_NOTHROW(text = gpuperf::to_json(r));
  CHECK(text.find("seed_benchmark --json r") != std::string::npos);
  CHECK_THROWS_WITH(gpuperf::check_writable(".", "json"), Catch::Contains("is a directory"));
}

TEST_CASE("Every number of a run record is range-checked, the error naming the field", "[report]") {
  gpuperf::RunRecord r = sample_record();
  r.config.steps_per_window = 10;
  r.throughput = gpuperf::summarize(r.window_throughput);
  const auto good = nlohmann::json::parse(gpuperf::to_json(r));
  REQUIRE_NOTHROW(gpuperf::from_json<gpuperf::RunRecord>(good.dump()));
  // Each edit makes a record that no measurement can have written.
  auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const char* field) {
    auto bad = good;
    edit(bad);
    CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
                      Catch::Contains(std::string("field '") + field + "'"));
  };
  refused([](auto& j) { j["window_seconds"][1] = -2.33; }, "window_seconds[1]");
  refused([](auto& j) { j["window_seconds"][0] = 0; }, "window_seconds[0]");
  refused([](auto& j) { j["window_throughput"][2] = 1e300; }, "window_throughput[2]");
  refused([](auto& j) { j["throughput"]["count"] = 7; }, "throughput.count");
  refused([](auto& j) { j["throughput"]["median"] = -1; }, "throughput.median");
  refused([](auto& j) { j["throughput"]["stdev"] = 1e300; }, "throughput.stdev");
  refused([](auto& j) { j["overall_throughput"] = nullptr; }, "overall_throughput");
  refused([](auto& j) { j["timed_seconds"] = -1; }, "timed_seconds");
  refused([](auto& j) { j["timed_steps"] = -1; }, "timed_steps");
  refused([](auto& j) { j["skipped_steps"] = -2; }, "skipped_steps");
  refused([](auto& j) { j["peak_memory_bytes"] = -5; }, "peak_memory_bytes");
  refused([](auto& j) { j["final_loss"] = 1e300; }, "final_loss");
  refused([](auto& j) { j["window_losses"] = {1.5, -1e300, 1.0}; }, "window_losses[1]");
  refused([](auto& j) { j["window_losses"] = {1.5, "low", 1.0}; }, "window_losses[1]");
  refused([](auto& j) { j["window_losses"] = {1.5, 1.0}; }, "window_losses");  // 3 windows
  refused([](auto& j) { j["config"]["steps_per_window"] = -1; }, "config.steps_per_window");
  refused([](auto& j) { j["config"]["warmup_steps"] = -1; }, "config.warmup_steps");
  refused([](auto& j) { j["config"]["input_shape"][1] = 0; }, "config.input_shape");
  refused([](auto& j) { j["config"]["learning_rate"] = -0.1; }, "config.learning_rate");
  // Past INT64_MAX is out of range, not a wrapped negative number read as a batch size.
  refused([](auto& j) { j["config"]["batch_size"] = 18446744073709551615ull; },
          "config.batch_size");
  refused([](auto& j) { j["config"]["batch_size"] = 4294967296ll; }, "config.batch_size");
  refused([](auto& j) { j["device"]["sm_count"] = -132; }, "device.sm_count");
  refused([](auto& j) { j["device"]["memory_bytes"] = 1e300; }, "device.memory_bytes");
  refused([](auto& j) { j["device"]["index"] = -1; }, "device.index");
  refused([](auto& j) { j["telemetry"]["gpu_utilization_mean_percent"] = 150; },
          "telemetry.gpu_utilization_mean_percent");
  refused([](auto& j) { j["telemetry"]["energy_joules"] = -3250; }, "telemetry.energy_joules");
  refused([](auto& j) { j["telemetry"]["sample_count"] = -1; }, "telemetry.sample_count");
  refused([](auto& j) { j["metrics"]["imagenet_90_epochs_seconds"] = 1e300; },
          "metrics.imagenet_90_epochs_seconds");
  // Data-parallel runs: one throughput per rank, each measured.
  auto distributed = good;
  distributed["distributed"] = {{"world_size", 2},
                                {"backend", "gloo"},
                                {"launcher", "self"},
                                {"interconnect", "loopback"},
                                {"global_throughput", 200},
                                {"rank_throughput", {100, 100}},
                                {"baseline_throughput", 105},
                                {"scaling_efficiency", 0.95},
                                {"gradient_bytes", 1e6},
                                {"buckets", 1},
                                {"allreduce_bus_gbps", 1.5},
                                {"allreduce_share_of_step", 0.2},
                                {"parameters_identical", true}};
  REQUIRE(gpuperf::from_json<gpuperf::RunRecord>(distributed.dump()).distributed.world_size == 2);
  auto bad = distributed;
  bad["distributed"]["rank_throughput"] = {100};
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
                    Catch::Contains("'distributed.rank_throughput' has 1 values, world_size 2"));
  bad = distributed;
  bad["distributed"]["rank_throughput"] = {100, -100};
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
                    Catch::Contains("'distributed.rank_throughput[1]'"));
  bad = distributed;
  bad["distributed"]["buckets"] = -1;
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
                    Catch::Contains("'distributed.buckets'"));
}

TEST_CASE("A run record that contradicts itself is refused, naming the field", "[report]") {
  gpuperf::RunRecord r = sample_record();
  r.timed_steps = 30;
  r.total_steps = 40;
  const auto good = nlohmann::json::parse(gpuperf::to_json(r));
  REQUIRE_NOTHROW(gpuperf::from_json<gpuperf::RunRecord>(good.dump()));
  auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& what) {
    auto bad = good;
    edit(bad);
    CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()), Catch::Contains(what));
  };
  // Order statistics of windows {100, 105, 110}.
  refused([](auto& j) { j["throughput"]["min"] = 106; },
          "field 'throughput.median' is 105, below min 106");
  refused([](auto& j) { j["throughput"]["max"] = 104; },
          "field 'throughput.median' is 105, above max 104");
  refused([](auto& j) { j["throughput"]["q1"] = 108; }, "field 'throughput.q1' is 108, above q3");
  refused([](auto& j) { j["throughput"]["mean"] = 1000; }, "field 'throughput.mean' is 1000");
  refused([](auto& j) { std::swap(j["throughput"]["ci95_low"], j["throughput"]["ci95_high"]); },
          "field 'throughput.ci95_low'");
  refused([](auto& j) { j["throughput"]["median"] = 0; },
          "field 'throughput.median' is 0 with 3 windows");
  // A summary consistent in itself, but not of these windows.
  refused(
      [](auto& j) {
        for (const char* key :
             {"median", "mean", "min", "max", "q1", "q3", "ci95_low", "ci95_high"}) {
          j["throughput"][key] = 9e14;
        }
      },
      "field 'throughput.median' is 9e+14, outside the windows' range [100, 110]");
  // Counts: no windows with a median, an empty window list with count 10.
  refused(
      [](auto& j) {
        j["window_throughput"] = nlohmann::json::array();
        j["window_seconds"] = nlohmann::json::array();
        j["throughput"]["count"] = 0;
      },
      "field 'throughput.median' is 105, but count is 0");
  refused(
      [](auto& j) {
        j["window_throughput"] = nlohmann::json::array();
        j["window_seconds"] = nlohmann::json::array();
        j["throughput"]["count"] = 10;
      },
      "field 'throughput.count' is 10, but 0 windows are given");
  refused([](auto& j) { j["timed_steps"] = 50; },
          "field 'timed_steps' is 50, above total_steps 40");
  // A data-parallel job is its ranks together, and scales at most 1.5 times linearly.
  auto distributed = good;
  distributed["distributed"] = {{"world_size", 2},
                                {"backend", "gloo"},
                                {"launcher", "self"},
                                {"interconnect", "loopback"},
                                {"global_throughput", 210},
                                {"rank_throughput", {100, 105}},
                                {"baseline_throughput", 105},
                                {"scaling_efficiency", 1},
                                {"gradient_bytes", 1e6},
                                {"buckets", 1},
                                {"allreduce_bus_gbps", 1.5},
                                {"allreduce_share_of_step", 0.2},
                                {"parameters_identical", true}};
  auto accepted = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto changed = distributed;
    edit(changed);
    CHECK_NOTHROW(gpuperf::from_json<gpuperf::RunRecord>(changed.dump()));
  };
  accepted([](auto&) {});
  // The median of per-window sums is not the sum of the ranks' medians.
  accepted([](auto& j) { j["distributed"]["global_throughput"] = 215; });
  accepted([](auto& j) { j["distributed"]["scaling_efficiency"] = 1.5; });
  auto bad = distributed;
  bad["distributed"]["global_throughput"] = 9e14;
  bad["distributed"]["rank_throughput"] = {1.0, 1.0};
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
                    Catch::Contains("field 'distributed.global_throughput' is 9e+14, above the sum "
                                    "of rank_throughput (2)"));
  bad = distributed;
  bad["distributed"]["global_throughput"] = 240;
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
                    Catch::Contains("field 'distributed.global_throughput'"));
  for (const double efficiency : {1.6, 5e14}) {
    bad = distributed;
    bad["distributed"]["scaling_efficiency"] = efficiency;
    CHECK_THROWS_WITH(
        gpuperf::from_json<gpuperf::RunRecord>(bad.dump()),
        Catch::Contains("field 'distributed.scaling_efficiency'") && Catch::Contains("above 1.5"));
  }
}

TEST_CASE("A key that appears twice in one object is refused, naming its path", "[report]") {
  const std::string text = gpuperf::to_json(sample_record());
  const std::string name = "\"name\": \"NVIDIA H200\"";
  REQUIRE(text.find(name) != std::string::npos);
  // nlohmann keeps the last: a second "name" would make the H200 record a V100's.
  std::string twice = text;
  twice.replace(twice.find(name), name.size(), name + ", \"name\": \"Tesla V100-SXM2-16GB\"");
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(twice),
                    Catch::Contains("run record: field 'device.name' appears twice"));
  twice = text;
  twice.replace(twice.find("{"), 1, "{\"schema\": \"gpuperf.run/1\",");
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(twice),
                    Catch::Contains("field 'schema' appears twice"));
  // Inside arrays the path counts elements, containers and plain values alike.
  CHECK_THROWS_WITH(
      gpuperf::from_json<gpuperf::RunRecord>(R"({"a": [1, {"b": 1}, [2, {}], {"c": 1, "c": 2}]})"),
      Catch::Contains("field 'a[3].c' appears twice"));
  // One key in different objects is fine ("warnings" at the top and in "telemetry").
  CHECK_NOTHROW(gpuperf::from_json<gpuperf::RunRecord>(text));
}

TEST_CASE("A run record or result file over 64 MiB is refused before it is parsed", "[report]") {
  // Valid JSON, so that only the size can be the reason.
  const std::string huge = "[" + std::string((64u << 20) + 1, ' ') + "]";
  CHECK_THROWS_WITH(gpuperf::from_json<gpuperf::RunRecord>(huge),
                    Catch::Contains("run record") && Catch::Contains("over the 64 MiB limit"));
  // A file is refused by its size alone: a sparse one takes no disk space and is never read.
  const std::string path = "test_report_huge.json";
  { std::ofstream(path) << "{}"; }
  REQUIRE(::truncate(path.c_str(), off_t{1} << 32) == 0);
  CHECK_THROWS_WITH(gpuperf::read_text_file(path),
                    Catch::Contains(path) && Catch::Contains("64 MiB"));
  std::remove(path.c_str());
}
