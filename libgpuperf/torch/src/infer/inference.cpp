#include "gpuperf/infer/inference.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/base/log.h"
#include "gpuperf/models/fusion.h"
#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/device/device.h"
#include "gpuperf/device/torch_choices.h"

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>

#include "device/cuda_graph_capture.h"
#endif

namespace gpuperf {
namespace {

// Floating-point parameters and buffers only: integer buffers (BatchNorm's
// num_batches_tracked) keep their type, as Python's module.half() leaves them.
void convert_floating(torch::nn::Module& module, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.is_floating_point()) p.set_data(p.to(dtype));
  }
  for (auto& b : module.buffers()) {
    if (b.is_floating_point()) b.set_data(b.to(dtype));
  }
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// cuDNN's benchmark mode (process-wide) set for a scope, then put back.
class CudnnBenchmarkScope {
 public:
  explicit CudnnBenchmarkScope(bool on) : previous_(at::globalContext().benchmarkCuDNN()) {
    at::globalContext().setBenchmarkCuDNN(on);
  }
  ~CudnnBenchmarkScope() { at::globalContext().setBenchmarkCuDNN(previous_); }
  CudnnBenchmarkScope(const CudnnBenchmarkScope&) = delete;
  CudnnBenchmarkScope& operator=(const CudnnBenchmarkScope&) = delete;

 private:
  bool previous_;
};

}  // namespace

void InferenceOptions::validate() const {
  if (warmup < 0)
    throw ConfigError("InferenceOptions::warmup", "must be >= 0, got " + std::to_string(warmup));
  if (iterations < 1) {
    throw ConfigError("InferenceOptions::iterations",
                      "must be >= 1, got " + std::to_string(iterations));
  }
  if (cudnn_benchmark_from_batch < 1) {
    throw ConfigError("InferenceOptions::cudnn_benchmark_from_batch",
                      "must be >= 1, got " + std::to_string(cudnn_benchmark_from_batch));
  }
  if (graph_warmup < 1) {
    throw ConfigError("graph_warmup: must be >= 1, got " + std::to_string(graph_warmup));
  }
}

#if GPUPERF_WITH_CUDA
struct InferenceSession::Graph {
  at::cuda::CUDAGraph graph;
  torch::Tensor input;   // static input: replays read from here
  torch::Tensor output;  // static output: replays write here
};
#else
struct InferenceSession::Graph {};
#endif

InferenceSession::InferenceSession(torch::nn::AnyModule model,
                                   std::vector<std::int64_t> sample_shape, torch::Device device,
                                   InferenceOptions options)
    : model_(std::move(model)),
      sample_shape_(std::move(sample_shape)),
      device_(device),
      options_((options.validate(), options)),
      // The dtype the precision names (what training autocasts to) is what inference stores.
      dtype_(autocast_dtype(options_.precision)) {
  if (model_.is_empty()) throw ConfigError("InferenceSession: the model is empty");
  if (sample_shape_.empty()) throw ConfigError("InferenceSession: the sample shape is empty");
  if (options_.cuda_graph && !device_.is_cuda()) {
    throw ConfigError("InferenceOptions::cuda_graph",
                      "CUDA graphs need a CUDA device; device is " + device_.str());
  }
  // The TF32 switches and cuDNN benchmark mode are process-wide, as in training.
  apply_backend_settings(options_.precision, options_.cudnn_benchmark);
  module().to(device_);
  module().eval();
  if (options_.kernel_fusion) {
    // In fp32, before the conversion: BatchNorm folds with full-precision statistics.
    if (auto* fusable = dynamic_cast<FusableModel*>(model_.ptr().get())) {
      kernel_fusion_ = fusable->fuse_for_inference();
    }
  }
  convert_floating(module(), dtype_);
  convert_memory_format(module(), options_.memory_format);
}

InferenceSession::~InferenceSession() = default;

torch::Tensor InferenceSession::prepare(const torch::Tensor& input) const {
  torch::Tensor x = input.to(device_, /*non_blocking=*/true);
  if (x.is_floating_point() && x.scalar_type() != dtype_) x = x.to(dtype_);
  return to_memory_format(x, options_.memory_format);
}

torch::Tensor InferenceSession::make_batch(std::int64_t batch_size) const {
  if (batch_size <= 0) {
    throw ConfigError("batch_size", "must be > 0, got " + std::to_string(batch_size));
  }
  std::vector<std::int64_t> shape{batch_size};
  shape.insert(shape.end(), sample_shape_.begin(), sample_shape_.end());
  // A private generator: the inputs repeat for a seed without touching the global RNG.
  auto generator = at::detail::createCPUGenerator(options_.seed);
  const torch::Tensor cpu =
      torch::randn(shape, generator, torch::TensorOptions().dtype(torch::kFloat));
  c10::InferenceMode guard;
  return prepare(cpu);
}

torch::Tensor InferenceSession::forward_eager(const torch::Tensor& x) { return model_.forward(x); }

torch::Tensor InferenceSession::operator()(const torch::Tensor& input) {
  // InferenceMode over the whole call: graph replays copy into an inference tensor, which is
  // only allowed inside it.
  c10::InferenceMode guard;
  const torch::Tensor x = prepare(input);
  // cuDNN chooses a shape's algorithms at its first call (a capture's warm-up included) and
  // keeps them: whether it times them depends on the batch size.
  const CudnnBenchmarkScope cudnn_benchmark(
      options_.cudnn_benchmark &&
      (x.dim() == 0 || x.size(0) >= options_.cudnn_benchmark_from_batch));
  if (options_.cuda_graph && graph_fallback_reason_.empty()) return replay_or_capture(x);
  return forward_eager(x);
}

#if GPUPERF_WITH_CUDA

torch::Tensor InferenceSession::replay_or_capture(const torch::Tensor& x) {
  const std::int64_t batch = x.size(0);
  auto found = graphs_.find(batch);
  if (found != graphs_.end() && found->second->input.sizes() == x.sizes()) {
    Graph& g = *found->second;
    if (x.data_ptr() != g.input.data_ptr()) g.input.copy_(x, /*non_blocking=*/true);
    g.graph.replay();
    return g.output;
  }
  auto g = std::make_unique<Graph>();
  g->input = x.clone();
  graph_fallback_reason_ = detail::capture_on_side_stream(
      g->graph, device_.index(), options_.graph_warmup, [&] { (void)forward_eager(g->input); },
      [&] { g->output = forward_eager(g->input); });
  if (!graph_fallback_reason_.empty()) return forward_eager(x);
  // The first replay produces this call's output, in stream order on the main stream.
  g->graph.replay();
  torch::Tensor output = g->output;
  graphs_[batch] = std::move(g);
  return output;
}

#else

torch::Tensor InferenceSession::replay_or_capture(const torch::Tensor& x) {
  // The constructor refuses cuda_graph off CUDA, and without CUDA there is no CUDA device.
  graph_fallback_reason_ = "gpuperf was built without CUDA: no CUDA graphs";
  return forward_eager(x);
}

#endif

std::vector<std::int64_t> InferenceSession::captured_batch_sizes() const {
  std::vector<std::int64_t> sizes;
  for (const auto& entry : graphs_) sizes.push_back(entry.first);
  return sizes;
}

BatchSizeResult InferenceSession::measure(std::int64_t batch_size) {
  const torch::Tensor x = make_batch(batch_size);
  // The peak covers the first call (a graph's capture and its warm-up calls) to the last timed
  // one, over what is already held: the model and the input.
  reset_peak_memory(device_);
  // The first call captures the graph (if any) and is the first to meet the precision's kernels:
  // a dtype the device has no kernel for fails here, and is reported as the option that chose it.
  const bool reduced = dtype_ != torch::kFloat;
  try {
    (void)(*this)(x);
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    if (!reduced) throw;  // an fp32 failure is not about the precision
    throw ConfigError("InferenceOptions::precision", to_string(options_.precision),
                      "the model failed on " + device_.str() + " at batch " +
                          std::to_string(batch_size) + ": " +
                          first_line(e.what_without_backtrace()));
  }
  for (int i = 0; i < options_.warmup; ++i) (void)(*this)(x);

  auto timer = make_timer(device_.is_cuda() ? TimerKind::kCudaEvent : TimerKind::kSteadyClock,
                          device_.has_index() ? device_.index() : 0);
  // Marks are enqueued around each call without a host sync in between: on a GPU the events
  // time the device's work of that call (plus any launch gap the host leaves), and the host
  // never stalls the queue to read them until the end.
  std::vector<std::size_t> marks;
  marks.reserve(2 * static_cast<std::size_t>(options_.iterations));
  for (int i = 0; i < options_.iterations; ++i) {
    marks.push_back(timer->mark());
    (void)(*this)(x);
    marks.push_back(timer->mark());
  }
  LatencyRecorder recorder;
  recorder.reserve(static_cast<std::size_t>(options_.iterations));
  for (std::size_t i = 0; i < marks.size(); i += 2)
    recorder.add(timer->seconds(marks[i], marks[i + 1]));

  BatchSizeResult out;
  out.batch_size = batch_size;
  out.latency = recorder.summary();
  out.iterations = options_.iterations;
  for (double s : recorder.samples()) out.total_seconds += s;
  out.latencies = recorder.samples();
  out.peak_memory_bytes = device_memory(device_).peak_allocated;
  const auto samples = static_cast<double>(batch_size);
  out.throughput_median = out.latency.p50 > 0 ? samples / out.latency.p50 : 0;
  out.throughput_overall =
      out.total_seconds > 0 ? samples * static_cast<double>(out.iterations) / out.total_seconds : 0;
  return out;
}

InferenceResult InferenceSession::sweep(
    const std::vector<std::int64_t>& batch_sizes,
    const std::function<void(const BatchSizeResult&, std::size_t, std::size_t)>& progress) {
  if (batch_sizes.empty()) throw ConfigError("batch_sizes", "no batch sizes to measure");
  InferenceResult result;
  result.device = device_.str();
  result.precision = to_string(options_.precision);
  result.memory_format = to_string(options_.memory_format);
  result.timer = device_.is_cuda() ? "cuda-event" : "steady-clock";
  result.warmup = options_.warmup;
  result.iterations = options_.iterations;
  result.input_shape = sample_shape_;
  result.cudnn_benchmark = options_.cudnn_benchmark;
  result.cudnn_benchmark_from_batch = options_.cudnn_benchmark_from_batch;
  result.seed = static_cast<std::int64_t>(options_.seed);
  for (const std::int64_t b : batch_sizes) {
    try {
      result.batches.push_back(measure(b));
      if (progress) progress(result.batches.back(), result.batches.size(), batch_sizes.size());
      // Each graph keeps a private memory pool: free it before the next, larger batch size, so
      // that the sweep finds the largest batch that fits on its own.
      graphs_.erase(b);
    } catch (const c10::OutOfMemoryError& e) {
      if (result.batches.empty()) throw;  // nothing fits: no result to report
      graphs_.erase(b);
      result.out_of_memory = true;
      result.stop_reason = "out of memory at batch " + std::to_string(b) +
                           ": the sweep stopped there (" + first_line(e.what_without_backtrace()) +
                           ")";
      break;
    }
  }
  if (!result.out_of_memory) {
    result.stop_reason = "all " + std::to_string(batch_sizes.size()) + " batch sizes measured";
  }
  result.cuda_graph = options_.cuda_graph && graph_fallback_reason_.empty();
  result.graph_fallback_reason = graph_fallback_reason_;
  result.kernel_fusion = kernel_fusion_;
  return result;
}

}  // namespace gpuperf
