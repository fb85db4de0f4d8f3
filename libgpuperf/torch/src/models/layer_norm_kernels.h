#pragma once
// A pre-norm transformer's residual add and LayerNorm (or RMSNorm) in one pass over a row, as
// autocast runs them in a GPT-2 (or Llama) block: h = x + branch (float32 residual stream plus the
// 16-bit output of the block's last projection), y = LayerNorm(h) written in the 16-bit dtype the
// next projection reads. ATen's path under autocast runs a mixed-dtype add, a float32 LayerNorm and
// a cast: three passes over [tokens, width] forward and as many backward. One warp per row forward
// (1 to 8 backward, where a row's gradients would not fit one warp's registers); the backward pass
// folds the residual stream's gradient in and writes the branch's gradient in its dtype, and
// reduces the weight and bias gradients in a fixed order (deterministic). No LibTorch here:
// models/residual_layer_norm.cpp checks the tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// LayerNorm (mean and variance, weight and bias) or RMSNorm (root mean square, weight only).
enum class NormKind { kLayerNorm, kRmsNorm };

/// The widest row the kernels take (a multiple of 4 up to this).
constexpr int kLayerNormMaxWidth = 2048;

/// The most partial rows of the weight and bias gradients one backward launch leaves before their
/// final sum (one a block of 8 warps, up to 4 blocks on each of an H100/H200's 132 SMs): the
/// float32 scratch it needs is 3 x this x width (2 without a branch bias).
constexpr int kLayerNormPartialRows = 528;

/// For each of `rows` rows of `width` (a multiple of 4, <= kLayerNormMaxWidth): h = x + branch
/// (+ branch_bias, a row of `width`) (`branch` of `dtype`, or null: h = x, `sum` not written),
/// y = (h - mean) / sqrt(var + eps) x weight + bias in `dtype`, and the row's mean and
/// 1/sqrt(var + eps) in float32; for RMSNorm y = h / sqrt(mean(h^2) + eps) x weight (`bias` and
/// `mean` unused). x, sum and the vectors are float32; every pointer 16-byte aligned. A branch bias
/// takes a branch and LayerNorm (cudaErrorInvalidValue otherwise).
cudaError_t residual_layer_norm_forward(NormKind kind, NhwcDtype dtype, const float* x,
                                        const void* branch, const float* branch_bias,
                                        const float* weight, const float* bias, float eps,
                                        std::int64_t rows, int width, float* sum, void* y,
                                        float* mean, float* rstd, cudaStream_t stream);

/// The backward pass of residual_layer_norm_forward: grad_x = grad_sum (float32, or null for
/// none) + the LayerNorm's input gradient of grad_y (`dtype`), grad_branch = grad_x in `dtype`
/// (null: not written), and the weight and bias gradients (float32, `width` each), reduced
/// through `partial` (float32 scratch of 3 x kLayerNormPartialRows x width); RMSNorm writes no
/// bias gradient. grad_branch_bias (float32, `width`; null: none, and always for RMSNorm): the
/// branch bias's gradient, the column sums of grad_x rounded to `dtype` (grad_branch as written),
/// as the branch's own bias gradient would be.
cudaError_t residual_layer_norm_backward(NormKind kind, NhwcDtype dtype, const float* sum,
                                         const void* grad_y, const float* grad_sum,
                                         const float* weight, const float* mean, const float* rstd,
                                         std::int64_t rows, int width, float* grad_x,
                                         void* grad_branch, float* partial, float* grad_weight,
                                         float* grad_bias, float* grad_branch_bias,
                                         cudaStream_t stream);

}  // namespace gpuperf::detail
