#pragma once
// One object that runs a full training step for any module and loss:
//   zero_grad -> forward under autocast -> loss -> scaled backward -> unscale -> optimizer step
//   -> scaler update.
// It works inside your own loop:
//
//   gpuperf::TrainStepOptions options;
//   options.precision = gpuperf::Precision::kFp16;
//   gpuperf::TrainStep step(torch::nn::AnyModule(MyNet()), torch::kCUDA, options);
//   for (auto& [x, y] : my_loader) {
//     auto result = step(x, y);                       // no host sync unless fp16 scaling
//     if (i % 100 == 0) std::cout << result.loss.item<float>() << "\n";
//   }

#include <torch/nn/modules/container/any.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/amp/grad_scaler.h"
#include "gpuperf/train/batch_source.h"
#include "gpuperf/train/gradient_sync.h"
#include "gpuperf/optim/fused_optimizer.h"
#include "gpuperf/optim/weight_copies.h"
#include "gpuperf/base/choices.h"

namespace gpuperf {

class FusableModel;

/// Loss of a batch: (model output, target) -> scalar.
using LossFunction =
    std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;

/// Cross-entropy over class logits (the seed's loss).
[[nodiscard]] LossFunction cross_entropy_loss();
/// A language model's loss: cross-entropy of logits [batch, sequence, vocabulary] against the
/// next tokens [batch, sequence], averaged over every token.
[[nodiscard]] LossFunction language_model_loss();

/// Any forward pass and loss: the batch's tensors (token ids, a mask, labels, ...; all with the
/// samples along dimension 0) -> scalar loss. It calls the model itself, so models with several
/// inputs and losses of any shape train through TrainStep.
using BatchLoss = std::function<torch::Tensor(const std::vector<torch::Tensor>& batch)>;

/// Options of TrainStep.
struct TrainStepOptions {
  Precision precision = Precision::kFp32;
  MemoryFormat memory_format = MemoryFormat::kContiguous;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 1e-3;  ///< the seed's Adam rate
  double momentum = 0.9;        ///< SGD only
  double adam_beta1 = 0.9;      ///< Adam, AdamW: decay of the gradient average
  double adam_beta2 = 0.999;    ///< Adam, AdamW: decay of the squared-gradient average
  double weight_decay = 0;      ///< L2 (Adam, SGD) or decoupled (AdamW), on every parameter
  bool cudnn_benchmark = true;  ///< let cuDNN time its algorithms for each new shape
  double max_grad_norm = 0;     ///< clip gradients to this L2 norm after unscaling; 0 = off
  /// Gradient accumulation: each call splits its batch into this many micro-batches along
  /// dimension 0 (sizes differing by at most one sample; as many as there are samples when
  /// there are fewer), runs forward and backward on each (one micro-batch's activations at a time),
  /// and takes one optimizer step. Each micro-batch's loss is weighted by its share of the batch,
  /// so a mean-reduced loss accumulates to the whole batch's mean. In every mode, graphs included.
  int accumulation_steps = 1;
  /// Loss scaling; used for fp16 only, ignored (disabled) for other precisions.
  GradScalerOptions grad_scaler;
  /// Use FusedOptimizer (ATen's fused kernels, device-side step counters, no host sync per
  /// step) instead of torch::optim. Needs a LibTorch with the kernels for the device.
  bool fused_optimizer = false;
  /// Capture the whole step (forward, backward, unscale, optimizer, scaler update) in a CUDA
  /// graph, then replay it. One call is always one optimizer step on the caller's batch: the
  /// first `graph_warmup` calls run eagerly (on a side stream, so that autotuning and lazy
  /// state exist before capture), the next call captures and replays once, later calls replay.
  /// A batch whose shape differs from the captured one is never broadcast into the graph: that
  /// call runs eagerly (StepResult::replayed says so). Needs CUDA and fused_optimizer. If
  /// capture fails, steps run eagerly and graph_fallback_reason() says why.
  bool cuda_graph = false;
  int graph_warmup = 3;
  /// Ask a FusableModel (SimpleModel, ResNet) for its training-safe kernel fusion (cuDNN calls
  /// for convolution + bias + ReLU, or BatchNorm + add + ReLU). kernel_fusion() says what ran.
  bool kernel_fusion = false;
  /// With fused_optimizer: start each parameter's update while backward still runs
  /// (FusedOptimizer::begin_step_in_backward()), the same results to the bit, the update's
  /// memory traffic beside backward's kernels. Applies to Adam and AdamW in gpuperf's kernel on a
  /// GPU, without loss scaling, clipping, gradient accumulation or a gradient sync; elsewhere the
  /// step updates after backward. updated_in_backward() says which ran.
  bool optimizer_in_backward = false;

  /// Throws ConfigError naming the bad field.
  void validate() const;
};

/// What one step returns.
struct StepResult {
  /// Detached scalar loss (read it with .item() when you need it). In CUDA-graph mode it is the
  /// graph's output tensor, overwritten by the next step: clone it to keep it.
  torch::Tensor loss;
  /// False when the GradScaler skipped the optimizer step (inf/NaN). With a fused optimizer the
  /// skip happens on the device and is not known without a sync: then this stays true and
  /// skipped_steps() counts it.
  bool stepped = true;
  /// Whether the step replayed the captured CUDA graph (false: it ran eagerly).
  bool replayed = false;
};

/// A full training step (see the file comment). Owns the model's optimizer and GradScaler.
class TrainStep {
 public:
  /// Moves the model to `device` and the memory format, and builds the optimizer.
  /// Throws ConfigError for a precision the device or LibTorch cannot run.
  TrainStep(torch::nn::AnyModule model, torch::Device device, TrainStepOptions options = {},
            LossFunction loss = cross_entropy_loss());
  /// Any forward and loss: `module` holds the parameters (it is moved to `device`, converted to
  /// the memory format and trained); `loss` runs the forward pass on a batch and returns the loss.
  ///
  ///   auto lm = std::make_shared<MyLanguageModel>();
  ///   gpuperf::TrainStep step(lm, [lm](const std::vector<torch::Tensor>& b) {
  ///     return torch::nn::functional::cross_entropy(lm->forward(b[0], b[1]).flatten(0, 1),
  ///                                                 b[2].flatten());
  ///   }, torch::kCUDA, options);
  ///   step({tokens, mask, labels});
  TrainStep(std::shared_ptr<torch::nn::Module> module, BatchLoss loss, torch::Device device,
            TrainStepOptions options = {});

  /// Makes every later step average its gradients through `sync` between backward and the
  /// optimizer (data-parallel training). Call before the first step; null removes it.
  void set_gradient_sync(std::shared_ptr<GradientSync> sync);
  /// The installed gradient sync, or null.
  [[nodiscard]] GradientSync* gradient_sync() const { return sync_.get(); }

  /// Sets the learning rate of every later step (every parameter group), in eager, fused and
  /// graph mode alike: the fused optimizer keeps it in device memory, which a captured graph
  /// reads on replay. Throws ConfigError unless lr > 0.
  void set_learning_rate(double lr);
  /// Sets the rate of one parameter group of the torch::optim optimizer (the fused optimizer has
  /// one group, 0). ConfigError for a group that does not exist.
  void set_learning_rate(double lr, std::size_t group);
  /// The rate of parameter group `group` (0: the first).
  [[nodiscard]] double learning_rate(std::size_t group = 0) const;

  /// Writes a checkpoint to `path` (atomically: a temporary file with an unpredictable name
  /// beside it, renamed over it) in gpuperf's checkpoint format (base/checkpoint_file.h): the
  /// model's identity (every parameter's and buffer's name, dtype and shape, the optimizer), a
  /// checksum over every model tensor's name, dtype, shape and bytes, and a checksummed LibTorch
  /// archive of the parameters and buffers, the optimizer's state (torch::optim or fused), the
  /// GradScaler's state and the step counts. IoError with the system's reason (a full disk, the
  /// file-size limit) when it cannot be written; the temporary file is then removed.
  void save(const std::string& path) const;
  /// Restores a checkpoint written by save() into this step, which must be built like the one
  /// that wrote it and not have taken a step yet; training then continues as the saved run
  /// would have. Everything is checked before a parameter is touched: IoError for a file that
  /// cannot be read, is not a regular file (a FIFO is refused, never waited on), is cut, padded or
  /// corrupt (the checksums); ConfigError naming the first difference for a checkpoint of another
  /// model or optimizer, and for impossible state (negative step counts).
  void load(const std::string& path);

  /// Runs one step on (input, target); moves them to the device and memory format if needed.
  StepResult operator()(const torch::Tensor& input, const torch::Tensor& target) {
    return (*this)(std::vector<torch::Tensor>{input, target});
  }
  /// Runs one step on a batch of several tensors (samples along dimension 0 of each), moved to
  /// the device (4-D ones also to the memory format). ConfigError when their sample counts differ.
  StepResult operator()(const std::vector<torch::Tensor>& input);
  /// Runs one step on a batch.
  StepResult operator()(const Batch& batch) { return (*this)(batch.input, batch.target); }

  [[nodiscard]] torch::nn::Module& module() { return *module_; }
  /// The torch::optim optimizer; throws ConfigError when the step uses a FusedOptimizer.
  [[nodiscard]] torch::optim::Optimizer& optimizer();
  /// The fused optimizer, or nullptr.
  [[nodiscard]] FusedOptimizer* fused_optimizer() { return fused_.get(); }
  /// Whether the last step's update ran beside its backward (TrainStepOptions::
  /// optimizer_in_backward where it applies).
  [[nodiscard]] bool updated_in_backward() const { return updated_in_backward_; }
  /// How many parameters have 16-bit copies the fused optimizer keeps current (WeightCopies;
  /// made at the first forward pass that reads them): 0 where there are none.
  [[nodiscard]] std::size_t weight_copies() const { return copies_ ? copies_->size() : 0; }
  /// What the model's training fusion fused in its latest forward pass, e.g. "conv+bias+relu";
  /// "none" when kernel_fusion is off, the model has nothing to fuse or cuDNN's kernels did not
  /// apply.
  [[nodiscard]] std::string kernel_fusion() const;
  /// Whether the model ran its convolutions channels_last inside in the latest step, whatever
  /// options().memory_format gave it (the fused SimpleModel does).
  [[nodiscard]] bool model_ran_channels_last() const;
  [[nodiscard]] GradScaler& scaler() { return scaler_; }
  [[nodiscard]] const TrainStepOptions& options() const { return options_; }
  [[nodiscard]] const torch::Device& device() const { return device_; }
  /// Steps run so far: one per call, in every mode.
  [[nodiscard]] std::int64_t steps() const { return steps_; }
  /// Calls after capture that ran eagerly because their batch shape differed from the graph's.
  [[nodiscard]] std::int64_t eager_shape_steps() const { return eager_shape_steps_; }
  /// Steps whose optimizer update the GradScaler skipped for inf/NaN gradients (reads a
  /// device counter with the fused optimizer: a host sync).
  [[nodiscard]] std::int64_t skipped_steps() const;
  /// Whether steps replay a captured CUDA graph.
  [[nodiscard]] bool graph_captured() const;
  /// Why cuda_graph was asked for but steps run eagerly; empty otherwise.
  [[nodiscard]] const std::string& graph_fallback_reason() const { return graph_fallback_reason_; }

 private:
  struct GraphState;
  using Tensors = std::vector<torch::Tensor>;
  void initialize();
  StepResult run_step(const Tensors& batch, bool capturing);
  StepResult replay(const Tensors& batch);
  StepResult warm_up_for_graph(const Tensors& batch);
  StepResult capture_and_replay(const Tensors& batch);
  [[nodiscard]] bool fits_graph(const Tensors& batch) const;

  std::shared_ptr<torch::nn::Module> module_;
  torch::Device device_;
  TrainStepOptions options_;
  BatchLoss loss_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  // The block weights' 16-bit copies that fused_ keeps current (Adam/AdamW on a GPU under 16-bit
  // autocast; else null), read by the model's forward pass (WeightCopies::Scope).
  std::shared_ptr<WeightCopies> copies_;
  std::unique_ptr<FusedOptimizer> fused_;
  bool updated_in_backward_ = false;
  FusableModel* fusable_ = nullptr;  ///< the model, when kernel_fusion found something to fuse
  GradScaler scaler_;
  std::int64_t steps_ = 0;
  std::int64_t skipped_steps_ = 0;
  std::int64_t eager_shape_steps_ = 0;
  int graph_warmups_ = 0;  // eager calls on the side stream so far (graph mode, before capture)
  torch::Tensor skipped_on_device_;  // fused optimizer: sum of found_inf flags
  std::shared_ptr<GraphState> graph_;
  std::string graph_fallback_reason_;
  std::shared_ptr<GradientSync> sync_;
};

/// Builds the torch::optim optimizer `options.optimizer` names over `parameters`, with the
/// options' learning rate, momentum (SGD), betas (Adam, AdamW) and weight decay.
[[nodiscard]] std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    std::vector<torch::Tensor> parameters, const TrainStepOptions& options);

}  // namespace gpuperf
