// gpuperf_advise: ranks the GPUs of the spec database for a workload, and prints why, line by
// line: memory (weights, gradients, optimizer state, activations), links, throughput (measured,
// published or an estimate, labelled), cost and energy.
//
//   gpuperf_advise --model resnet50 --precision bf16 --batch-size 256 --budget 20000
//   gpuperf_advise --parameters 7e9 --sequence-length 4096 --gpus 8 --results h100.json
//   gpuperf_advise --model resnet50 --mode inference --precision fp16 --latency-budget-ms 5
//       --results h200-infer.json

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/advise/advisor.h"
#include "gpuperf/base/error.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/specs.h"
#include "program.h"
#include "specs_option.h"

namespace {

// The options as typed: the request's fields that take other units (GB, ms) stay apart until
// checked.
struct AdviseOptions {
  gpuperf::AdvisorRequest request;
  std::vector<std::string> results, specs_extra;
  std::string specs_path, published_path;
  double activation_gb = -1;
  double latency_budget_ms = 0;
  bool no_published = false;
  std::size_t top = 0;
};

// Numeric limits checked as the options are read, quoting the value as typed: the request
// holds some in other units (bytes, seconds), and 1e300 parameters or GB would overflow them.
CLI::Validator rule(bool (*ok)(double), const std::string& text) {
  return gpuperf::program::number_rule(ok, text);
}

// The request's field names in the advisor's errors, as the options that set them.
constexpr std::pair<const char*, const char*> kFieldOptions[] = {
    {"model", "--model"},
    {"parameters", "--parameters"},
    {"mode", "--mode"},
    {"precision", "--precision"},
    {"optimizer", "--optimizer"},
    {"batch_size", "--batch-size"},
    {"sequence_length", "--sequence-length"},
    {"budget_usd", "--budget"},
    {"gpu_count", "--gpus"},
    {"price_per_hour_usd", "--price-per-hour"},
    {"assumed_utilization", "--utilization"}};

// "advisor: mode 'fly' is not train or inference" -> "--mode: 'fly' is not train or inference".
void validate_request(const gpuperf::AdvisorRequest& request) {
  try {
    request.validate();
  } catch (const gpuperf::ConfigError& e) {
    const std::string message = e.what();
    for (const auto& [field, option] : kFieldOptions) {
      const std::string prefix = std::string("advisor: ") + field + " '";
      if (message.rfind(prefix, 0) == 0) {
        throw gpuperf::ConfigError(std::string(option) + ": " + message.substr(prefix.size() - 1));
      }
    }
    throw;
  }
}

void add_options(CLI::App& app, AdviseOptions& o) {
  gpuperf::AdvisorRequest& request = o.request;
  app.add_option("--model", request.model, "a counted model: simple, resnet50");
  app.add_option("--parameters", request.parameters, "trainable parameters (e.g. 7e9)")
      ->check(rule([](double v) { return v > 0 && v <= 1e15; }, "> 0 and <= 1e15"));
  app.add_option("--mode", request.mode, "train or inference")->capture_default_str();
  app.add_option("--precision", request.precision, "fp32, tf32, fp16, bf16 (int8, fp8: inference)")
      ->capture_default_str();
  app.add_option("--optimizer", request.optimizer, "adam, adamw or sgd")->capture_default_str();
  app.add_option("--batch-size", request.batch_size, "samples per GPU per step")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--sequence-length", request.sequence_length,
                 "tokens per sample for a parameter-count model")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--activation-gb", o.activation_gb, "activation memory per GPU, if known (GB)")
      ->check(rule([](double v) { return v >= 0 && v <= 1e9; }, ">= 0 and <= 1e9"));
  app.add_option("--budget", request.budget_usd, "purchase budget for all GPUs (USD)")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--gpus", request.gpu_count, "number of GPUs")
      ->capture_default_str()
      ->check(rule([](double v) { return v >= 1 && v <= 4096; }, "1..4096"));
  app.add_option("--price-per-hour", request.price_per_hour_usd, "rental price per GPU-hour (USD)")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--utilization", request.assumed_utilization,
                 "fraction of peak assumed when nothing measured exists")
      ->capture_default_str()
      ->check(rule([](double v) { return v > 0 && v <= 1; }, "> 0 and <= 1"));
  app.add_option("--latency-budget-ms", o.latency_budget_ms,
                 "inference: largest p99 per-call latency allowed (ms), checked against measured "
                 "inference results")
      ->check(rule([](double v) { return v > 0; }, "> 0"));
  app.add_option("--results", o.results,
                 "result files with measured figures (training runs or inference results)");
  app.add_flag("--include-reference", request.include_reference_only,
               "also rank reference-only entries (e.g. AMD MI300X)");
  app.add_option("--top", o.top, "show only the best N");
  app.add_option("--specs", o.specs_path, "spec database file (default: shipped one)");
  app.add_option("--specs-extra", o.specs_extra, "user spec files adding or overriding entries");
  app.add_option("--published", o.published_path, "published-results file (default: shipped one)");
  app.add_flag("--no-published", o.no_published, "do not use published figures");
}

// The options given in GB and ms, checked here so that the error names the option as typed
// rather than the request's field in bytes or seconds.
void set_sizes_in_request(const CLI::App& app, AdviseOptions& o) {
  if (app.count("--activation-gb") > 0) {
    if (!(o.activation_gb >= 0)) {
      throw gpuperf::ConfigError("--activation-gb: must be >= 0, got " +
                                 std::to_string(o.activation_gb));
    }
    o.request.activation_bytes = o.activation_gb * 1e9;
  }
  if (app.count("--latency-budget-ms") > 0) {
    if (o.request.mode != "inference") {
      throw gpuperf::ConfigError(
          "--latency-budget-ms: '" + app.get_option("--latency-budget-ms")->as<std::string>() +
          "' applies to --mode inference only (mode is '" + o.request.mode + "')");
    }
    if (!(o.latency_budget_ms > 0) || !std::isfinite(o.latency_budget_ms)) {
      throw gpuperf::ConfigError("--latency-budget-ms: must be > 0, got " +
                                 std::to_string(o.latency_budget_ms));
    }
    o.request.latency_budget_seconds = o.latency_budget_ms * 1e-3;
  }
}

int advise(const AdviseOptions& o) {
  validate_request(o.request);
  const auto db = gpuperf::program::load_specs(o.specs_path, o.specs_extra, true);
  gpuperf::LoadedResults runs;
  if (!o.results.empty()) {
    try {
      runs = gpuperf::load_results(o.results);
    } catch (const gpuperf::Error& e) {
      throw gpuperf::ConfigError(std::string("--results: ") + e.what());
    }
  }
  std::vector<gpuperf::PublishedResult> published;
  if (!o.no_published) published = gpuperf::program::load_published(o.published_path);
  auto ranking = gpuperf::advise_with(o.request, *db, runs, published);
  if (o.top > 0 && ranking.size() > o.top) ranking.resize(o.top);
  gpuperf::write_advice(std::cout, o.request, ranking);
  return gpuperf::program::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Rank GPUs for a training or inference workload, with reasons", "gpuperf_advise"};
  AdviseOptions options;
  add_options(app, options);
  return gpuperf::program::run_program(app, argc, argv, [&] {
    set_sizes_in_request(app, options);
    return advise(options);
  });
}
