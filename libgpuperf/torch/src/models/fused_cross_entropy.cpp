// next_token_loss(): gpuperf's fused cross-entropy kernels (cross_entropy_kernels.h) as one
// autograd node on CUDA, ATen's cross_entropy elsewhere.
#include <torch/autograd.h>
#include <torch/nn/functional/loss.h>

#include "gpuperf/base/error.h"
#include "gpuperf/models/transformer.h"
#include "models/kernel_dtype.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "models/cross_entropy_kernels.h"
#endif

namespace gpuperf {
namespace {

#if GPUPERF_WITH_CUDA_KERNELS

// logits [rows, vocabulary] dense, targets [rows] int64 -> the mean loss; backward, the logits'
// gradient in their dtype. Saves the logits and a float per row (not a float32 log-softmax).
struct FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& targets) {
    const c10::cuda::CUDAGuard guard(logits.device());
    const auto rows = logits.size(0);
    const auto options = logits.options().dtype(torch::kFloat);
    torch::Tensor lse = torch::empty({rows}, options);
    torch::Tensor loss = torch::empty({rows}, options);
    C10_CUDA_CHECK(detail::cross_entropy_forward(
        detail::nhwc_dtype(logits.scalar_type()), logits.data_ptr(),
        targets.data_ptr<std::int64_t>(), rows, logits.size(1), lse.data_ptr<float>(),
        loss.data_ptr<float>(), at::cuda::getCurrentCUDAStream()));
    ctx->save_for_backward({logits, targets, lse});
    return loss.mean();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& logits = saved[0];
    const c10::cuda::CUDAGuard guard(logits.device());
    const torch::Tensor grad_loss = grads[0].to(torch::kFloat).contiguous();
    torch::Tensor grad = torch::empty_like(logits);
    C10_CUDA_CHECK(detail::cross_entropy_backward(
        detail::nhwc_dtype(logits.scalar_type()), logits.data_ptr(),
        saved[1].data_ptr<std::int64_t>(), saved[2].data_ptr<float>(), grad_loss.data_ptr<float>(),
        1.0f / static_cast<float>(logits.size(0)), logits.size(0), logits.size(1), grad.data_ptr(),
        at::cuda::getCurrentCUDAStream()));
    return {grad, torch::Tensor()};
  }
};

#endif  // GPUPERF_WITH_CUDA_KERNELS

}  // namespace

bool fused_cross_entropy_applies(const torch::Device& device, torch::ScalarType dtype) {
#if GPUPERF_WITH_CUDA_KERNELS
  return device.is_cuda() && detail::own_kernel_dtype(dtype) &&
         detail::own_kernels_run_on(device.index());
#else
  (void)device, (void)dtype;
  return false;
#endif
}

bool fused_cross_entropy_applies(const torch::Tensor& logits) {
  return logits.defined() && logits.dim() >= 2 && logits.size(-1) > 0 &&
         fused_cross_entropy_applies(logits.device(), logits.scalar_type());
}

torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  if (logits.dim() < 2 || targets.numel() * logits.size(-1) != logits.numel()) {
    throw ConfigError("next_token_loss: logits [..., vocabulary] and targets [...] disagree (" +
                      std::to_string(logits.numel()) + " logits, " +
                      std::to_string(targets.numel()) + " targets)");
  }
  const torch::Tensor rows = logits.reshape({-1, logits.size(-1)});
  const torch::Tensor flat = targets.reshape({-1});
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_cross_entropy_applies(logits)) {
    return FusedCrossEntropy::apply(rows.contiguous(), flat.to(torch::kLong).contiguous());
  }
#endif
  return torch::nn::functional::cross_entropy(rows, flat);
}

}  // namespace gpuperf
