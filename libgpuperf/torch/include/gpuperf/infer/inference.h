#pragma once
// Inference of any module: eval mode, c10::InferenceMode, a precision, a memory format and,
// on CUDA, optional CUDA-graph replay; per-call device timing over a batch-size sweep.
//
//   gpuperf::InferenceOptions options;
//   options.precision = gpuperf::Precision::kFp16;
//   options.memory_format = gpuperf::MemoryFormat::kChannelsLast;
//   gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("resnet50"),
//                                     {3, 224, 224}, torch::kCUDA, options);
//   torch::Tensor logits = session(images);          // in your own serving loop
//   auto sweep = session.sweep({1, 8, 64});          // or measure(batch_size) for one size
//
// fp16 and bf16 convert the model's parameters and the inputs to that dtype (what deployed
// inference does) rather than running fp32 weights under autocast: no per-call weight casts,
// and a CUDA graph captures a fixed set of kernels.

#include <torch/nn/modules/container/any.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/results/inference_result.h"
#include "gpuperf/base/choices.h"

namespace gpuperf {

/// Options of an InferenceSession.
struct InferenceOptions {
  Precision precision = Precision::kFp32;
  MemoryFormat memory_format = MemoryFormat::kContiguous;
  /// Capture each batch size's forward in a CUDA graph once, then replay it (CUDA only).
  bool cuda_graph = false;
  int graph_warmup = 3;         ///< eager calls on the capture stream before capturing (>= 1)
  int warmup = 10;              ///< untimed calls per batch size before timing (>= 0)
  int iterations = 100;         ///< timed calls per batch size (>= 1)
  bool cudnn_benchmark = true;  ///< let cuDNN time its algorithms for each new shape
  /// With cudnn_benchmark, the smallest batch size whose shapes cuDNN times (>= 1); smaller
  /// batches take cuDNN's heuristic choice, the same in every process. At small batches a
  /// convolution runs in 5-15 us, and cuDNN's timing of its candidates picked other kernels in
  /// each process. ResNet-50 fp16 on an H200, 3 processes each: batch 1 0.347-0.353 ms autotuned
  /// against 0.327 with the heuristics; the heuristics were faster up to batch 64, autotuning
  /// from 128 (docs/results/2026-12-02-h200-shortcut-stream).
  std::int64_t cudnn_benchmark_from_batch = kDefaultCudnnBenchmarkFromBatch;
  /// Ask a FusableModel to fuse for inference (fold BatchNorm, conv+bias(+add)+ReLU in one cuDNN
  /// call). Same function up to rounding; kernel_fusion() says what was fused.
  bool kernel_fusion = false;
  std::uint64_t seed = 0;  ///< seeds the synthetic inputs

  /// Throws ConfigError naming the bad field and value.
  void validate() const;
};

/// A model prepared for inference on one device, with the means to time it.
class InferenceSession {
 public:
  /// Moves the model to `device`, precision and memory format, and switches it to eval mode.
  /// `sample_shape` is one input sample, e.g. {3, 224, 224}. Throws ConfigError for bad options
  /// or a CUDA graph asked for off CUDA.
  InferenceSession(torch::nn::AnyModule model, std::vector<std::int64_t> sample_shape,
                   torch::Device device, InferenceOptions options = {});
  ~InferenceSession();
  InferenceSession(const InferenceSession&) = delete;
  InferenceSession& operator=(const InferenceSession&) = delete;

  /// One forward under InferenceMode. The input is moved to the device, dtype and memory format.
  /// With cuda_graph, the first call of a batch shape captures it and later calls replay; the
  /// returned tensor is then the graph's output buffer, overwritten by the next call of that
  /// shape: clone it to keep it. cuDNN's process-wide benchmark mode is set for the call by the
  /// batch size (cudnn_benchmark_from_batch) and put back after it.
  torch::Tensor operator()(const torch::Tensor& input);

  /// Warm-up, then `iterations` calls on a synthetic batch, each timed on the device; on CUDA,
  /// the peak memory allocated from the first call to the last (BatchSizeResult).
  /// Throws c10::OutOfMemoryError when the batch does not fit.
  [[nodiscard]] BatchSizeResult measure(std::int64_t batch_size);

  /// measure() for each batch size in order, stopping at the first out-of-memory. Fills the
  /// batches, stop_reason, out_of_memory and the session's description fields of the result.
  /// Each batch size's graph is released after it is measured, so that graphs do not pile up.
  /// `progress` (optional) is called after each batch size with its result, how many sizes are
  /// done and how many there are.
  [[nodiscard]] InferenceResult sweep(
      const std::vector<std::int64_t>& batch_sizes,
      const std::function<void(const BatchSizeResult&, std::size_t done, std::size_t total)>&
          progress = {});

  /// A synthetic batch of `batch_size` samples on the device, in the session's dtype and format.
  [[nodiscard]] torch::Tensor make_batch(std::int64_t batch_size) const;

  [[nodiscard]] const InferenceOptions& options() const { return options_; }
  [[nodiscard]] const torch::Device& device() const { return device_; }
  /// The dtype of parameters and inputs (kFloat, kHalf or kBFloat16).
  [[nodiscard]] torch::ScalarType dtype() const { return dtype_; }
  /// What `kernel_fusion` fused ("none" without it or for a model that cannot fuse).
  [[nodiscard]] const std::string& kernel_fusion() const { return kernel_fusion_; }
  /// Batch sizes that replay a captured graph.
  [[nodiscard]] std::vector<std::int64_t> captured_batch_sizes() const;
  [[nodiscard]] torch::nn::Module& module() { return *model_.ptr(); }
  /// Why cuda_graph was asked for but calls run eagerly; empty otherwise.
  [[nodiscard]] const std::string& graph_fallback_reason() const { return graph_fallback_reason_; }

 private:
  struct Graph;
  [[nodiscard]] torch::Tensor prepare(const torch::Tensor& input) const;
  torch::Tensor forward_eager(const torch::Tensor& x);
  torch::Tensor replay_or_capture(const torch::Tensor& x);

  torch::nn::AnyModule model_;
  std::vector<std::int64_t> sample_shape_;
  torch::Device device_;
  InferenceOptions options_;
  torch::ScalarType dtype_;
  std::map<std::int64_t, std::unique_ptr<Graph>> graphs_;  // by batch size
  std::string graph_fallback_reason_;
  std::string kernel_fusion_ = "none";
};

}  // namespace gpuperf
