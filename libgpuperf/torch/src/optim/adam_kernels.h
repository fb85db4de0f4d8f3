#pragma once
// Adam and AdamW over many float32 tensors in few launches, compiled by nvcc where the build has
// a CUDA compiler (GPUPERF_WITH_CUDA_KERNELS); FusedOptimizer calls it for float32 parameters on
// a GPU. The arithmetic is ATen's fused Adam's (at::_fused_adam_ / _fused_adamw_, the tensor-lr
// overloads torch.optim's fused AdamW uses), operation for operation and in the same precisions,
// so the two agree to the rounding of the last bit (tests/torch/test_amp.cpp). ATen's
// multi-tensor launcher gives each launch at most 320 blocks (about 60 launches for a Llama 1B
// step, about 3.4 TB/s on the H200, where gpuperf's one-pass cast kernel moves 4.1); here every
// 48 tensors are one launch with a block for each 4,096 elements.
//
// No LibTorch here: the launcher takes raw pointers; optim/fused_optimizer.cpp checks the tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuperf::detail {

/// The dtype of the parameters' 16-bit copies an update writes too.
enum class CopyDtype { kNone, kHalf, kBFloat16 };

/// One parameter's tensors, all float32 and dense in the same memory order, `numel` elements
/// each; `step` points to its step count (a float32 on the device, already counted for this
/// step, as torch.optim's fused path counts it before the kernel).
struct AdamTensor {
  float* param = nullptr;
  float* grad = nullptr;  // rewritten divided by the scale where a scale is given (as ATen's)
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
  const float* step = nullptr;
  void* copy = nullptr;  // the updated parameter rounded to AdamSettings::copy (null: none)
  std::int64_t numel = 0;
};

/// The update's settings: the rate from device memory (float32, so that a replayed CUDA graph
/// reads the rate set last); `grad_scale` (optional): the gradients are divided by it first;
/// `found_inf` (optional): when it holds 1 nothing is written.
struct AdamSettings {
  const float* lr = nullptr;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled = true;  // AdamW: the decay applied to the parameter, not added to the gradient
  const float* grad_scale = nullptr;
  const float* found_inf = nullptr;
  CopyDtype copy = CopyDtype::kNone;  // the dtype of AdamTensor::copy
};

/// One Adam/AdamW update of `count` tensors on `stream`; returns the first launch error.
cudaError_t adam_step(const AdamTensor* tensors, int count, const AdamSettings& settings,
                      cudaStream_t stream);

}  // namespace gpuperf::detail
