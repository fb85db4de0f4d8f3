#pragma once
// gpuperf's small kernels for channels_last (NHWC) images, compiled by nvcc where the build has a
// CUDA compiler (GPUPERF_WITH_CUDA_KERNELS), beside the max-pool kernels (max_pool_kernels.h):
// - channel padding: an image's 3 channels, zero-padded to 4 and converted in one pass. cuDNN's
//   fast first-layer kernels take 4 channels and pad a 3-channel input themselves, once for the
//   forward and once more for the weight gradient (0.12 ms each in a ResNet-50 training step at
//   batch 256 on the H200), and at batch 1 cuDNN runs a slower kernel on 3 channels;
// - global average pooling, a mean over H x W per (image, channel), and its gradient written in
//   channels_last.
//
// No LibTorch here: the launchers take raw pointers; models/nhwc_ops.cpp checks the tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "device/own_kernels.h"  // own_kernels_run_on, which the launchers' callers ask

namespace gpuperf::detail {

/// The element types the kernels take.
enum class NhwcDtype { kFloat, kHalf, kBFloat16 };

/// out[p, c] = c < in_channels ? in[p, c] : 0 over `pixels` pixels (N * H * W), converted from
/// `in_dtype` to `out_dtype` (round to nearest even, as ATen converts). in_channels <= 4.
cudaError_t pad_channels_to_4(NhwcDtype in_dtype, const void* in, std::int64_t in_channels,
                              NhwcDtype out_dtype, void* out, std::int64_t pixels,
                              cudaStream_t stream);

/// out[n, c] = mean over `pixels` (H * W) of x[n, pixel, c], accumulated in fp32 and stored in
/// x's dtype.
cudaError_t global_average_pool(NhwcDtype dtype, const void* x, void* out, std::int64_t n,
                                std::int64_t pixels, std::int64_t channels, cudaStream_t stream);

/// grad_x[n, pixel, c] = grad_y[n, c] / pixels: global_average_pool's gradient, in NHWC.
cudaError_t global_average_pool_backward(NhwcDtype dtype, const void* grad_y, void* grad_x,
                                         std::int64_t n, std::int64_t pixels, std::int64_t channels,
                                         cudaStream_t stream);

}  // namespace gpuperf::detail
