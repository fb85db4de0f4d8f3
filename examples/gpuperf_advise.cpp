// gpuperf_advise: ranks the GPUs of the spec database for a workload, and prints why, line by
// line: memory (weights, gradients, optimizer state, activations), links, throughput (measured,
// published or an estimate, labelled), cost and energy.
//
//   gpuperf_advise --model resnet50 --precision bf16 --batch-size 256 --budget 20000
//   gpuperf_advise --parameters 7e9 --sequence-length 4096 --gpus 8 --results h100.json
//   gpuperf_advise --model resnet50 --mode inference --precision fp16 --latency-budget-ms 5
//       --results h200-infer.json

#include <cmath>
#include <iostream>

#include "gpuperf/advise/advisor.h"
#include "tool_common.h"

int main(int argc, char** argv) {
  CLI::App app{"Rank GPUs for a training or inference workload, with reasons", "gpuperf_advise"};
  gpuperf::AdvisorRequest request;
  std::vector<std::string> results, specs_extra;
  std::string specs_path, published_path;
  double activation_gb = -1;
  double latency_budget_ms = 0;
  bool no_published = false;
  std::size_t top = 0;
  app.add_option("--model", request.model, "a counted model: simple, resnet50");
  app.add_option("--parameters", request.parameters, "trainable parameters (e.g. 7e9)");
  app.add_option("--mode", request.mode, "train or inference")->capture_default_str();
  app.add_option("--precision", request.precision, "fp32, tf32, fp16, bf16 (int8, fp8: inference)")
      ->capture_default_str();
  app.add_option("--optimizer", request.optimizer, "adam, adamw or sgd")->capture_default_str();
  app.add_option("--batch-size", request.batch_size, "samples per GPU per step");
  app.add_option("--sequence-length", request.sequence_length,
                 "tokens per sample for a parameter-count model");
  app.add_option("--activation-gb", activation_gb, "activation memory per GPU, if known (GB)");
  app.add_option("--budget", request.budget_usd, "purchase budget for all GPUs (USD)");
  app.add_option("--gpus", request.gpu_count, "number of GPUs")->capture_default_str();
  app.add_option("--price-per-hour", request.price_per_hour_usd, "rental price per GPU-hour (USD)");
  app.add_option("--utilization", request.assumed_utilization,
                 "fraction of peak assumed when nothing measured exists")
      ->capture_default_str();
  app.add_option("--latency-budget-ms", latency_budget_ms,
                 "inference: largest p99 per-call latency allowed (ms), checked against measured "
                 "inference results");
  app.add_option("--results", results,
                 "result files with measured figures (training runs or inference results)");
  app.add_flag("--include-reference", request.include_reference_only,
               "also rank reference-only entries (e.g. AMD MI300X)");
  app.add_option("--top", top, "show only the best N");
  app.add_option("--specs", specs_path, "spec database file (default: shipped one)");
  app.add_option("--specs-extra", specs_extra, "user spec files adding or overriding entries");
  app.add_option("--published", published_path, "published-results file (default: shipped one)");
  app.add_flag("--no-published", no_published, "do not use published figures");

  return gpuperf::tool::run_tool(app, argc, argv, [&] {
    if (app.count("--activation-gb") > 0) {
      if (!(activation_gb >= 0)) {
        throw gpuperf::ConfigError("--activation-gb: must be >= 0, got " +
                                   std::to_string(activation_gb));
      }
      request.activation_bytes = activation_gb * 1e9;
    }
    if (app.count("--latency-budget-ms") > 0) {
      if (request.mode != "inference") {
        throw gpuperf::ConfigError(
            "--latency-budget-ms: applies to --mode inference only (mode is '" + request.mode +
            "')");
      }
      if (!(latency_budget_ms > 0) || !std::isfinite(latency_budget_ms)) {
        throw gpuperf::ConfigError("--latency-budget-ms: must be > 0, got " +
                                   std::to_string(latency_budget_ms));
      }
      request.latency_budget_seconds = latency_budget_ms * 1e-3;
    }
    request.validate();
    const auto db = gpuperf::tool::load_specs(specs_path, specs_extra, true);
    gpuperf::LoadedResults runs;
    if (!results.empty()) runs = gpuperf::load_results(results);
    std::vector<gpuperf::PublishedResult> published;
    if (!no_published) {
      published = gpuperf::load_published_results(
          published_path.empty() ? gpuperf::find_data_file("published_results.json")
                                 : published_path);
    }
    auto ranking = gpuperf::advise_with(request, *db, runs, published);
    if (top > 0 && ranking.size() > top) ranking.resize(top);
    gpuperf::write_advice(std::cout, request, ranking);
    return 0;
  });
}
