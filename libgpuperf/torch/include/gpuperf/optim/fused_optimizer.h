#pragma once
// Optimizers that update every parameter in a few fused kernels (ATen's _fused_adam_,
// _fused_adamw_, _fused_sgd_), keep their step counters on the device and take the
// GradScaler's scale and inf flag as tensors: a step needs no host sync, so it can be captured
// in a CUDA graph. Numerically the same as torch::optim's Adam, AdamW and SGD (momentum).
//
//   gpuperf::FusedOptimizer optimizer(model->parameters(),
//       gpuperf::FusedOptimizerOptions(gpuperf::OptimizerKind::kAdam, 1e-3));
//   optimizer.zero_grad();  loss.backward();  optimizer.step();
//
// With a GradScaler, call scaler.step(optimizer): the kernels unscale the gradients themselves
// and skip the update on the device when found_inf is set.

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/types.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "gpuperf/base/choices.h"

namespace gpuperf {

class WeightCopies;

/// Options of FusedOptimizer; the defaults are torch.optim's.
struct FusedOptimizerOptions {
  FusedOptimizerOptions(OptimizerKind kind, double learning_rate)
      : kind(kind), learning_rate(learning_rate) {}
  OptimizerKind kind;
  double learning_rate;
  double beta1 = 0.9;       ///< Adam, AdamW
  double beta2 = 0.999;     ///< Adam, AdamW
  double eps = 1e-8;        ///< Adam, AdamW
  double weight_decay = 0;  ///< L2 for Adam and SGD, decoupled for AdamW
  double momentum = 0.9;    ///< SGD (no dampening)
  bool nesterov = false;    ///< SGD

  /// Throws ConfigError naming the bad field.
  void validate() const;
};

/// A fused optimizer over a fixed list of parameters (see the file comment).
class FusedOptimizer {
 public:
  /// Throws ConfigError when this LibTorch has no fused kernels for the parameters' device.
  FusedOptimizer(std::vector<torch::Tensor> parameters, FusedOptimizerOptions options);
  ~FusedOptimizer();
  FusedOptimizer(const FusedOptimizer&) = delete;  // hooks on the parameters point at it
  FusedOptimizer& operator=(const FusedOptimizer&) = delete;
  FusedOptimizer(FusedOptimizer&&) = delete;
  FusedOptimizer& operator=(FusedOptimizer&&) = delete;

  /// Whether this LibTorch has fused optimizer kernels for tensors on `device`.
  [[nodiscard]] static bool available(const torch::Device& device);

  /// Zeroes the gradients in place (set_to_none = false keeps their storage, as a CUDA graph
  /// needs) or drops them.
  void zero_grad(bool set_to_none = true);

  /// One update of every parameter with a gradient. `grad_scale` (float, one element): the
  /// gradients are divided by it first; `found_inf` (float, one element): when non-zero the
  /// update is skipped and the step counters stay put. Both optional; no host sync either way.
  void step(const torch::Tensor& grad_scale = {}, const torch::Tensor& found_inf = {});

  /// The same update, overlapping backward: call begin_step_in_backward() before backward and
  /// finish_step_in_backward() after it instead of step(). Backward hands the gradients over
  /// one parameter at a time (the last layer's first); once it has moved on past a gradient,
  /// that parameter's update is launched on a stream of the optimizer's own, beside the rest of
  /// backward, a few million elements a launch; finish_step_in_backward() updates the last ones
  /// and makes the current stream wait for them all. Each element's arithmetic is step()'s, so
  /// the results are the same to the bit. Applies to Adam and AdamW in gpuperf's kernel (a GPU
  /// its kernels run on, float32 parameters), without a scale or inf flag, for a backward that
  /// produces each gradient once (no accumulation over micro-batches); a CUDA graph may capture
  /// it. false, arming nothing, where it does not apply: then call step() after backward.
  bool begin_step_in_backward();
  /// Ends what begin_step_in_backward() armed (see there); nothing when it armed nothing.
  void finish_step_in_backward();

  /// Sets the learning rate of every later step, in stream order and without a host sync: the
  /// rate lives in device memory, so that a captured CUDA graph reads the new rate on replay.
  /// Throws ConfigError unless lr > 0.
  void set_learning_rate(double lr);
  /// The rate set last.
  [[nodiscard]] double learning_rate() const { return options_.learning_rate; }
  /// Writes the state (moments, momentum buffers, step counters, the rate) to `archive`.
  void save(torch::serialize::OutputArchive& archive) const;
  /// Copies a state written by save() into this optimizer's tensors (in place: their memory, and
  /// a captured graph's pointers to it, stay). ConfigError when it does not fit.
  void load(torch::serialize::InputArchive& archive);
  /// Adam and AdamW on a GPU gpuperf's kernels run on (float32 parameters): each update also
  /// writes the 16-bit copy `copies` holds of the parameter (if any), and records it current.
  /// `copies` (null: none) must outlive the optimizer or be unset first. Elsewhere the copies are
  /// not written, and WeightCopies casts them again when next asked.
  void write_copies(WeightCopies* copies) { copies_ = copies; }
  /// Whether step() writes the copies here (Adam or AdamW, gpuperf's kernels, the parameters'
  /// GPU): where not, keeping copies costs a cast each step, as casting does.
  [[nodiscard]] bool writes_copies() const;
  /// Whether the last step() ran gpuperf's Adam kernel (false: ATen's kernels, or no step yet).
  [[nodiscard]] bool ran_own_kernel() const { return own_kernel_ran_; }
  /// The parameters, in order.
  [[nodiscard]] const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  /// Their current gradients (those defined).
  [[nodiscard]] std::vector<torch::Tensor> gradients() const;
  [[nodiscard]] const FusedOptimizerOptions& options() const { return options_; }

 private:
  std::vector<torch::Tensor> parameters_;
  FusedOptimizerOptions options_;
  std::vector<torch::Tensor> exp_avg_;     // Adam, AdamW
  std::vector<torch::Tensor> exp_avg_sq_;  // Adam, AdamW
  std::vector<torch::Tensor> steps_;       // Adam, AdamW: float32 scalars on the device
  std::vector<torch::Tensor> momentum_;    // SGD
  torch::Tensor lr_;                       // float32 scalar on the parameters' device
  WeightCopies* copies_ = nullptr;
  bool own_kernel_ran_ = false;
  // The parameters at `indices` (each with a gradient) updated on the current stream.
  void update(const std::vector<std::size_t>& indices, const torch::Tensor& grad_scale,
              const torch::Tensor& found_inf);
  struct InBackward;  // begin_step_in_backward()'s hooks, stream and the updates still to launch
  std::unique_ptr<InBackward> in_backward_;
};

}  // namespace gpuperf
