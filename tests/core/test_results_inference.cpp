// The results module's inference results: headline figures, the JSON (serving marked simulated)
// and its reader, older versions, stored latencies, the batch-size sweep, the range checks.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/results/export.h"
#include "gpuperf/results/inference_result.h"
#include "gpuperf/serving/serving.h"
#include "gpuperf/timing/latency.h"

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
