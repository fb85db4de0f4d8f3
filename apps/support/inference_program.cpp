#include "inference_program.h"

#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/files.h"
#include "gpuperf/infer/inference_run.h"
#include "gpuperf/models/registry.h"
#include "kernel_trace_option.h"
#include "memory_errors.h"
#include "program.h"
#include "torch_version.h"

namespace gpuperf::program {
namespace {

constexpr double kMinServeRate = 0.001;  // requests/s
constexpr double kMaxServeRate = 1e9;
constexpr std::int64_t kMaxServeRequests = 10000000;
constexpr double kMaxBatchDelayMs = 86400e3;  // a day

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  if (!text.empty() && text.back() == ',') items.emplace_back();
  return items;
}

// The errors of the list parsers, built here rather than in their loops.
ConfigError not_a_list(const std::string& option, const std::string& text, const char* of) {
  return ConfigError("--" + option + ": '" + text + "' is not a comma-separated list of " + of);
}

ConfigError bad_rate(const std::string& option, const char* bound, const std::string& item) {
  return ConfigError("--" + option + ": a rate must be " + bound + " requests/s, got '" + item +
                     "'");
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
      throw not_a_list(option, text, "integers");
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
      throw not_a_list(option, text, "numbers");
    }
    if (!(value > 0) || !std::isfinite(value)) {
      throw bad_rate(option, "> 0", item);
    }
    // Slower arrivals put them so far apart that a service time no longer shows in their sum
    // (1e-300 requests/s reported 0.000 ms latencies), and measured serving would wait for days.
    if (value > kMaxServeRate) {
      throw bad_rate(option, "<= 1e9", item);
    }
    if (value < kMinServeRate) {
      throw bad_rate(option, ">= 0.001", item);
    }
    values.push_back(value);
  }
  if (values.empty()) throw ConfigError("--" + option + ": no rates in '" + text + "'");
  return values;
}

// The options as typed: lists, enums and switches stay text until parsed, once, into the run.
struct InferenceOptionsText {
  InferenceRun run;
  std::string precision = "auto";
  std::string memory_format = "contiguous";
  std::string graph = "auto";
  std::string fuse = "auto";
  std::string serve_mode = "simulated";
  std::string batch_sizes;
  std::string serve_rates;
  std::int64_t keep_latencies = 1000;
  ResultPaths results;
  bool list_models = false;
};

void add_sweep_options(CLI::App& app, InferenceOptionsText& o) {
  InferenceRun& r = o.run;
  app.add_option("--device", r.device, "auto, cpu, cuda or cuda:N (auto: a GPU if there is one)");
  app.add_option("--model", r.model, "registered model name (see --list-models)");
  app.add_flag("--list-models", o.list_models, "print the registered models and exit");
  app.add_option("--num-classes", r.num_classes, "model outputs (0: the model's default)");
  app.add_option("--precision", o.precision,
                 "auto|fp32|tf32|fp16|bf16 (auto: fp16 on CUDA, fp32 on CPU); fp16/bf16 convert "
                 "the model and inputs");
  app.add_option("--memory-format", o.memory_format, "contiguous|channels_last");
  app.add_option("--graph", o.graph, "auto|on|off: replay a captured CUDA graph (auto: on CUDA)");
  app.add_option("--fuse", o.fuse,
                 "auto|on|off: fold BatchNorm into the convolutions, run convolution + bias "
                 "(+ shortcut) + ReLU as one cuDNN call, and in ResNets the stem's input padded "
                 "to 4 channels and the pools on gpuperf's own kernels; for models that "
                 "support it, on is refused for others (auto: on CUDA)");
  auto* sizes =
      app.add_option("--batch-sizes", o.batch_sizes, "batch sizes to measure, e.g. 1,8,64");
  auto* max_batch =
      app.add_option("--max-batch", r.max_batch,
                     "doubling sweep 1, 2, 4, ... up to N, stopping early on out-of-memory");
  sizes->excludes(max_batch);
  app.add_option("--warmup", r.warmup, "untimed calls per batch size");
  app.add_option("--iterations", r.iterations, "timed calls per batch size");
  add_switch(app, "cudnn-benchmark", r.cudnn_benchmark, "cuDNN autotuning");
  app.add_option("--cudnn-benchmark-from", r.cudnn_benchmark_from_batch,
                 "the smallest batch size cuDNN autotunes; smaller ones take cuDNN's heuristics");
}

void add_serving_options(CLI::App& app, InferenceOptionsText& o) {
  InferenceRun& r = o.run;
  app.add_option(
      "--serve-rates", o.serve_rates,
      "offered request rates (req/s) for the serving sweep (see --serve-mode), e.g. 100,500,2000");
  app.add_option("--max-batch-delay-ms", r.max_batch_delay_ms,
                 "serving: longest a request waits for a fuller batch, ms")
      ->check(number_rule([](double v) { return v >= 0 && v <= kMaxBatchDelayMs; },
                          ">= 0 and <= 86400000 (a day)"));
  app.add_option("--serve-max-batch", r.serve_max_batch,
                 "serving: largest batch the server forms (0: the largest measured)");
  app.add_option("--serve-requests", r.serve_requests,
                 "serving: requests per rate (measured mode: at most this many)")
      ->check(number_rule([](double v) { return v >= 1 && v <= kMaxServeRequests; },
                          ">= 1 and <= " + std::to_string(kMaxServeRequests)));
  app.add_option("--serve-mode", o.serve_mode,
                 "serving: simulated (a model driven by the measured call times) or measured "
                 "(Poisson arrivals in real time, every batch executed on the device)");
  app.add_option("--serve-seconds", r.serve_seconds,
                 "measured serving: seconds of arrivals per rate (at least 100 requests)")
      ->check(
          number_rule([](double v) { return v > 0 && v <= 86400; }, "> 0 and <= 86400 (a day)"));
  app.add_option("--seed", r.seed, "random seed for weights, inputs and arrivals");
  app.add_option("--threads", r.threads, "CPU intra-op threads (0: LibTorch's default)");
  add_result_options(app, o.results, "write the result here (default: no file)");
  app.add_option("--keep-latencies", o.keep_latencies,
                 "per-call latencies stored per batch size in the JSON result, spread evenly over "
                 "the timed calls (0: none; at most 100000)");
  app.add_flag("--quiet,-q", r.quiet, "no progress lines");
  add_kernel_trace_option(app, r.kernel_trace,
                          "make 10 more calls at each measured batch size (after 3 untraced)");
}

// The text options, parsed once into the run's typed fields.
InferenceRun typed_run(const CLI::App& app, const InferenceOptionsText& o) {
  InferenceRun run = o.run;
  if (app.get_option("--batch-sizes")->count() > 0) {
    run.batch_sizes = parse_int_list(o.batch_sizes, "batch-sizes");
  }
  if (app.get_option("--serve-rates")->count() > 0) {
    run.serve_rates = parse_rate_list(o.serve_rates, "serve-rates");
  }
  require_setting(o.keep_latencies >= 0, "keep-latencies", o.keep_latencies, "0..100000");
  run.keep_latencies = static_cast<std::size_t>(o.keep_latencies);
  if (o.precision != "auto") run.precision = parse_precision(o.precision);
  run.memory_format = parse_memory_format(o.memory_format);
  run.cuda_graph = parse_switch(o.graph, "graph");
  run.kernel_fusion = parse_switch(o.fuse, "fuse");
  run.serve_mode = parse_serve_mode(o.serve_mode);
  return run;
}

}  // namespace

int run_inference_program(int argc, const char* const* argv) {
  InferenceOptionsText o;
  o.run.command_line = join_command_line(argc, argv);
  CLI::App app(
      "gpuperf inference benchmark: per-call latency percentiles and throughput over a "
      "batch-size sweep, and an optional serving sweep (simulated or measured)",
      "inference_benchmark");
  app.option_defaults()->always_capture_default();
  add_sweep_options(app, o);
  add_serving_options(app, o);
  add_torch_version_flag(app);
  return run_program(app, argc, argv, [&] {
    if (o.list_models) {
      write_text(std::cout, ModelRegistry::global());
      return kExitOk;
    }
    const InferenceRun run = typed_run(app, o);
    // Refuse a bad output path before the run, not after it; run_inference() validates the rest
    // before anything runs.
    const ResultOutputs outputs = result_outputs(o.results);
    outputs.check();
    check_kernel_trace(run.kernel_trace);
    const std::string sizes = app.count("--batch-sizes") > 0
                                  ? "--batch-sizes " + o.batch_sizes
                                  : "--max-batch " + std::to_string(run.max_batch);
    return with_memory_errors(sizes, [&] {
      const InferenceResult result = run_inference(run);
      write_text(outputs.console(), result);
      write_results(outputs, result);
      return kExitOk;
    });
  });
}

}  // namespace gpuperf::program
