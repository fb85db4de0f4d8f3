#pragma once
// A port of torch.amp.GradScaler: dynamic loss scaling for fp16 training.
//
//   gpuperf::GradScaler scaler;                       // init_scale 65536, growth every 2000 steps
//   optimizer.zero_grad();
//   { gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kHalf); loss = ...; }
//   scaler.scale(loss).backward();
//   scaler.unscale_(optimizer);                       // optional: before gradient clipping
//   torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//   scaler.step(optimizer);                           // skipped if any gradient is inf/NaN
//   scaler.update();                                  // back off on inf/NaN, grow after a streak
//
// The algorithm is PyTorch's (torch/amp/grad_scaler.py). Unscaling and the scale update run in
// ATen's _amp_* kernels where they exist (CUDA; CPU from LibTorch 2.3) and in equivalent tensor
// ops otherwise; either way they stay on the device. step() reads found_inf on the host, as
// PyTorch's does for unfused optimizers.

#include <torch/arg.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <map>

namespace gpuperf {

class FusedOptimizer;

/// Options of GradScaler, with torch.amp.GradScaler's defaults.
struct GradScalerOptions {
  TORCH_ARG(double, init_scale) = 65536.0;  ///< first loss scale
  TORCH_ARG(double, growth_factor) = 2.0;   ///< scale multiplier after growth_interval good steps
  TORCH_ARG(double, backoff_factor) = 0.5;  ///< scale multiplier after a step with inf/NaN
  TORCH_ARG(std::int64_t, growth_interval) = 2000;  ///< consecutive good steps before growth
  TORCH_ARG(bool, enabled) = true;                  ///< when false every call is a pass-through

 public:
  /// Throws ConfigError naming the first bad field (PyTorch's rules: growth > 1, 0 < backoff < 1).
  void validate() const;
};

/// The scaler's persistent state, as torch.amp.GradScaler.state_dict() holds it.
struct GradScalerState {
  double scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
  std::int64_t growth_tracker = 0;
  bool operator==(const GradScalerState& other) const;
};

/// Dynamic loss scaler (see the file comment).
class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  /// outputs * scale. The scale lives on the device of the first tensor scaled.
  [[nodiscard]] torch::Tensor scale(const torch::Tensor& outputs);
  /// Divides the optimizer's gradients by the scale in place and records whether any is inf/NaN.
  /// At most once per optimizer between update()s, and before step().
  void unscale_(torch::optim::Optimizer& optimizer);
  /// Unscales if not done yet, then runs optimizer.step() unless a gradient was inf/NaN.
  /// Returns whether the optimizer stepped.
  bool step(torch::optim::Optimizer& optimizer);
  /// For a FusedOptimizer, as PyTorch does for optimizers with _step_supports_amp_scaling: the
  /// gradients are only checked for inf/NaN here (unless unscale_ ran), and the fused kernels
  /// unscale them and skip the update on the device. No host sync.
  void unscale_(FusedOptimizer& optimizer);
  void step(FusedOptimizer& optimizer);
  /// The inf/NaN flag (float [1], on the device) of this iteration's unscale_/step for an
  /// optimizer; undefined before one. Valid until update().
  [[nodiscard]] torch::Tensor found_inf_tensor(const void* optimizer) const;

  /// Updates the scale from the inf/NaN checks of this iteration (PyTorch's _amp_update_scale_).
  void update();
  /// Sets the scale to `new_scale` instead.
  void update(double new_scale);

  /// The current scale (a host sync); 1.0 when disabled.
  [[nodiscard]] double get_scale() const;
  /// Consecutive unskipped steps since the last growth or backoff.
  [[nodiscard]] std::int64_t growth_tracker() const;
  /// Whether the optimizer's gradients held inf/NaN at its last unscale_ (a host sync).
  [[nodiscard]] bool found_inf(const torch::optim::Optimizer& optimizer) const;
  [[nodiscard]] bool is_enabled() const { return options_.enabled(); }
  [[nodiscard]] const GradScalerOptions& options() const { return options_; }

  /// The persistent state (scale, factors, interval, tracker).
  [[nodiscard]] GradScalerState state_dict() const;
  /// Restores a state from state_dict(); the scale tensor is created on the next scale() if
  /// none exists yet.
  void load_state_dict(const GradScalerState& state);

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  enum class Call { kUnscale, kStep };
  struct PerOptimizer {
    Stage stage = Stage::kReady;
    torch::Tensor found_inf;  // float32, shape [1], on the scale's device
  };
  void require_scale(const char* call) const;
  PerOptimizer& state_for(const void* optimizer, Call call);
  void unscale_gradients(PerOptimizer& state, std::vector<torch::Tensor> grads, bool check_only);

  GradScalerOptions options_;
  torch::Tensor scale_;               // float32 [1]
  torch::Tensor growth_tracker_;      // int32 [1]
  std::int64_t pending_tracker_ = 0;  // tracker from load_state_dict before scale_ exists
  std::map<const void*, PerOptimizer> per_optimizer_;
};

namespace detail {
/// Which implementation the detail functions use: ATen's fused _amp_* kernels, the equivalent
/// tensor ops, or the kernels where this LibTorch has them for the tensor's device.
enum class AmpKernels { kAuto, kAten, kTensorOps };

/// Multiplies every tensor in `grads` by inv_scale and sets found_inf to 1 if any holds inf/NaN
/// (ATen's _amp_foreach_non_finite_check_and_unscale_, or tensor ops where it has no kernel).
void unscale_grads(std::vector<torch::Tensor>& grads, torch::Tensor& found_inf,
                   const torch::Tensor& inv_scale, AmpKernels kernels = AmpKernels::kAuto);
/// PyTorch's _amp_update_scale_, in place on scale and growth_tracker.
void update_scale(torch::Tensor& scale, torch::Tensor& growth_tracker,
                  const torch::Tensor& found_inf, double growth_factor, double backoff_factor,
                  std::int64_t growth_interval, AmpKernels kernels = AmpKernels::kAuto);
/// Whether this LibTorch has the _amp_* kernels for tensors on `device`.
[[nodiscard]] bool has_amp_kernels(const torch::Device& device);
}  // namespace detail

}  // namespace gpuperf
