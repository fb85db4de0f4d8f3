#include "inference_program.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include "training_program.h"
#include "gpuperf/device/device.h"
#include "gpuperf/base/error.h"
#include "gpuperf/infer/inference.h"
#include "gpuperf/serving/serving.h"
#include "gpuperf/base/log.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/results/run_record.h"
#include "gpuperf/device/torch_choices.h"

namespace gpuperf {
namespace {

Precision choose_precision(const std::string& text, const torch::Device& device) {
  if (text != "auto") return parse_precision(text);
  // fp32 on the CPU: LibTorch's CPU kernels for reduced precision are partial before 2.x.
  return device.is_cuda() ? Precision::kFp16 : Precision::kFp32;
}

// The smallest batch size of `sizes` (ascending) that holds `n` requests.
std::int64_t padded_size(const std::vector<std::int64_t>& sizes, std::int64_t n) {
  return *std::lower_bound(sizes.begin(), sizes.end(), n);
}

// The serving sweep. Simulated: the measured median call time of each batch size is the time the
// server needs for a batch of that size. Measured: each batch runs on the device, padded to the
// next measured batch size (one input and, with graphs, one captured graph per size, as servers
// pad to their compiled profiles), and the server waits for it to finish.
void add_serving(InferenceResult& result, const InferenceBenchmarkArgs& args,
                 InferenceSession& session, const torch::Device& device) {
  std::map<std::int64_t, double> service;
  for (const auto& b : result.batches) service[b.batch_size] = b.latency.p50;
  const std::int64_t largest = service.rbegin()->first;
  ServingOptions options;
  options.max_batch = args.serve_max_batch > 0 ? args.serve_max_batch : largest;
  if (options.max_batch > largest) {
    // Only after an out-of-memory cut the sweep short: serve with what was measured.
    log::warn(log::cat("--serve-max-batch ", args.serve_max_batch, ": only batch sizes up to ",
                       largest, " were measured; the simulated server batches up to ", largest));
    options.max_batch = largest;
  }
  options.max_queue_delay = args.max_batch_delay_ms * 1e-3;
  options.requests = args.serve_requests;
  options.seed = static_cast<std::uint64_t>(args.seed) + 1;
  result.serving_options = options;
  const BatchServiceFunction median_time = interpolated_service_time(service);
  if (args.serve_mode != "measured") {
    result.serving = sweep_serving(median_time, options, args.serve_rates);
    return;
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
  result.serving =
      sweep_serving_measured(execute, options, args.serve_rates, args.serve_seconds, median_time);
}

}  // namespace

InferenceResult run_inference_measurement(const InferenceBenchmarkArgs& args) {
  const torch::Device device = resolve_device(args.device);
  if (args.threads > 0) at::set_num_threads(args.threads);
  const ModelInfo info = ModelRegistry::global().get(args.model);
  const std::int64_t classes = args.num_classes > 0 ? args.num_classes : info.default_num_classes;

  InferenceOptions options;
  options.precision = choose_precision(args.precision, device);
  options.memory_format = parse_memory_format(args.memory_format);
  if (args.graph == "on" && !device.is_cuda()) {
    throw ConfigError("--graph on: CUDA graphs need a CUDA device; device is " + device.str());
  }
  options.cuda_graph = args.graph == "on" || (args.graph == "auto" && device.is_cuda());
  options.fuse = args.fuse == "on" || (args.fuse == "auto" && device.is_cuda());
  options.warmup = args.warmup;
  options.iterations = args.iterations;
  options.cudnn_benchmark = args.cudnn_benchmark;
  options.seed = static_cast<std::uint64_t>(args.seed);
  const std::vector<std::int64_t> sizes = args.planned_batch_sizes();

  torch::manual_seed(static_cast<std::uint64_t>(args.seed));
  InferenceSession session(ModelRegistry::global().create(args.model, classes), info.input_shape,
                           device, options);
  if (args.fuse == "on" && session.kernel_fusion() == "none") {
    throw ConfigError("--fuse on: model " + args.model + " has no kernel fusion for inference");
  }
  if (!args.quiet) {
    log::info(log::cat("inference: ", args.model, " on ", device.str(), ", ",
                       to_string(options.precision), ", ", to_string(options.memory_format),
                       options.cuda_graph ? ", CUDA graph" : ", eager", ", fusion ",
                       session.kernel_fusion(), "; ", sizes.size(), " batch sizes, ", args.warmup,
                       " warm-up + ", args.iterations, " timed calls each"));
  }
  InferenceResult result = session.sweep(sizes);
  result.model = args.model;
  result.fingerprint = collect_fingerprint(device);
  result.device_name = result.fingerprint.name;
  // Every call's latency stays in memory; the file keeps at most --keep-latencies per batch size.
  for (auto& b : result.batches) b.latencies = evenly_spaced(b.latencies, args.keep_latencies);
  result.command = args.command_line;
  result.timestamp_utc = utc_timestamp();
  if (!args.serve_rates.empty()) add_serving(result, args, session, device);
  return result;
}

int run_inference_benchmark(int argc, const char* const* argv) {
  const ParsedInferenceArgs parsed =
      parse_inference_benchmark_args(argc, argv, std::cout, std::cerr);
  if (parsed.exit_code) return *parsed.exit_code;
  if (parsed.list_models) {
    for (const auto& name : ModelRegistry::global().names()) {
      std::cout << name << "\t" << ModelRegistry::global().get(name).description << "\n";
    }
    return 0;
  }
  const InferenceBenchmarkArgs& args = parsed.args;
  try {
    // Refuse a bad output path before the run, not after it.
    if (!args.json_path.empty()) check_writable(args.json_path, "json");
    const InferenceResult result = run_inference_measurement(args);
    print_inference_result(result, std::cout);
    if (!args.json_path.empty()) {
      write_inference_json(result, args.json_path);
      std::cout << "Result written to " << args.json_path << "\n";
    }
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const c10::OutOfMemoryError& e) {
    std::cerr << "error: out of device memory at the first batch size of the sweep (model "
              << args.model << "): " << e.what_without_backtrace() << "\n";
    return kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpuperf
