#include "gpuperf/amp/grad_scaler.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>

#include <cmath>
#include <string>
#include <utility>

#include "compat.h"
#include "gpuperf/base/error.h"
#include "gpuperf/optim/fused_optimizer.h"

namespace gpuperf {
void GradScalerOptions::validate() const {
  if (!(init_scale_ > 0) || !std::isfinite(init_scale_)) {
    throw ConfigError("GradScalerOptions::init_scale",
                      "must be finite and > 0, got " + std::to_string(init_scale_));
  }
  if (!(growth_factor_ > 1.0)) {
    throw ConfigError("GradScalerOptions::growth_factor",
                      "must be > 1, got " + std::to_string(growth_factor_));
  }
  if (!(backoff_factor_ > 0 && backoff_factor_ < 1.0)) {
    throw ConfigError("GradScalerOptions::backoff_factor",
                      "must be in (0, 1), got " + std::to_string(backoff_factor_));
  }
  if (growth_interval_ <= 0) {
    throw ConfigError("GradScalerOptions::growth_interval",
                      "must be > 0, got " + std::to_string(growth_interval_));
  }
}

bool GradScalerState::operator==(const GradScalerState& other) const {
  return scale == other.scale && growth_factor == other.growth_factor &&
         backoff_factor == other.backoff_factor && growth_interval == other.growth_interval &&
         growth_tracker == other.growth_tracker;
}

namespace detail {
namespace {

bool use_aten(AmpKernels kernels, const torch::Tensor& t) {
  if (kernels == AmpKernels::kAuto) return has_amp_kernels(t.device());
  if (kernels == AmpKernels::kAten && !has_amp_kernels(t.device())) {
    throw ConfigError(std::string("this LibTorch (") + TORCH_VERSION +
                      ") has no _amp_* kernels for " + t.device().str());
  }
  return kernels == AmpKernels::kAten;
}

}  // namespace

bool has_amp_kernels(const torch::Device& device) {
  return device.is_cuda() || (device.is_cpu() && compat::kCpuAmpKernels);
}

void unscale_grads(std::vector<torch::Tensor>& grads, torch::Tensor& found_inf,
                   const torch::Tensor& inv_scale, AmpKernels kernels) {
  if (grads.empty()) return;
  if (use_aten(kernels, found_inf)) {
    // The kernel wants one device and dtype per call.
    std::map<std::pair<std::string, c10::ScalarType>, std::vector<torch::Tensor>> groups;
    for (auto& g : grads) groups[{g.device().str(), g.scalar_type()}].push_back(g);
    for (auto& [key, group] : groups) {
      at::_amp_foreach_non_finite_check_and_unscale_(group, found_inf, inv_scale);
    }
    return;
  }
  // Same result in tensor ops, still without a host sync: found_inf = max(found_inf, any
  // non-finite), then grad *= inv_scale (computed in fp32 for fp16 gradients, as the kernel).
  for (auto& g : grads) {
    auto non_finite = torch::logical_not(torch::isfinite(g).all()).to(torch::kFloat).reshape({1});
    found_inf.copy_(torch::maximum(found_inf.reshape({1}), non_finite).reshape(found_inf.sizes()));
    g.copy_(g.to(torch::kFloat).mul(inv_scale));
  }
}

void update_scale(torch::Tensor& scale, torch::Tensor& growth_tracker,
                  const torch::Tensor& found_inf, double growth_factor, double backoff_factor,
                  std::int64_t growth_interval, AmpKernels kernels) {
  if (use_aten(kernels, scale)) {
    at::_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                           growth_interval);
    return;
  }
  // PyTorch's kernel (aten/src/ATen/native/cuda/AmpKernels.cu), branch for branch:
  //   inf:  scale *= backoff; tracker = 0
  //   else: successful = tracker + 1
  //         if successful == interval: scale *= growth if that stays finite; tracker = 0
  //         else: tracker = successful
  const auto inf = found_inf.reshape({1}).gt(0);
  const auto successful = growth_tracker + 1;
  const auto grow = successful.eq(growth_interval).logical_and(inf.logical_not());
  const auto grown = (scale * growth_factor).to(torch::kFloat);
  const auto grown_ok = torch::isfinite(grown);
  auto new_scale = torch::where(inf, scale * backoff_factor,
                                torch::where(grow.logical_and(grown_ok), grown, scale));
  auto new_tracker =
      torch::where(inf.logical_or(grow), torch::zeros_like(growth_tracker), successful);
  scale.copy_(new_scale);
  growth_tracker.copy_(new_tracker);
}

}  // namespace detail

GradScaler::GradScaler(GradScalerOptions options) : options_(options) { options_.validate(); }

void GradScaler::require_scale(const char* call) const {
  if (!scale_.defined()) {
    throw Error(std::string("GradScaler.") + call +
                ": no scale yet; call scale() on the loss first (it sets the scale's device)");
  }
}

torch::Tensor GradScaler::scale(const torch::Tensor& outputs) {
  if (!options_.enabled()) return outputs;
  if (!scale_.defined()) {
    const auto on = torch::TensorOptions().device(outputs.device());
    scale_ = torch::full({1}, options_.init_scale(), on.dtype(torch::kFloat));
    growth_tracker_ = torch::full({1}, pending_tracker_, on.dtype(torch::kInt));
  }
  return outputs * scale_.to(outputs.device(), /*non_blocking=*/true);
}

GradScaler::PerOptimizer& GradScaler::state_for(const void* optimizer, Call call) {
  require_scale(call == Call::kStep ? "step" : "unscale_");
  PerOptimizer& state = per_optimizer_[optimizer];
  // PyTorch's rules: unscale_ at most once per iteration and before step; step at most once.
  if (call == Call::kStep && state.stage == Stage::kStepped) {
    throw Error("GradScaler.step() has already been called since the last update()");
  }
  if (call == Call::kUnscale && state.stage == Stage::kUnscaled) {
    throw Error(
        "GradScaler.unscale_() has already been called on this optimizer since the last update()");
  }
  if (call == Call::kUnscale && state.stage == Stage::kStepped) {
    throw Error("GradScaler.unscale_() is being called after step()");
  }
  return state;
}

void GradScaler::unscale_gradients(PerOptimizer& state, std::vector<torch::Tensor> grads,
                                   bool check_only) {
  // As PyTorch: the reciprocal in double, then rounded to float. A check alone multiplies by 1.
  const auto inv_scale = check_only ? torch::ones({1}, scale_.options())
                                    : scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  state.found_inf = torch::zeros({1}, scale_.options().dtype(torch::kFloat));
  detail::unscale_grads(grads, state.found_inf, inv_scale);
}

void GradScaler::unscale_(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled()) return;
  PerOptimizer& state = state_for(&optimizer, Call::kUnscale);
  std::vector<torch::Tensor> grads;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (p.grad().defined()) grads.push_back(p.mutable_grad());
    }
  }
  unscale_gradients(state, std::move(grads), /*check_only=*/false);
  state.stage = Stage::kUnscaled;
}

void GradScaler::unscale_(FusedOptimizer& optimizer) {
  if (!options_.enabled()) return;
  PerOptimizer& state = state_for(&optimizer, Call::kUnscale);
  unscale_gradients(state, optimizer.gradients(), /*check_only=*/false);
  state.stage = Stage::kUnscaled;
}

void GradScaler::step(FusedOptimizer& optimizer) {
  if (!options_.enabled()) {
    optimizer.step();
    return;
  }
  PerOptimizer& state = state_for(&optimizer, Call::kStep);
  if (state.stage == Stage::kReady) {
    unscale_gradients(state, optimizer.gradients(), /*check_only=*/true);
    optimizer.step(scale_, state.found_inf);
  } else {
    optimizer.step(torch::Tensor(), state.found_inf);  // already unscaled by unscale_()
  }
  state.stage = Stage::kStepped;
}

torch::Tensor GradScaler::found_inf_tensor(const void* optimizer) const {
  auto it = per_optimizer_.find(optimizer);
  return it == per_optimizer_.end() ? torch::Tensor() : it->second.found_inf;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled()) {
    optimizer.step();
    return true;
  }
  PerOptimizer& state = state_for(&optimizer, Call::kStep);
  if (state.stage == Stage::kReady) unscale_(optimizer);
  const bool stepped = state.found_inf.item<float>() == 0.0f;
  if (stepped) optimizer.step();
  state.stage = Stage::kStepped;
  return stepped;
}

void GradScaler::update() {
  if (!options_.enabled()) return;
  require_scale("update");
  torch::Tensor found_inf_combined;
  for (auto& [optimizer, state] : per_optimizer_) {
    if (!state.found_inf.defined()) continue;
    found_inf_combined = found_inf_combined.defined() ? found_inf_combined + state.found_inf
                                                      : state.found_inf.clone();
  }
  if (!found_inf_combined.defined()) {
    throw Error("GradScaler.update(): no inf checks were recorded prior to update()");
  }
  detail::update_scale(scale_, growth_tracker_, found_inf_combined, options_.growth_factor(),
                       options_.backoff_factor(), options_.growth_interval());
  per_optimizer_.clear();
}

void GradScaler::update(double new_scale) {
  if (!options_.enabled()) return;
  require_scale("update");
  scale_.fill_(new_scale);
  per_optimizer_.clear();
}

double GradScaler::get_scale() const {
  if (!options_.enabled()) return 1.0;
  return scale_.defined() ? scale_.item<double>() : options_.init_scale();
}

std::int64_t GradScaler::growth_tracker() const {
  if (!options_.enabled()) return 0;
  return growth_tracker_.defined() ? growth_tracker_.item<std::int64_t>() : pending_tracker_;
}

bool GradScaler::found_inf(const torch::optim::Optimizer& optimizer) const {
  auto it = per_optimizer_.find(&optimizer);
  if (it == per_optimizer_.end() || !it->second.found_inf.defined()) return false;
  return it->second.found_inf.item<float>() != 0.0f;
}

GradScalerState GradScaler::state_dict() const {
  return {get_scale(), options_.growth_factor(), options_.backoff_factor(),
          options_.growth_interval(), growth_tracker()};
}

void GradScaler::load_state_dict(const GradScalerState& state) {
  GradScalerOptions loaded = options_;
  loaded.init_scale(state.scale)
      .growth_factor(state.growth_factor)
      .backoff_factor(state.backoff_factor)
      .growth_interval(state.growth_interval);
  loaded.validate();
  options_ = loaded;
  pending_tracker_ = state.growth_tracker;
  if (scale_.defined()) {
    scale_.fill_(state.scale);
    growth_tracker_.fill_(state.growth_tracker);
  }
}

}  // namespace gpuperf
