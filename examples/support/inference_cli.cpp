#include "inference_cli.h"

#include "parse_command_line.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "training_cli.h"
#include "gpuperf/base/error.h"
#include "gpuperf/results/inference_result.h"
#include "gpuperf/base/choices.h"

namespace gpuperf {
namespace {

using detail::require;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  if (!text.empty() && text.back() == ',') items.emplace_back();
  return items;
}

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> values;
  for (const auto& item : split_commas(text)) {
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) {
      throw ConfigError("--" + option + ": '" + text +
                        "' is not a comma-separated list of integers");
    }
    if (value <= 0) {
      throw ConfigError("--" + option + ": a batch size must be > 0, got " + std::to_string(value));
    }
    values.push_back(value);
  }
  if (values.empty()) throw ConfigError("--" + option + ": no batch sizes in '" + text + "'");
  return values;
}

std::vector<double> parse_rate_list(const std::string& text, const std::string& option) {
  std::vector<double> values;
  for (const auto& item : split_commas(text)) {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) {
      throw ConfigError("--" + option + ": '" + text +
                        "' is not a comma-separated list of numbers");
    }
    if (!(value > 0) || !std::isfinite(value)) {
      throw ConfigError("--" + option + ": a rate must be > 0 requests/s, got '" + item + "'");
    }
    values.push_back(value);
  }
  if (values.empty()) throw ConfigError("--" + option + ": no rates in '" + text + "'");
  return values;
}

}  // namespace

std::vector<std::int64_t> InferenceBenchmarkArgs::planned_batch_sizes() const {
  return sweep_batch_sizes(batch_sizes, max_batch);
}

ParsedInferenceArgs parse_inference_benchmark_args(int argc, const char* const* argv,
                                                   std::ostream& out, std::ostream& err) {
  ParsedInferenceArgs parsed;
  InferenceBenchmarkArgs& a = parsed.args;
  a.command_line = join_command_line(argc, argv);
  std::string batch_sizes_text;
  std::string serve_rates_text;

  CLI::App app(
      "gpuperf inference benchmark: per-call latency percentiles and throughput over a "
      "batch-size sweep, and an optional serving sweep (simulated or measured)",
      "inference_benchmark");
  app.option_defaults()->always_capture_default();
  app.add_option("--device", a.device, "auto, cpu, cuda or cuda:N (auto: a GPU if there is one)");
  app.add_option("--model", a.model, "registered model name (see --list-models)");
  app.add_flag("--list-models", parsed.list_models, "print the registered models and exit");
  app.add_option("--num-classes", a.num_classes, "model outputs (0: the model's default)");
  app.add_option("--precision", a.precision,
                 "auto|fp32|tf32|fp16|bf16 (auto: fp16 on CUDA, fp32 on CPU); fp16/bf16 convert "
                 "the model and inputs");
  app.add_option("--memory-format", a.memory_format, "contiguous|channels_last");
  app.add_option("--graph", a.graph, "auto|on|off: replay a captured CUDA graph (auto: on CUDA)");
  app.add_option("--fuse", a.fuse,
                 "auto|on|off: fold BatchNorm into the convolutions and fuse bias, shortcut add "
                 "and ReLU into cuDNN calls, for models that support it (auto: on CUDA)");
  auto* sizes =
      app.add_option("--batch-sizes", batch_sizes_text, "batch sizes to measure, e.g. 1,8,64");
  auto* max_batch =
      app.add_option("--max-batch", a.max_batch,
                     "doubling sweep 1, 2, 4, ... up to N, stopping early on out-of-memory");
  sizes->excludes(max_batch);
  app.add_option("--warmup", a.warmup, "untimed calls per batch size");
  app.add_option("--iterations", a.iterations, "timed calls per batch size");
  app.add_flag("--cudnn-benchmark,!--no-cudnn-benchmark", a.cudnn_benchmark, "cuDNN autotuning");
  app.add_option(
      "--serve-rates", serve_rates_text,
      "offered request rates (req/s) for the serving sweep (see --serve-mode), e.g. 100,500,2000");
  app.add_option("--max-batch-delay-ms", a.max_batch_delay_ms,
                 "serving: longest a request waits for a fuller batch, ms");
  app.add_option("--serve-max-batch", a.serve_max_batch,
                 "serving: largest batch the server forms (0: the largest measured)");
  app.add_option("--serve-requests", a.serve_requests,
                 "serving: requests per rate (measured mode: at most this many)");
  app.add_option("--serve-mode", a.serve_mode,
                 "serving: simulated (a model driven by the measured call times) or measured "
                 "(Poisson arrivals in real time, every batch executed on the device)");
  app.add_option("--serve-seconds", a.serve_seconds,
                 "measured serving: seconds of arrivals per rate (at least 100 requests)");
  app.add_option("--seed", a.seed, "random seed for weights, inputs and arrivals");
  app.add_option("--threads", a.threads, "CPU intra-op threads (0: LibTorch's default)");
  app.add_option("--json", a.json_path, "write the result here (default: no file)");
  std::int64_t keep_latencies = static_cast<std::int64_t>(a.keep_latencies);
  app.add_option("--keep-latencies", keep_latencies,
                 "per-call latencies stored per batch size in the JSON result, spread evenly over "
                 "the timed calls (0: none; at most 100000)");
  app.add_flag("--quiet,-q", a.quiet, "no progress lines");

  parsed.exit_code = detail::parse_command_line(
      app, argc, argv,
      [&] {
        if (!batch_sizes_text.empty() || sizes->count() > 0) {
          a.batch_sizes = parse_int_list(batch_sizes_text, "batch-sizes");
        }
        if (!serve_rates_text.empty() || app.get_option("--serve-rates")->count() > 0) {
          a.serve_rates = parse_rate_list(serve_rates_text, "serve-rates");
        }
        require(a.max_batch >= 1, "max-batch", a.max_batch, ">= 1");
        require(a.num_classes >= 0, "num-classes", a.num_classes, ">= 0 (0: the model's default)");
        require(a.warmup >= 0, "warmup", a.warmup, ">= 0");
        require(a.iterations >= 1, "iterations", a.iterations, ">= 1");
        require(a.max_batch_delay_ms >= 0 && std::isfinite(a.max_batch_delay_ms),
                "max-batch-delay-ms", a.max_batch_delay_ms, ">= 0");
        require(a.serve_max_batch >= 0, "serve-max-batch", a.serve_max_batch,
                ">= 0 (0: the largest measured batch size)");
        require(a.serve_requests >= 1, "serve-requests", a.serve_requests, ">= 1");
        require(a.serve_seconds > 0 && std::isfinite(a.serve_seconds), "serve-seconds",
                a.serve_seconds, "> 0");
        if (a.serve_mode != "simulated" && a.serve_mode != "measured") {
          throw ConfigError("--serve-mode: unknown value '" + a.serve_mode +
                            "' (choose simulated or measured)");
        }
        require(a.threads >= 0, "threads", a.threads, ">= 0");
        require(
            keep_latencies >= 0 && keep_latencies <= static_cast<std::int64_t>(kMaxStoredLatencies),
            "keep-latencies", keep_latencies, "0..100000");
        a.keep_latencies = static_cast<std::size_t>(keep_latencies);
        detail::check_switch("graph", a.graph);
        detail::check_switch("fuse", a.fuse);
        if (a.precision != "auto") (void)parse_precision(a.precision);
        (void)parse_memory_format(a.memory_format);
        const auto planned = a.planned_batch_sizes();
        const auto largest = *std::max_element(planned.begin(), planned.end());
        if (a.serve_max_batch > largest) {
          throw ConfigError("--serve-max-batch: " + std::to_string(a.serve_max_batch) +
                            " exceeds the largest batch size measured, " + std::to_string(largest) +
                            " (service times are measured, never extrapolated)");
        }
      },
      out, err);
  return parsed;
}

}  // namespace gpuperf
