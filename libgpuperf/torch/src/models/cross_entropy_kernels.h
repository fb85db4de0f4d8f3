#pragma once
// A language model's cross-entropy over the vocabulary in two kernels, as llm.c's fused classifier
// computes it: forward, each row's log-sum-exp and loss in one pass over its logits (online
// maximum and sum, float32 math); backward, the logits' gradient (softmax - one-hot) x scale in
// one more pass, written in the logits' dtype. ATen's path under autocast copies the logits to
// float32, writes log-softmax, zero-fills and scatters the gradient and casts it back: five more
// passes over a [tokens, vocabulary] array. No LibTorch here: models/fused_cross_entropy.cpp checks
// the tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// For each of `rows` rows of `vocab` dense logits: lse[r] = log(sum(exp(x))), loss[r] = lse[r] -
/// x[target[r]] (NaN for a target outside [0, vocab)). One block per row on `stream`.
cudaError_t cross_entropy_forward(NhwcDtype dtype, const void* logits, const std::int64_t* targets,
                                  std::int64_t rows, std::int64_t vocab, float* lse, float* loss,
                                  cudaStream_t stream);

/// grad[r][i] = (exp(x[r][i] - lse[r]) - [i == target[r]]) * grad_loss[0] * scale, in the logits'
/// dtype; `grad_loss` is device memory (the mean loss's incoming gradient: no host read).
cudaError_t cross_entropy_backward(NhwcDtype dtype, const void* logits, const std::int64_t* targets,
                                   const float* lse, const float* grad_loss, float scale,
                                   std::int64_t rows, std::int64_t vocab, void* grad,
                                   cudaStream_t stream);

}  // namespace gpuperf::detail
