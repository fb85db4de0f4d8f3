// residual_layer_norm() and residual_rms_norm(): gpuperf's residual add + norm kernels
// (layer_norm_kernels.h) as one autograd node on CUDA, ATen's operations elsewhere.
#include <ATen/ops/layer_norm.h>
#include <torch/autograd.h>

#include <cstdint>

#include "../compat.h"
#include "gpuperf/base/error.h"
#include "gpuperf/models/transformer.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "models/kernel_dtype.h"
#include "models/layer_norm_kernels.h"
#endif

namespace gpuperf {
namespace {

#if GPUPERF_WITH_CUDA_KERNELS

bool aligned(const torch::Tensor& t) { return t.is_contiguous() && detail::aligned16(t); }

// The dtype the LayerNorm's output is written in: autocast's 16-bit dtype where autocast is on
// (the dtype the next projection reads), else float32.
c10::ScalarType normalized_dtype(const torch::Device& device) {
  if (!compat::autocast_enabled(device.type())) return torch::kFloat;
  const c10::ScalarType t = compat::autocast_dtype(device.type());
  return t == torch::kHalf || t == torch::kBFloat16 ? t : torch::kFloat;
}

bool fused_applies(const torch::Tensor& x, const torch::Tensor& branch, const torch::Tensor& weight,
                   const torch::Tensor* bias, const torch::Tensor& branch_bias = {}) {
  if (!x.defined() || !x.is_cuda() || x.scalar_type() != torch::kFloat || x.dim() < 1) {
    return false;
  }
  const std::int64_t width = x.size(-1);
  if (width % 4 != 0 || width == 0 || width > detail::kLayerNormMaxWidth || !aligned(x)) {
    return false;
  }
  if (!detail::own_kernels_run_on(x.device().index())) return false;
  if (branch.defined() &&
      (branch.device() != x.device() || branch.sizes() != x.sizes() || !aligned(branch) ||
       branch.scalar_type() != normalized_dtype(x.device()))) {
    return false;
  }
  // A branch bias: with a branch and LayerNorm only.
  if (branch_bias.defined() && (!branch.defined() || bias == nullptr)) return false;
  for (const torch::Tensor* p : {&weight, bias, branch_bias.defined() ? &branch_bias : nullptr}) {
    if (p == nullptr) continue;
    if (!p->defined() || p->device() != x.device() || p->scalar_type() != torch::kFloat ||
        p->numel() != width || !aligned(*p)) {
      return false;
    }
  }
  return true;
}

// Inputs x (float32), branch (the normalized dtype; ignored without `with_branch`), weight, bias
// (ignored for RMSNorm), branch_bias (float32; ignored without `with_branch_bias`): LibTorch's
// custom functions take no undefined tensors, so the ones not used are empty placeholders.
// Outputs {h, y} with a branch, {y} without (h is x). Saves h (x without a branch), the weight
// and each row's mean and 1/std: what ATen's LayerNorm keeps.
struct ResidualLayerNormNode : public torch::autograd::Function<ResidualLayerNormNode> {
  static torch::autograd::variable_list forward(
      torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& branch,
      const torch::Tensor& weight, const torch::Tensor& bias, const torch::Tensor& branch_bias,
      double eps, detail::NormKind kind, bool with_branch, bool with_branch_bias) {
    const c10::cuda::CUDAGuard guard(x.device());
    const c10::ScalarType dtype = normalized_dtype(x.device());
    const std::int64_t width = x.size(-1);
    const std::int64_t rows = x.numel() / width;
    const torch::Tensor h = with_branch ? torch::empty_like(x) : x;
    torch::Tensor y = torch::empty(x.sizes(), x.options().dtype(dtype));
    const auto stats = x.options().dtype(torch::kFloat);
    torch::Tensor mean = torch::empty({rows}, stats);
    torch::Tensor rstd = torch::empty({rows}, stats);
    C10_CUDA_CHECK(detail::residual_layer_norm_forward(
        kind, detail::nhwc_dtype(dtype), x.data_ptr<float>(),
        with_branch ? branch.data_ptr() : nullptr,
        with_branch_bias ? branch_bias.data_ptr<float>() : nullptr, weight.data_ptr<float>(),
        kind == detail::NormKind::kLayerNorm ? bias.data_ptr<float>() : nullptr,
        static_cast<float>(eps), rows, static_cast<int>(width),
        with_branch ? h.data_ptr<float>() : nullptr, y.data_ptr(), mean.data_ptr<float>(),
        rstd.data_ptr<float>(), at::cuda::getCurrentCUDAStream()));
    ctx->save_for_backward({h, weight, mean, rstd});
    ctx->saved_data["branch"] = with_branch;
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(dtype);
    ctx->saved_data["kind"] = static_cast<std::int64_t>(kind);
    ctx->saved_data["branch_grad"] = with_branch && branch.requires_grad();
    ctx->saved_data["branch_bias"] = with_branch_bias;
    if (!with_branch) return {y};
    return {h, y};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& h = saved[0];
    const c10::cuda::CUDAGuard guard(h.device());
    const bool with_branch = ctx->saved_data["branch"].toBool();
    const torch::Tensor grad_h = with_branch ? grads[0] : torch::Tensor();
    const torch::Tensor& grad_y_in = with_branch ? grads[1] : grads[0];
    const std::int64_t width = h.size(-1);
    const std::int64_t rows = h.numel() / width;
    const auto dtype = static_cast<c10::ScalarType>(ctx->saved_data["dtype"].toInt());
    const auto kind = static_cast<detail::NormKind>(ctx->saved_data["kind"].toInt());
    const torch::Tensor grad_y = grad_y_in.defined()
                                     ? grad_y_in.to(dtype).contiguous()
                                     : torch::zeros(h.sizes(), h.options().dtype(dtype));
    const torch::Tensor grad_sum =
        grad_h.defined() ? grad_h.to(torch::kFloat).contiguous() : torch::Tensor();
    torch::Tensor grad_x = torch::empty_like(h);
    const bool branch_grad = ctx->saved_data["branch_grad"].toBool();
    torch::Tensor grad_branch =
        branch_grad ? torch::empty(h.sizes(), h.options().dtype(dtype)) : torch::Tensor();
    const torch::Tensor& weight = saved[1];
    const bool branch_bias = ctx->saved_data["branch_bias"].toBool();
    torch::Tensor partial =
        torch::empty({(branch_bias ? 3 : 2) * detail::kLayerNormPartialRows, width}, h.options());
    torch::Tensor grad_weight = torch::empty_like(weight);
    torch::Tensor grad_bias =
        kind == detail::NormKind::kLayerNorm ? torch::empty_like(weight) : torch::Tensor();
    torch::Tensor grad_branch_bias = branch_bias ? torch::empty_like(weight) : torch::Tensor();
    C10_CUDA_CHECK(detail::residual_layer_norm_backward(
        kind, detail::nhwc_dtype(dtype), h.data_ptr<float>(), grad_y.data_ptr(),
        grad_sum.defined() ? grad_sum.data_ptr<float>() : nullptr, weight.data_ptr<float>(),
        saved[2].data_ptr<float>(), saved[3].data_ptr<float>(), rows, static_cast<int>(width),
        grad_x.data_ptr<float>(), branch_grad ? grad_branch.data_ptr() : nullptr,
        partial.data_ptr<float>(), grad_weight.data_ptr<float>(),
        grad_bias.defined() ? grad_bias.data_ptr<float>() : nullptr,
        branch_bias ? grad_branch_bias.data_ptr<float>() : nullptr,
        at::cuda::getCurrentCUDAStream()));
    return {grad_x,          grad_branch,     grad_weight,     grad_bias,      grad_branch_bias,
            torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

ResidualNorm apply_fused(const torch::Tensor& x, const torch::Tensor& branch,
                         const torch::Tensor& weight, const torch::Tensor& bias, double eps,
                         detail::NormKind kind, const torch::Tensor& branch_bias = {}) {
  const torch::Tensor none = torch::empty({0}, x.options());
  const auto or_none = [&](const torch::Tensor& t) { return t.defined() ? t : none; };
  const torch::autograd::variable_list out =
      ResidualLayerNormNode::apply(x, or_none(branch), weight, or_none(bias), or_none(branch_bias),
                                   eps, kind, branch.defined(), branch_bias.defined());
  if (branch.defined()) return {out[0], out[1]};
  return {x, out[0]};
}

#endif  // GPUPERF_WITH_CUDA_KERNELS

}  // namespace

bool fused_residual_layer_norm_applies(const torch::Tensor& x, const torch::Tensor& branch,
                                       const torch::Tensor& weight, const torch::Tensor& bias,
                                       const torch::Tensor& branch_bias) {
#if GPUPERF_WITH_CUDA_KERNELS
  return fused_applies(x, branch, weight, &bias, branch_bias);
#else
  (void)x, (void)branch, (void)weight, (void)bias, (void)branch_bias;
  return false;
#endif
}

bool fused_residual_rms_norm_applies(const torch::Tensor& x, const torch::Tensor& branch,
                                     const torch::Tensor& weight) {
#if GPUPERF_WITH_CUDA_KERNELS
  return fused_applies(x, branch, weight, nullptr);
#else
  (void)x, (void)branch, (void)weight;
  return false;
#endif
}

ResidualNorm residual_layer_norm(const torch::Tensor& x, const torch::Tensor& branch,
                                 const torch::Tensor& weight, const torch::Tensor& bias, double eps,
                                 const torch::Tensor& branch_bias) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_applies(x, branch, weight, &bias, branch_bias)) {
    return apply_fused(x, branch, weight, bias, eps, detail::NormKind::kLayerNorm, branch_bias);
  }
#endif
  if (branch_bias.defined() && !branch.defined()) {
    throw Error("residual_layer_norm: a branch bias without a branch");
  }
  // The branch's bias added to the branch first, as the layer that made the branch would.
  const torch::Tensor h =
      branch.defined() ? x + (branch_bias.defined() ? branch + branch_bias : branch) : x;
  return {h, at::layer_norm(h, {h.size(-1)}, weight, bias, eps)};
}

ResidualNorm residual_rms_norm(const torch::Tensor& x, const torch::Tensor& branch,
                               const torch::Tensor& weight, double eps) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_applies(x, branch, weight, nullptr)) {
    return apply_fused(x, branch, weight, {}, eps, detail::NormKind::kRmsNorm);
  }
#endif
  const torch::Tensor h = branch.defined() ? x + branch : x;
  // In float32 at least, as torchtitan's RMSNorm computes it (fp64 stays fp64).
  const torch::Tensor f = h.to(at::promote_types(h.scalar_type(), torch::kFloat));
  return {h, (f * torch::rsqrt(f.pow(2).mean(-1, true) + eps)).to(h.scalar_type()) * weight};
}

}  // namespace gpuperf
