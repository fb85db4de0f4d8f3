#pragma once
// gpuperf's training-mode batch norm with its ReLU (and residual add) for channels_last (NHWC)
// images, compiled by nvcc where the build has a CUDA compiler (GPUPERF_WITH_CUDA_KERNELS).
//
// Forward: y = relu(x * scale + shift [+ z]) with scale = weight * invstd and shift = bias - mean *
// scale, from the batch's mean and biased variance over N * H * W. Three launches:
//   1. statistics_kernel: per block of pixels, each channel's sum and sum of squares of
//      (x - x[pixel 0]): shifted by a value of the data itself, so that the variance loses no
//      precision to a mean far from 0. Written per block, never added atomically: the result does
//      not depend on the order blocks finish in.
//   2. finalize_kernel: per channel, the blocks' partials summed in fp64 in a fixed order; mean,
//      invstd, scale and shift; the running statistics updated as PyTorch's BatchNorm updates
//      them (the unbiased variance, the momentum).
//   3. apply_kernel: y and a ReLU mask, one byte per vector of V channels (bit v: channel v of
//      the vector was above 0), which is all the backward needs of the output.
// Given the sums of x and of its squares from the convolution that wrote x (cuDNN's GenStats
// epilogue, models/conv_statistics.cpp), finalize_sums_kernel computes the statistics from them:
// no pass over x. Those sums are not shifted; a channel whose mean is so far from 0 that they
// cannot give its variance to fp16's precision is flagged instead, and 1 and 2 then run for the
// flagged channels only (for none, two launches that read nothing but the flags).
// Backward, with dy' = dy * mask (= dz, the residual's gradient, when there is an add):
//   1. backward_reduce_kernel: per block, each channel's sum of dy' and of dy' * (x - mean);
//      writes dz.
//   2. backward_finalize_kernel: dbias = sum dy', dweight = invstd * sum dy' (x - mean), and
//      dx's coefficients: dx = a dy' - b x + c.
//   3. backward_apply_kernel: dx.
// The second pass over the data in each direction runs from the end of the tensor back, so that
// what the first pass read last is still in the L2 cache.
// From compute capability 9.0 on, each of these launches overlaps the end of the kernel before it
// (programmatic dependent launch): it waits for that kernel on the GPU before it reads its
// output, which hides the launch and block scheduling between two kernels.
//
// cuDNN's fused NHWC batch norm reads x twice and z once and writes y for the forward with an
// add; its kernels reached 2.2-2.9 TB/s on the H200 in ResNet-50 (docs/results).
//
// Requirements (models/batch_norm_fusion.cpp checks them): C a multiple of the vector width
// (16 bytes: 8 fp16/bf16 or 4 fp32 channels), 16-byte aligned data, more than one value per
// channel. No LibTorch here: the launchers take raw pointers.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"

namespace gpuperf::detail {

/// Channels per 16-byte vector for `dtype`: 8 for fp16 and bf16, 4 for fp32.
int batch_norm_vector_width(NhwcDtype dtype);

/// Sizes of one call's scratch buffers, for `pixels` (N * H * W) and `channels` on `device`.
struct BatchNormWorkspace {
  std::int64_t partial_floats;  ///< per-block partial sums: 2 floats per (block, channel)
  std::int64_t mask_bytes;      ///< the ReLU mask: one byte per vector
};
BatchNormWorkspace batch_norm_workspace(NhwcDtype dtype, std::int64_t pixels, std::int64_t channels,
                                        int device);

/// Per-channel float vectors of one batch norm: parameters in, statistics out.
struct BatchNormChannels {
  const float* weight;
  const float* bias;
  float* running_mean;
  float* running_var;
  float* save_mean;    ///< the batch's mean
  float* save_invstd;  ///< 1 / sqrt(biased variance + eps)
  float* scale;        ///< weight * invstd (forward), dx's coefficient a (backward)
  float* shift;        ///< bias - mean * scale (forward); b, c of dx (backward: 2 * channels)
};

/// The forward: y = relu(x * scale + shift + z) (`z` may be null), `mask` as above; updates the
/// running statistics with `momentum`. `partial` and `mask` sized by batch_norm_workspace. With a
/// null `mask` (and `z`): y = x * scale + shift, the batch norm alone. With `sums` (2 * channels
/// floats: each channel's sum of x, then each one's sum of squares, computed where x was made, as
/// a convolution's epilogue does), no statistics pass: one launch of a few threads per channel
/// turns them into the statistics (in fp64), except for the channels it flags in `recheck`
/// (`channels` ints, needed with `sums`) whose statistics come from the shifted pass over x.
cudaError_t batch_norm_forward(NhwcDtype dtype, const void* x, const void* z, void* y,
                               std::uint8_t* mask, float* partial, const float* sums, int* recheck,
                               const BatchNormChannels& c, double momentum, double eps,
                               std::int64_t pixels, std::int64_t channels, int device,
                               cudaStream_t stream);

/// The backward from the forward's x, mask and statistics (c.save_mean, c.save_invstd, c.weight):
/// dx, dz (when `dz` is not null: the gradient reaching z, dy' itself), dweight and dbias. Uses
/// c.scale and c.shift as scratch. A null `mask` (and `dz`): the batch norm alone's backward.
cudaError_t batch_norm_backward(NhwcDtype dtype, const void* dy, const void* x,
                                const std::uint8_t* mask, void* dx, void* dz, float* dweight,
                                float* dbias, float* partial, const BatchNormChannels& c,
                                std::int64_t pixels, std::int64_t channels, int device,
                                cudaStream_t stream);

}  // namespace gpuperf::detail
