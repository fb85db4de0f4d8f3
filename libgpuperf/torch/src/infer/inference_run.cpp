// run_inference(): validate -> resolve -> sweep -> serving, each once.
#include "gpuperf/infer/inference_run.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <thread>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/base/log.h"
#include "gpuperf/base/timestamp.h"
#include "gpuperf/device/device.h"
#include "gpuperf/device/kernel_trace.h"
#include "gpuperf/infer/inference.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/serving/serving.h"

namespace gpuperf {

ServeMode parse_serve_mode(const std::string& text, const std::string& option) {
  if (text == "simulated") return ServeMode::kSimulated;
  if (text == "measured") return ServeMode::kMeasured;
  throw ConfigError(option, "unknown value '" + text + "' (choose simulated or measured)");
}

std::vector<std::int64_t> InferenceRun::planned_batch_sizes() const {
  return sweep_batch_sizes(batch_sizes, max_batch);
}

void InferenceRun::validate() const {
  RunBasics::validate();
  for (std::size_t i = 0; i < batch_sizes.size(); ++i) {
    if (batch_sizes[i] <= 0) {
      throw ConfigError("InferenceRun::batch_sizes",
                        "a batch size must be > 0, got " + std::to_string(batch_sizes[i]));
    }
    // The result keys its rows by batch size: a repeat would write a file no reader accepts.
    for (std::size_t j = 0; j < i; ++j) {
      if (batch_sizes[j] == batch_sizes[i]) {
        throw ConfigError("InferenceRun::batch_sizes",
                          std::to_string(batch_sizes[i]) + " is listed twice");
      }
    }
  }
  for (const double rate : serve_rates) {
    require_setting(rate > 0 && rate <= 1e9, "InferenceRun::serve_rates", rate,
                    "> 0 and <= 1e9 requests/s");
  }
  require_setting(max_batch >= 1, "InferenceRun::max_batch", max_batch, ">= 1");
  require_setting(num_classes >= 0, "InferenceRun::num_classes", num_classes,
                  ">= 0 (0: the model's default)");
  require_setting(warmup >= 0, "InferenceRun::warmup", warmup, ">= 0");
  require_setting(iterations >= 1, "InferenceRun::iterations", iterations, ">= 1");
  require_setting(cudnn_benchmark_from_batch >= 1, "InferenceRun::cudnn_benchmark_from_batch",
                  cudnn_benchmark_from_batch, ">= 1");
  require_setting(max_batch_delay_ms >= 0 && std::isfinite(max_batch_delay_ms),
                  "InferenceRun::max_batch_delay_ms", max_batch_delay_ms, ">= 0");
  require_setting(serve_max_batch >= 0, "InferenceRun::serve_max_batch", serve_max_batch,
                  ">= 0 (0: the largest measured batch size)");
  require_setting(serve_requests >= 1, "InferenceRun::serve_requests", serve_requests, ">= 1");
  require_setting(serve_seconds > 0 && serve_seconds <= kMaxRunSeconds,
                  "InferenceRun::serve_seconds", serve_seconds, "> 0 and <= 86400 (a day)");
  require_setting(keep_latencies <= kMaxStoredLatencies, "InferenceRun::keep_latencies",
                  keep_latencies, "0..100000");
  const auto planned = planned_batch_sizes();
  const auto largest = *std::max_element(planned.begin(), planned.end());
  if (serve_max_batch > largest) {
    throw ConfigError("InferenceRun::serve_max_batch",
                      std::to_string(serve_max_batch) +
                          " exceeds the largest batch size measured, " + std::to_string(largest) +
                          " (service times are measured, never extrapolated)");
  }
  if (ModelRegistry::global().get(model).task != ModelTask::kImageClassification) {
    throw ConfigError("InferenceRun::model", model,
                      "is a language model; inference is measured for image classifiers");
  }
}

namespace {

// The smallest batch size of `sizes` (ascending) that holds `n` requests.
std::int64_t padded_size(const std::vector<std::int64_t>& sizes, std::int64_t n) {
  return *std::lower_bound(sizes.begin(), sizes.end(), n);
}

ServingOptions serving_options(const InferenceRun& run, std::int64_t largest) {
  ServingOptions options;
  options.max_batch = run.serve_max_batch > 0 ? run.serve_max_batch : largest;
  if (options.max_batch > largest) {
    // Only after an out-of-memory cut the sweep short: serve with what was measured.
    log::warn(log::cat("serve_max_batch ", run.serve_max_batch, ": only batch sizes up to ",
                       largest, " were measured; the simulated server batches up to ", largest));
    options.max_batch = largest;
  }
  options.max_queue_delay = run.max_batch_delay_ms * 1e-3;
  options.requests = run.serve_requests;
  options.seed = static_cast<std::uint64_t>(run.seed) + 1;
  return options;
}

// The serving sweep. Simulated: the measured median call time of each batch size is the time the
// server needs for a batch of that size. Measured: each batch runs on the device, padded to the
// next measured batch size (one input and, with graphs, one captured graph per size, as servers
// pad to their compiled profiles), and the server waits for it to finish.
void add_serving(InferenceResult& result, const InferenceRun& run, InferenceSession& session,
                 const torch::Device& device) {
  std::map<std::int64_t, double> service;
  for (const auto& b : result.batches) service[b.batch_size] = b.latency.p50;
  const ServingOptions options = serving_options(run, service.rbegin()->first);
  result.serving_options = options;
  const BatchServiceFunction median_time = interpolated_service_time(service);
  if (run.serve_mode == ServeMode::kSimulated) {
    result.serving = sweep_serving(median_time, options, run.serve_rates);
    return;
  }
  if (!run.quiet) {
    log::info(log::cat("serving: ", run.serve_rates.size(),
                       run.serve_rates.size() == 1 ? " rate, about " : " rates, about ",
                       format_number(run.serve_seconds),
                       " s of arrivals each, executed in real "
                       "time"));
  }
  std::vector<std::int64_t> sizes;
  for (const auto& [batch, seconds] : service) {
    if (batch <= options.max_batch) sizes.push_back(batch);
  }
  if (sizes.back() < options.max_batch) sizes.push_back(options.max_batch);
  std::map<std::int64_t, torch::Tensor> inputs;
  for (const std::int64_t b : sizes) {
    inputs[b] = session.make_batch(b);
    // Warm-up: captures the size's graph, if any, before the clock runs.
    for (int i = 0; i < 3; ++i) (void)session(inputs[b]);
  }
  synchronize(device);
  const BatchExecutor execute = [&](std::int64_t n) {
    (void)session(inputs.at(padded_size(sizes, n)));
    synchronize(device);
  };
  result.serving_measured = true;
  SteadyServingClock clock;
  auto progress = [&](const ServingResult& p) {
    if (run.quiet) return;
    log::info(log::cat("serving ", format_number(p.offered_rate), " req/s: p50 ",
                       format_number(p.latency.p50 * 1e3), " ms, p99 ",
                       format_number(p.latency.p99 * 1e3), " ms",
                       p.saturated ? " (saturated: the sweep stops)" : ""));
  };
  result.serving = sweep_serving_measured(execute, options, run.serve_rates, run.serve_seconds,
                                          median_time, clock, progress);
}

InferenceOptions resolve(const InferenceRun& run, const torch::Device& device) {
  InferenceOptions options;
  // fp32 on the CPU: LibTorch's CPU kernels for reduced precision are partial before 2.x.
  options.precision =
      run.precision.value_or(device.is_cuda() ? Precision::kFp16 : Precision::kFp32);
  options.memory_format = run.memory_format;
  if (run.cuda_graph == Switch::kOn && !device.is_cuda()) {
    throw ConfigError("InferenceRun::cuda_graph", "on",
                      "CUDA graphs need a CUDA device; device is " + device.str());
  }
  options.cuda_graph = resolve_switch(run.cuda_graph, device.is_cuda());
  options.kernel_fusion = resolve_switch(run.kernel_fusion, device.is_cuda());
  options.warmup = run.warmup;
  options.iterations = run.iterations;
  options.cudnn_benchmark = run.cudnn_benchmark;
  options.cudnn_benchmark_from_batch = run.cudnn_benchmark_from_batch;
  options.seed = static_cast<std::uint64_t>(run.seed);
  return options;
}

// kKernelTraceCalls calls at each measured batch size under the profiler, after 3 untraced ones
// (a graph capture, when graphs are on, and warm-up).
void trace_kernels(const std::string& path, const InferenceResult& result,
                   InferenceSession& session) {
  std::vector<torch::Tensor> inputs;
  for (const auto& b : result.batches) {
    inputs.push_back(session.make_batch(b.batch_size));
    for (int i = 0; i < 3; ++i) (void)session(inputs.back());
  }
  synchronize(session.device());
  write_kernel_trace(path, [&] {
    for (const auto& input : inputs) {
      for (int i = 0; i < InferenceRun::kKernelTraceCalls; ++i) (void)session(input);
    }
    synchronize(session.device());
  });
}

InferenceResult measure_inference(const InferenceRun& run, const torch::Device& device,
                                  const InferenceOptions& options) {
  const ModelInfo info = ModelRegistry::global().get(run.model);
  const std::int64_t classes = run.num_classes > 0 ? run.num_classes : info.default_num_classes;
  const std::vector<std::int64_t> sizes = run.planned_batch_sizes();
  torch::manual_seed(static_cast<std::uint64_t>(run.seed));
  InferenceSession session(ModelRegistry::global().create(run.model, classes), info.input_shape,
                           device, options);
  if (run.kernel_fusion == Switch::kOn && session.kernel_fusion() == "none") {
    throw ConfigError("InferenceRun::kernel_fusion", "on",
                      "model " + run.model + " has no kernel fusion for inference");
  }
  if (!run.quiet) {
    log::info(log::cat("inference: ", run.model, " on ", device.str(), ", ",
                       to_string(options.precision), ", ", to_string(options.memory_format),
                       options.cuda_graph ? ", CUDA graph" : ", eager", ", fusion ",
                       session.kernel_fusion(), "; ", sizes.size(), " batch sizes, ", run.warmup,
                       " warm-up + ", run.iterations, " timed calls each"));
  }
  // One line per batch size, with the time left at the pace so far (larger batches take longer
  // per call, so it is a lower bound).
  const auto started = std::chrono::steady_clock::now();
  auto progress = [&](const BatchSizeResult& b, std::size_t done, std::size_t total) {
    if (run.quiet) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    log::info(log::cat("batch ", b.batch_size, " (", done, "/", total, "): p50 ",
                       format_number(b.latency.p50 * 1e3), " ms, ",
                       format_number(b.throughput_median, 5), " samples/s",
                       std::isfinite(b.peak_memory_bytes)
                           ? ", peak memory " + format_bytes(b.peak_memory_bytes)
                           : std::string(),
                       done < total ? "; at least " + format_duration(left) + " left" : ""));
  };
  InferenceResult result = session.sweep(sizes, progress);
  result.model = run.model;
  result.fingerprint = collect_fingerprint(device);
  result.device_name = result.fingerprint.name;
  // Every call's latency stays in memory; the result keeps at most keep_latencies per size.
  for (auto& b : result.batches) b.latencies = evenly_spaced(b.latencies, run.keep_latencies);
  result.command = run.command_line;
  result.timestamp_utc = utc_timestamp();
  if (!run.kernel_trace.empty()) trace_kernels(run.kernel_trace, result, session);
  if (!run.serve_rates.empty()) add_serving(result, run, session, device);
  return result;
}

}  // namespace

InferenceResult run_inference(const InferenceRun& run) {
  run.validate();
  const torch::Device device = resolve_device(run.device);
  set_intra_op_threads(run.threads);
  const InferenceOptions options = resolve(run, device);
  try {
    return measure_inference(run, device, options);
  } catch (const c10::OutOfMemoryError& e) {
    throw OutOfMemoryError("out of device memory at the first batch size of the sweep (model " +
                           run.model + "): " + e.what_without_backtrace());
  }
}

}  // namespace gpuperf
