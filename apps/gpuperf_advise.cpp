// gpuperf_advise: ranks the GPUs of the spec database for a workload, and prints why, line by
// line: memory (weights, gradients, optimizer state, activations), links, throughput (measured,
// published PyTorch, MLPerf or an estimate, each in its own table), cost and energy (measured
// where a run's telemetry has it, else a TDP estimate).
//
//   gpuperf_advise --model resnet50 --precision bf16 --batch-size 256 --budget 20000
//   gpuperf_advise --parameters 7e9 --sequence-length 4096 --gpus 8 --results h100.json
//   gpuperf_advise --model resnet50 --mode inference --precision fp16 --latency-budget-ms 5
//       --results h200-infer.json
//   gpuperf_advise --model resnet50 --batch-size 256 --gpus 8 --epochs 90
//       --price h100-sxm5-80gb=2.49 --price "H200 SXM 141GB=3.50" --price-per-hour 1.20
//
// A GPU given no price is costed at the default table's dated on-demand rental price
// (gpu_rental_prices.json), else at its datasheet purchase price; --no-default-prices keeps the
// purchase price for all.
//
// With --fit (the fit mode, which the ranking's reasons point to for checkpointing and offload)
// it answers "will it fit?" instead: the per-GPU memory of a training step under each
// strategy (data parallel, ZeRO-1/2/3, + activation checkpointing, + CPU offload), term by term,
// and per datasheet GPU which strategy is needed (docs/memory.md):
//
//   gpuperf_advise --fit --parameters 10e9 --gpus 8 --precision amp-bf16 --optimizer adam
//   gpuperf_advise --fit --layers 12 --hidden 768 --heads 12 --sequence-length 1024
//       --vocab 50257 --batch-size 8 --gpu h200

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/advise/advisor.h"
#include "gpuperf/advise/fit.h"
#include "gpuperf/base/choices.h"
#include "gpuperf/base/error.h"
#include "gpuperf/plan/memory_plan.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/specs.h"
#include "program.h"
#include "specs_option.h"

namespace {

// The options as typed: the request's fields that take other units (GB, ms) or words (the mode,
// precision and optimizer, which --fit reads in the memory planner's words) stay apart until
// checked.
struct AdviseOptions {
  gpuperf::AdvisorRequest request;
  std::string mode = "train", precision = "bf16", optimizer;
  std::vector<std::string> results, specs_extra, prices;
  std::string specs_path, published_path, default_prices_path;
  double activation_gb = -1;
  double latency_budget_ms = 0;
  bool no_published = false, no_default_prices = false;
  std::size_t top = 0;
  // --fit: the memory planner's options, in the units typed (GB, GB/s).
  bool fit = false;
  std::string gpu, optimizer_step = "fused";
  std::int64_t layers = 0, hidden = 0, heads = 0, vocab = 0;
  bool no_flash_attention = false;
  double activation_bytes_per_sample = 0, host_bandwidth_gbs = 0;
  gpuperf::MemoryOverheads overheads;
  double cuda_context_gb = overheads.cuda_context_bytes / 1e9;
  double workspace_gb = overheads.workspace_bytes / 1e9;
  double graph_pool_gb = 0;
};

// Options that only the ranking reads, and those that only --fit reads: given to the other mode,
// each is refused rather than silently ignored.
constexpr const char* kRankingOnly[] = {"--mode",
                                        "--activation-gb",
                                        "--budget",
                                        "--price-per-hour",
                                        "--price",
                                        "--epochs",
                                        "--tokens",
                                        "--utilization",
                                        "--latency-budget-ms",
                                        "--results",
                                        "--top",
                                        "--published",
                                        "--no-published",
                                        "--host-cores-per-gpu",
                                        "--default-prices",
                                        "--no-default-prices"};
constexpr const char* kFitOnly[] = {"--gpu",
                                    "--layers",
                                    "--hidden",
                                    "--heads",
                                    "--vocab",
                                    "--no-flash-attention",
                                    "--activation-bytes-per-sample",
                                    "--optimizer-step",
                                    "--host-bandwidth-gbs",
                                    "--cuda-context-gb",
                                    "--workspace-gb",
                                    "--graph-pool-gb",
                                    "--fragmentation"};

// Numeric limits checked as the options are read, quoting the value as typed: the request
// holds some in other units (bytes, seconds), and 1e300 parameters or GB would overflow them.
CLI::Validator rule(bool (*ok)(double), const std::string& text) {
  return gpuperf::program::number_rule(ok, text);
}

void add_fit_options(CLI::App& app, AdviseOptions& o) {
  app.add_flag("--fit", o.fit,
               "the fit mode, as the ranking's reasons call it: will it fit? per-GPU training "
               "memory under each strategy (data parallel, ZeRO-1/2/3, + checkpointing, + offload) "
               "and the strategy each GPU needs; "
               "--precision fp32|amp-fp16|amp-bf16|pure-bf16 (fp16, bf16: AMP), --optimizer "
               "sgd|sgd-plain|adam|adamw, --batch-size is the micro-batch (default 1)");
  app.add_option("--gpu", o.gpu, "--fit: one datasheet GPU (id or name) instead of all");
  const auto count = [](double v) { return v >= 1 && v <= 1099511627776.0; };
  app.add_option("--layers", o.layers, "--fit: transformer blocks L")
      ->check(rule(count, ">= 1 and <= 2^40"));
  app.add_option("--hidden", o.hidden, "--fit: transformer width h")
      ->check(rule(count, ">= 1 and <= 2^40"));
  app.add_option("--heads", o.heads, "--fit: attention heads a")
      ->check(rule(count, ">= 1 and <= 2^40"));
  app.add_option("--vocab", o.vocab, "--fit: vocabulary size V")
      ->check(rule(count, ">= 1 and <= 2^40"));
  app.add_flag("--no-flash-attention", o.no_flash_attention,
               "--fit: attention stores its a x s x s scores (Korthikanti's 5 a s^2 b term)");
  app.add_option("--activation-bytes-per-sample", o.activation_bytes_per_sample,
                 "--fit: measured activation bytes per sample (a CNN's slope of peak over batch)")
      ->check(rule([](double v) { return v > 0 && v <= 1e15; }, "> 0 and <= 1e15"));
  app.add_option("--optimizer-step", o.optimizer_step,
                 "--fit: fused (no temporaries) or foreach (Adam holds a sqrt(v) temporary)")
      ->capture_default_str();
  app.add_option("--host-bandwidth-gbs", o.host_bandwidth_gbs,
                 "--fit: measured host-to-device GB/s for the offload time (default: datasheet "
                 "PCIe x16)")
      ->check(rule([](double v) { return v > 0 && v <= 1e6; }, "> 0 and <= 1e6"));
  app.add_option("--cuda-context-gb", o.cuda_context_gb, "--fit: CUDA context (GB)")
      ->capture_default_str()
      ->check(rule([](double v) { return v >= 0 && v <= 1e6; }, ">= 0 and <= 1e6"));
  app.add_option("--workspace-gb", o.workspace_gb, "--fit: cuDNN/cuBLAS workspaces (GB)")
      ->capture_default_str()
      ->check(rule([](double v) { return v >= 0 && v <= 1e6; }, ">= 0 and <= 1e6"));
  app.add_option("--graph-pool-gb", o.graph_pool_gb, "--fit: CUDA-graph memory pool (GB)")
      ->capture_default_str()
      ->check(rule([](double v) { return v >= 0 && v <= 1e6; }, ">= 0 and <= 1e6"));
  app.add_option("--fragmentation", o.overheads.fragmentation_factor,
                 "--fit: caching allocator's reserved / allocated factor")
      ->capture_default_str()
      ->check(rule([](double v) { return v >= 1 && v <= 10; }, ">= 1 and <= 10"));
}

void add_options(CLI::App& app, AdviseOptions& o) {
  gpuperf::AdvisorRequest& request = o.request;
  app.add_option("--model", request.model, "a counted model: simple, resnet50");
  app.add_option("--parameters", request.parameters, "trainable parameters (e.g. 7e9)")
      ->check(rule([](double v) { return v > 0 && v <= 1e15; }, "> 0 and <= 1e15"));
  app.add_option("--mode", o.mode, "train or inference")->capture_default_str();
  app.add_option("--precision", o.precision, "fp32, tf32, fp16, bf16 (int8, fp8: inference)")
      ->capture_default_str();
  app.add_option("--optimizer", o.optimizer,
                 "adam, adamw or sgd (default: the model's usual one: sgd for resnet50, adam "
                 "otherwise)");
  app.add_option("--batch-size", request.batch_size, "samples per GPU per step")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--sequence-length", request.sequence_length,
                 "tokens per sample for a parameter-count model")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--activation-gb", o.activation_gb, "activation memory per GPU, if known (GB)")
      ->check(rule([](double v) { return v >= 0 && v <= 1e9; }, ">= 0 and <= 1e9"));
  app.add_option("--budget", request.budget_usd,
                 "budget for all GPUs (USD): their purchase price, or with --epochs/--tokens and "
                 "a rental price the run's cost")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--gpus", request.gpu_count, "number of GPUs")
      ->capture_default_str()
      ->check(rule([](double v) { return v >= 1 && v <= 4096; }, "1..4096"));
  app.add_option("--price-per-hour", request.price_per_hour_usd,
                 "rental price per GPU-hour (USD) of every GPU without its own --price "
                 "(default: the default table's on-demand price, else the purchase price written "
                 "off over 3 years, plus energy)")
      ->check(rule([](double v) { return v >= 0; }, ">= 0"));
  app.add_option("--price", o.prices,
                 "GPU=USD: rental price per GPU-hour of one GPU (datasheet id, name or device "
                 "name, as --fit --gpu takes it), > 0; repeat for more GPUs");
  const auto run_length = [](double v) { return v > 0 && std::isfinite(v); };
  app.add_option("--epochs", request.epochs,
                 "train, an image model: a run of N ImageNet-1k epochs (1,281,167 images each); "
                 "each GPU gets the run's hours and cost")
      ->check(rule(run_length, "> 0"));
  app.add_option("--tokens", request.tokens,
                 "train, a parameter-count model: a run of N tokens (N / --sequence-length "
                 "samples); each GPU gets the run's hours and cost")
      ->check(rule(run_length, "> 0"));
  app.add_option("--utilization", request.assumed_utilization,
                 "fraction of peak assumed when no measured or PyTorch published figure exists to "
                 "scale from")
      ->capture_default_str()
      ->check(rule([](double v) { return v > 0 && v <= 1; }, "> 0 and <= 1"));
  app.add_option("--latency-budget-ms", o.latency_budget_ms,
                 "inference: largest p99 per-call latency allowed (ms), checked against measured "
                 "inference results; a GPU without one gets no throughput")
      ->check(rule([](double v) { return v > 0; }, "> 0"));
  app.add_option("--results", o.results,
                 "result files with measured figures (training runs or inference results)");
  app.add_option("--host-cores-per-gpu", request.host_cores_per_gpu,
                 "train: host CPU cores decoding JPEGs per GPU; with a run measured on files "
                 "(--data) in --results, each GPU's rate is capped at what they decode")
      ->check(rule([](double v) { return v > 0 && v <= 4096; }, "> 0 and <= 4096"));
  app.add_flag("--include-reference", request.include_reference_only,
               "also rank reference-only entries (e.g. AMD MI300X)");
  app.add_option("--top", o.top, "show only the best N");
  app.add_option("--specs", o.specs_path, "spec database file (default: shipped one)");
  app.add_option("--specs-extra", o.specs_extra, "user spec files adding or overriding entries");
  app.add_option("--published", o.published_path,
                 "published-results file (default: shipped one); PyTorch figures rank as "
                 "'published' and scale estimates, MLPerf ones rank in their own tier only");
  app.add_flag("--no-published", o.no_published, "do not use published figures");
  auto* table = app.add_option("--default-prices", o.default_prices_path,
                               "default rental-price table (default: shipped "
                               "gpu_rental_prices.json): a GPU given no --price and no "
                               "--price-per-hour is costed at its dated on-demand price there");
  app.add_flag("--no-default-prices", o.no_default_prices,
               "no default rental prices: a GPU given no price is costed at its datasheet "
               "purchase price (3 years of 24/7 use, plus energy)")
      ->excludes(table);
  add_fit_options(app, o);
}

// The mode, precision and optimizer as the ranking reads them (inference reads no optimizer).
void set_workload_in_request(AdviseOptions& o) {
  const auto bad = [](const char* option, const std::string& text, const char* why) {
    throw gpuperf::ConfigError(option, "'" + text + "' " + why);
  };
  gpuperf::AdvisorRequest& request = o.request;
  if (o.mode == "train") {
    request.mode = gpuperf::WorkloadKind::kTrain;
  } else if (o.mode == "inference") {
    request.mode = gpuperf::WorkloadKind::kInference;
  } else {
    bad("--mode", o.mode, "is not train or inference");
  }
  const bool inference = request.mode == gpuperf::WorkloadKind::kInference;
  const auto formats = gpuperf::numeric_format_names();
  if (std::find(formats.begin(), formats.end(), o.precision) == formats.end()) {
    bad("--precision", o.precision,
        "is not one of fp32, tf32, fp16, bf16 (int8 and fp8 for inference only)");
  }
  request.precision = gpuperf::parse_numeric_format(o.precision);
  if (inference || o.optimizer.empty()) return;
  const auto optimizers = gpuperf::optimizer_names();
  if (std::find(optimizers.begin(), optimizers.end(), o.optimizer) == optimizers.end()) {
    bad("--optimizer", o.optimizer, "is not adam, adamw or sgd");
  }
  request.optimizer = gpuperf::parse_optimizer(o.optimizer);
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
    if (o.mode != "inference") {  // as typed: checked before the mode itself, as it always was
      throw gpuperf::ConfigError("--latency-budget-ms: '" +
                                 app.get_option("--latency-budget-ms")->as<std::string>() +
                                 "' applies to --mode inference only (mode is '" + o.mode + "')");
    }
    if (!(o.latency_budget_ms > 0) || !std::isfinite(o.latency_budget_ms)) {
      throw gpuperf::ConfigError("--latency-budget-ms: must be > 0, got " +
                                 std::to_string(o.latency_budget_ms));
    }
    o.request.latency_budget_seconds = o.latency_budget_ms * 1e-3;
  }
}

// --price GPU=USD, each checked as typed; the advisor resolves the names against the datasheet
// (unknown GPUs, two names of one entry).
void set_prices_in_request(AdviseOptions& o) {
  for (const std::string& text : o.prices) {
    const auto bad = [&](const std::string& why) {
      std::string message = "'";
      message += text;
      message += "' ";
      message += why;
      throw gpuperf::ConfigError("--price", message);
    };
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos) bad("is not GPU=USD (no '=')");
    const std::string gpu = text.substr(0, eq);
    const std::string usd = text.substr(eq + 1);
    if (gpu.empty()) bad("names no GPU before '='");
    const bool decimal = !usd.empty() &&
                         usd.find_first_not_of("0123456789+-.eE") == std::string::npos &&
                         usd.find_first_of("0123456789") != std::string::npos;
    char* end = nullptr;
    const double price = decimal ? std::strtod(usd.c_str(), &end) : 0;
    if (!decimal || end != usd.c_str() + usd.size()) bad("has no number after '='");
    if (!(price > 0 && std::isfinite(price))) bad("must be a finite price > 0 USD per GPU-hour");
    if (!o.request.price_per_hour_by_gpu.emplace(gpu, price).second) {
      bad("prices " + gpu + " a second time");
    }
  }
}

// The options given to the mode that does not read them.
void refuse_other_mode_options(const CLI::App& app, const AdviseOptions& o) {
  if (o.fit) {
    for (const char* name : kRankingOnly) {
      if (app.count(name) > 0) {
        throw gpuperf::ConfigError(std::string(name) + ": applies to the ranking, not to --fit");
      }
    }
  } else {
    for (const char* name : kFitOnly) {
      if (app.count(name) > 0) throw gpuperf::ConfigError(std::string(name) + ": needs --fit");
    }
  }
}

// The planner's request from the options, each checked once here so that errors name them.
gpuperf::FitRequest fit_request(const CLI::App& app, const AdviseOptions& o) {
  const gpuperf::AdvisorRequest& a = o.request;
  gpuperf::FitRequest request;
  gpuperf::MemoryPlanRequest& plan = request.plan;
  request.gpu = o.gpu;
  request.include_reference_only = a.include_reference_only;
  plan.precision = gpuperf::parse_training_precision(o.precision);
  // No optimizer given: the model's usual one (optimizer_for()), as the ranking counts it.
  plan.optimizer = o.optimizer.empty() ? gpuperf::plan_optimizer(gpuperf::optimizer_for(a))
                                       : gpuperf::parse_plan_optimizer(o.optimizer);
  if (o.optimizer_step != "fused" && o.optimizer_step != "foreach") {
    throw gpuperf::ConfigError("--optimizer-step: unknown value '" + o.optimizer_step +
                               "' (choose fused or foreach)");
  }
  plan.fused_optimizer = o.optimizer_step == "fused";
  plan.model.parameters = a.parameters;
  const int shape_options = static_cast<int>(app.count("--layers") + app.count("--hidden") +
                                             app.count("--heads") + app.count("--vocab"));
  if (shape_options > 0) {
    if (shape_options < 4 || a.sequence_length < 1) {
      throw gpuperf::ConfigError(
          "--layers: a transformer needs --layers, --hidden, --heads, --vocab and "
          "--sequence-length together");
    }
    gpuperf::TransformerShape t;
    t.layers = o.layers;
    t.hidden = o.hidden;
    t.heads = o.heads;
    t.vocab = o.vocab;
    t.sequence = a.sequence_length;
    t.flash_attention = !o.no_flash_attention;
    plan.model.transformer = t;
  } else if (app.count("--no-flash-attention") > 0) {
    throw gpuperf::ConfigError("--no-flash-attention: needs a transformer shape (--layers ...)");
  }
  if (!a.model.empty() && std::isnan(a.parameters)) {
    const auto count = gpuperf::count_model(a.model);
    if (!count) {
      throw gpuperf::ConfigError("--model: '" + a.model +
                                 "' has no built-in count (known: simple, resnet50): give a "
                                 "parameter count");
    }
    plan.model.parameters = count->parameters;
  }
  if (app.count("--activation-bytes-per-sample") > 0) {
    plan.model.activation_bytes_per_sample = o.activation_bytes_per_sample;
  }
  plan.micro_batch = a.batch_size > 0 ? a.batch_size : 1;
  plan.strategy.gpus = a.gpu_count;
  if (app.count("--host-bandwidth-gbs") > 0) {
    plan.strategy.host_link_bytes_per_s = o.host_bandwidth_gbs * 1e9;
  }
  plan.overheads = o.overheads;
  plan.overheads.cuda_context_bytes = o.cuda_context_gb * 1e9;
  plan.overheads.workspace_bytes = o.workspace_gb * 1e9;
  plan.overheads.cuda_graph_pool_bytes = o.graph_pool_gb * 1e9;
  plan.validate();
  return request;
}

int fit(const CLI::App& app, const AdviseOptions& o) {
  const gpuperf::FitRequest request = fit_request(app, o);
  const auto db = gpuperf::program::load_specs(o.specs_path, o.specs_extra, true);
  const gpuperf::FitAdvice advice = gpuperf::advise_fit(request, *db);
  gpuperf::write_fit(std::cout, request, advice);
  return gpuperf::program::kExitOk;
}

int advise(const AdviseOptions& o) {
  o.request.validate();
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
  std::vector<gpuperf::RentalPrice> prices;
  if (!o.no_default_prices)
    prices = gpuperf::program::load_default_prices(o.default_prices_path, *db);
  auto ranking = gpuperf::advise_with(o.request, *db, runs, published, prices);
  if (o.top > 0 && ranking.size() > o.top) ranking.resize(o.top);
  gpuperf::write_advice(std::cout, o.request, ranking);
  return gpuperf::program::kExitOk;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"Rank GPUs for a training or inference workload, with reasons", "gpuperf_advise"};
  AdviseOptions options;
  add_options(app, options);
  return gpuperf::program::run_program(app, argc, argv, [&] {
    refuse_other_mode_options(app, options);
    if (options.fit) return fit(app, options);
    set_sizes_in_request(app, options);
    set_prices_in_request(options);
    set_workload_in_request(options);
    return advise(options);
  });
} catch (...) {
  return gpuperf::program::setup_failed("gpuperf_advise");
}
