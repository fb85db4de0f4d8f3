#pragma once
// gpuperf's own max-pool kernels for channels_last (NHWC) tensors, compiled by nvcc where the build
// has a CUDA compiler (GPUPERF_WITH_CUDA_KERNELS). The forward writes, beside the output, the
// position of each window's maximum in one byte; the backward gathers each input element's
// gradient from the windows that chose it. ATen's NHWC max pool writes an int64 index per output
// element and cuDNN's backward recomputes every window; both take 1.7-1.8 ms of a ResNet-50
// training step at batch 256 on an H200 (docs/results/2026-12-01-h200-kernel-trace).
//
// No LibTorch here: the launchers take raw pointers, so that nvcc never compiles LibTorch's
// headers. models/max_pool.cpp checks the tensors and calls them.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuperf::detail {

/// The element types the kernels take.
enum class PoolDtype { kFloat, kHalf, kBFloat16 };

/// One NHWC max pool: input [n, height, width, channels], output [n, out_height, out_width,
/// channels], a square window of `kernel` (kernel * kernel <= 255, the positions a byte holds)
/// moved by `stride`, `padding` implicit -inf on each border.
struct PoolShape {
  std::int64_t n = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t channels = 0;
  std::int64_t out_height = 0;
  std::int64_t out_width = 0;
  int kernel = 0;
  int stride = 0;
  int padding = 0;
};

/// Largest window (kernel * kernel positions) a byte index can name.
constexpr int kMaxPoolWindowPositions = 255;

/// y = max over each window of x; with `index` non-null, also the window position (row-major,
/// kh * kernel + kw) of its maximum: the first largest value, or the last NaN, as ATen's max pool
/// chooses. Launches on `stream`; returns the launch's error.
cudaError_t max_pool_forward(PoolDtype dtype, const void* x, void* y, std::uint8_t* index,
                             const PoolShape& shape, cudaStream_t stream);

/// grad_x[n, h, w, c] = sum of grad_y over the windows whose `index` names (h, w); zero where no
/// window chose it. Launches on `stream`; returns the launch's error.
cudaError_t max_pool_backward(PoolDtype dtype, const void* grad_y, const std::uint8_t* index,
                              void* grad_x, const PoolShape& shape, cudaStream_t stream);

}  // namespace gpuperf::detail
