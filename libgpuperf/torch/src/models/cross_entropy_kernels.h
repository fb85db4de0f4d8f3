#pragma once
// A language model's cross-entropy over the vocabulary, as llm.c's fused classifier computes it:
// each row's log-sum-exp and loss in one pass over its logits (online maximum and sum, float32
// math), and the logits' gradient (softmax - one-hot) x scale written in the logits' dtype, in the
// same launch where the loss's incoming gradient is known in advance (each row read again right
// after its first read, partly from L2: 1.16 ms against 0.44 + 0.80 ms at GPT-2's shape on an
// H200), else in the backward pass. ATen's path under autocast copies the logits to float32,
// writes log-softmax, zero-fills and scatters the gradient and casts it back: five more passes
// over a [tokens, vocabulary] array. No LibTorch here: models/fused_cross_entropy.cpp checks the
// tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// For each of `rows` rows of `vocab` dense logits: lse[r] = log(sum(exp(x))) (`lse` may be
/// null), loss[r] = lse[r] - x[target[r]] (NaN for a target outside [0, vocab)); where `grad` is
/// not null, grad[r][i] = (exp(x[r][i] - lse[r]) - [i == target[r]]) x factor in the logits' dtype,
/// from the same launch: 16-bit rows are read from device memory once and kept in shared memory,
/// by one block a row where it fits (GPT-2's 50,304 logits) or by a cluster of blocks a row on
/// sm_90 and later (Llama 3's 128,256), else read twice, one block a row.
cudaError_t cross_entropy_forward(NhwcDtype dtype, const void* logits, const std::int64_t* targets,
                                  std::int64_t rows, std::int64_t vocab, float* lse, float* loss,
                                  float factor, void* grad, cudaStream_t stream);

/// grad[r][i] = (exp(x[r][i] - lse[r]) - [i == target[r]]) * grad_loss[0] * scale, in the logits'
/// dtype; `grad_loss` is device memory (the mean loss's incoming gradient: no host read).
cudaError_t cross_entropy_backward(NhwcDtype dtype, const void* logits, const std::int64_t* targets,
                                   const float* lse, const float* grad_loss, float scale,
                                   std::int64_t rows, std::int64_t vocab, void* grad,
                                   cudaStream_t stream);

/// The `n` values of `grad` (of `dtype`) times grad_loss[0] / expected, read on the device: when
/// they are equal, each of the `blocks` blocks returns at once and nothing is written.
cudaError_t cross_entropy_rescale(NhwcDtype dtype, void* grad, std::int64_t n,
                                  const float* grad_loss, float expected, int blocks,
                                  cudaStream_t stream);

}  // namespace gpuperf::detail
