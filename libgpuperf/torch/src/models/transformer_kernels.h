#pragma once
// The transformers' element-wise work beside the matrix products, each in one pass where ATen
// runs several (models/transformer_ops.cpp checks the tensors and builds the autograd nodes):
// - a linear layer's bias gradient (the column sums of its output gradient), and GELU's backward
//   pass with it (GPT-2's MLP): ATen reduces over the rows with a strided reduction kernel (48
//   of them, 1.8 ms of a GPT-2 124M step on an H200) after a separate GELU backward pass;
// - SwiGLU's gate, silu(a) x b, forward and backward (Llama's MLP: ATen runs silu, mul and three
//   kernels back);
// - the rotary position embedding of q and k in the rotate_half layout (ATen: a cast of each
//   table, mul, neg, cat, mul, add; and as many backward).
// Float32 math, one rounding to the element type; the column sums in a fixed order
// (deterministic). No LibTorch here.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// Rows that one bias-gradient launch splits its column sums over: the float32 scratch it needs
/// is this x width.
constexpr int kBiasGradientParts = 256;

/// grad_bias[c] = sum over the rows of g[r][c] (float32), where g = grad_y (`rows` x `width` of
/// `dtype`, width a multiple of 8, 16-byte aligned) or, with `pre` (the GELU's input, same
/// shape), g = GELU-tanh's gradient at pre times grad_y, written to grad_pre in `dtype`.
/// `partial` is float32 scratch of kBiasGradientParts x width. No buffer may overlap another
/// (grad_pre not in place of grad_y).
cudaError_t bias_gradient(NhwcDtype dtype, const void* grad_y, const void* pre, std::int64_t rows,
                          int width, void* grad_pre, float* partial, float* grad_bias,
                          cudaStream_t stream);

/// out = silu(a) x b, [rows, width] of `dtype`: out contiguous, a's and b's rows `stride`
/// elements apart (stride = width: contiguous; stride = 2 width and b = a + width: the halves of
/// one [rows, 2 width] product). width a multiple of 8, every address and stride a multiple of 16
/// bytes; cudaErrorInvalidValue for a width that is not or a stride below it.
cudaError_t swiglu_forward(NhwcDtype dtype, const void* a, const void* b, std::int64_t rows,
                           std::int64_t width, std::int64_t stride, void* out, cudaStream_t stream);

/// The gradients of swiglu_forward, written in a's and b's layout: grad_a = grad x b x silu'(a),
/// grad_b = grad x silu(a); `grad` contiguous as out.
cudaError_t swiglu_backward(NhwcDtype dtype, const void* grad, const void* a, const void* b,
                            std::int64_t rows, std::int64_t width, std::int64_t stride,
                            void* grad_a, void* grad_b, cudaStream_t stream);

/// A [batch, heads, sequence, head width] tensor's layout: element (b, h, t, i) at
/// b x batch + h x head + t x position + i.
struct RotaryStrides {
  std::int64_t batch = 0;
  std::int64_t head = 0;
  std::int64_t position = 0;
};

/// The rotary embedding of x (`dtype`, head width `width`, a multiple of 8; strides multiples of
/// 4 elements, 8-byte aligned at least): with the halves x1 = x[..., :w/2], x2 = x[..., w/2:],
/// out1 = x1 cos1 - x2 sin1, out2 = x2 cos2 + x1 sin2, where cos and sin are float32 [>= sequence,
/// width] rows of position t. With `inverse` the rotation back (the backward pass: out1 = x1 cos1
/// + x2 sin2, out2 = x2 cos2 - x1 sin1). `out` may be x (in place: each thread writes only the
/// elements it read).
cudaError_t rotary_embedding(NhwcDtype dtype, const void* x, RotaryStrides x_strides, void* out,
                             RotaryStrides out_strides, const float* cos, const float* sin,
                             std::int64_t batch, std::int64_t heads, std::int64_t sequence,
                             int width, bool inverse, cudaStream_t stream);

/// Attention's q, k and v gradients (`grad`: three [batch, heads, sequence, head_width] tensors
/// of `dtype` with those strides, the last dimension's 1; head_width a multiple of 8, every
/// address and stride a multiple of 16 bytes) joined into `joined`, [batch x sequence,
/// 3 x heads x head_width] (q's columns, then k's, then v's: the gradient of the projection that
/// made q, k and v), and that projection's bias gradient, the joined gradient's column sums, in
/// the same pass (float32; `partial` as bias_gradient's). cudaErrorInvalidValue for more than
/// 2^31 - 1 rows or a head width that is not a multiple of 8.
cudaError_t join_heads_bias_gradient(NhwcDtype dtype, const void* const grad[3],
                                     const RotaryStrides strides[3], std::int64_t batch, int heads,
                                     int sequence, int head_width, void* joined, float* partial,
                                     float* grad_bias, cudaStream_t stream);

}  // namespace gpuperf::detail
