// next_token_loss(): gpuperf's fused cross-entropy kernels (cross_entropy_kernels.h) as one
// autograd node on CUDA, ATen's cross_entropy elsewhere.
#include <torch/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/functional/loss.h>

#include <cmath>
#include <optional>
#include <string>

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
// gradient in their dtype. With an expected incoming gradient (`expected`, NaN for none) the
// forward launch writes the gradient too and saves only it; backward rescales it in place when
// another gradient arrives and hands it on, so the node back-propagates once (a second pass
// through a retained graph is refused: the first may have handed the buffer to a leaf's .grad).
// Without, forward saves the logits and a float per row (not a float32 log-softmax) for
// backward's pass.
struct FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& targets, double expected) {
    const c10::cuda::CUDAGuard guard(logits.device());
    const auto rows = logits.size(0);
    const auto options = logits.options().dtype(torch::kFloat);
    const auto dtype = detail::nhwc_dtype(logits.scalar_type());
    const auto stream = at::cuda::getCurrentCUDAStream();
    torch::Tensor loss = torch::empty({rows}, options);
    if (std::isnan(expected)) {
      torch::Tensor lse = torch::empty({rows}, options);
      C10_CUDA_CHECK(detail::cross_entropy_forward(
          dtype, logits.data_ptr(), targets.data_ptr<std::int64_t>(), rows, logits.size(1),
          lse.data_ptr<float>(), loss.data_ptr<float>(), 0.0f, nullptr, stream));
      ctx->save_for_backward({logits, targets, lse});
    } else {
      torch::Tensor grad = torch::empty_like(logits);
      C10_CUDA_CHECK(detail::cross_entropy_forward(
          dtype, logits.data_ptr(), targets.data_ptr<std::int64_t>(), rows, logits.size(1), nullptr,
          loss.data_ptr<float>(), static_cast<float>(expected / static_cast<double>(rows)),
          grad.data_ptr(), stream));
      ctx->save_for_backward({grad});
      ctx->saved_data["expected"] = expected;
    }
    return loss.mean();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const c10::cuda::CUDAGuard guard(saved[0].device());
    const torch::Tensor grad_loss = grads[0].to(torch::kFloat).contiguous();
    const auto stream = at::cuda::getCurrentCUDAStream();
    if (saved.size() == 1) {
      if (ctx->saved_data.count("handed_on") != 0) {
        throw ConfigError(
            "next_token_loss: its gradient was computed with the loss and back-propagated once; "
            "to back-propagate a retained graph again, compute the loss under "
            "LossGradientScope(std::nullopt)");
      }
      ctx->saved_data["handed_on"] = true;
      torch::Tensor grad = saved[0];
      const int blocks = 4 * at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
      C10_CUDA_CHECK(detail::cross_entropy_rescale(
          detail::nhwc_dtype(grad.scalar_type()), grad.data_ptr(), grad.numel(),
          grad_loss.data_ptr<float>(), static_cast<float>(ctx->saved_data["expected"].toDouble()),
          blocks, stream));
      return {grad, torch::Tensor(), torch::Tensor()};
    }
    const torch::Tensor& logits = saved[0];
    torch::Tensor grad = torch::empty_like(logits);
    C10_CUDA_CHECK(detail::cross_entropy_backward(
        detail::nhwc_dtype(logits.scalar_type()), logits.data_ptr(),
        saved[1].data_ptr<std::int64_t>(), saved[2].data_ptr<float>(), grad_loss.data_ptr<float>(),
        1.0f / static_cast<float>(logits.size(0)), logits.size(0), logits.size(1), grad.data_ptr(),
        stream));
    return {grad, torch::Tensor(), torch::Tensor()};
  }
};

#endif  // GPUPERF_WITH_CUDA_KERNELS

// The incoming gradient next_token_loss() expects on this thread (NaN: none, compute the
// gradient in the backward pass); LossGradientScope sets it.
thread_local double expected_loss_gradient = 1.0;

}  // namespace

LossGradientScope::LossGradientScope(std::optional<double> expected)
    : previous_(expected_loss_gradient) {
  if (expected.has_value() && !(*expected > 0 && std::isfinite(*expected))) {
    throw ConfigError("LossGradientScope",
                      "expects a finite incoming gradient > 0, got " + std::to_string(*expected));
  }
  expected_loss_gradient = expected.value_or(std::nan(""));
}

LossGradientScope::~LossGradientScope() { expected_loss_gradient = previous_; }

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
    // The gradient with the loss only where one will be asked for.
    const bool grad = torch::GradMode::is_enabled() && rows.requires_grad();
    return FusedCrossEntropy::apply(rows.contiguous(), flat.to(torch::kLong).contiguous(),
                                    grad ? expected_loss_gradient : std::nan(""));
  }
#endif
  return torch::nn::functional::cross_entropy(rows, flat);
}

}  // namespace gpuperf
