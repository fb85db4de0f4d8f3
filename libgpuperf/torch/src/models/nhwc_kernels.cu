// Channel padding and global average pooling for NHWC images (nhwc_kernels.h).

#include "models/kernel_types.cuh"
#include "models/nhwc_kernels.h"

#include <algorithm>
#include <cstdint>

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;

// One thread per pixel: its (at most 4) channels read one by one (a 3-channel pixel is 6 or 12
// bytes, not a vector), written as one 4-channel vector.
template <typename In, typename Out>
__global__ void pad_channels_kernel(const In* __restrict__ in, int in_channels,
                                    Out* __restrict__ out, std::int64_t pixels) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < pixels; p += stride) {
    Pack<Out, 4> result;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      result.v[c] = from_float<Out>(c < in_channels ? to_float(in[p * in_channels + c]) : 0.0f);
    }
    reinterpret_cast<Pack<Out, 4>*>(out)[p] = result;
  }
}

// A block per (image, 32 groups of V channels): each of its 8 slices of threads sums every 8th
// pixel, and the slices' sums meet in shared memory. At batch 1 (2048 channels, 7 x 7 pixels) a
// thread per channel group alone left 256 threads each reading 49 pixels in turn: 7.8 us on the
// H200, against 6.1 for ATen's mean.
constexpr int kSlices = 8;
constexpr int kGroupsPerBlock = kThreads / kSlices;

template <typename T, int V>
__global__ void average_pool_kernel(const T* __restrict__ x, T* __restrict__ out, std::int64_t n,
                                    std::int64_t pixels, std::int64_t channels) {
  __shared__ float partial[kSlices][kGroupsPerBlock][V];
  const std::int64_t groups = channels / V;
  const int lane = static_cast<int>(threadIdx.x) % kGroupsPerBlock;
  const int slice = static_cast<int>(threadIdx.x) / kGroupsPerBlock;
  const std::int64_t group = static_cast<std::int64_t>(blockIdx.x) * kGroupsPerBlock + lane;
  const float scale = 1.0f / static_cast<float>(pixels);
  for (std::int64_t image = blockIdx.y; image < n; image += gridDim.y) {
    float sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = 0.0f;
    if (group < groups) {
      const T* base = x + image * pixels * channels + group * V;
#pragma unroll 4
      for (std::int64_t p = slice; p < pixels; p += kSlices) {
        const Pack<T, V> values = *reinterpret_cast<const Pack<T, V>*>(base + p * channels);
#pragma unroll
        for (int v = 0; v < V; ++v) sum[v] += to_float(values.v[v]);
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) partial[slice][lane][v] = sum[v];
    __syncthreads();
    if (slice == 0 && group < groups) {
#pragma unroll
      for (int other = 1; other < kSlices; ++other) {
#pragma unroll
        for (int v = 0; v < V; ++v) sum[v] += partial[other][lane][v];
      }
      Pack<T, V> result;
#pragma unroll
      for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(sum[v] * scale);
      *reinterpret_cast<Pack<T, V>*>(out + image * channels + group * V) = result;
    }
    __syncthreads();  // the next image's sums overwrite `partial`
  }
}

// grad_x[n, p, c] = grad_y[n, c] / pixels, one thread per (image, pixel, group of V channels),
// written in channels_last directly (ATen's backward writes NCHW, and the copy to channels_last
// after it took 0.13 ms of a ResNet-50 training step at batch 256 on the H200).
template <typename T, int V>
__global__ void average_pool_backward_kernel(const T* __restrict__ grad_y, T* __restrict__ grad_x,
                                             std::int64_t n, std::int64_t pixels,
                                             std::int64_t channels) {
  const std::int64_t groups = channels / V;
  const std::int64_t items = n * pixels * groups;
  const float scale = 1.0f / static_cast<float>(pixels);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       item < items; item += stride) {
    const std::int64_t group = item % groups;
    const std::int64_t image = item / (pixels * groups);
    const Pack<T, V> g =
        *reinterpret_cast<const Pack<T, V>*>(grad_y + image * channels + group * V);
    Pack<T, V> result;
#pragma unroll
    for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(to_float(g.v[v]) * scale);
    reinterpret_cast<Pack<T, V>*>(grad_x)[item] = result;
  }
}

unsigned int blocks_for(std::int64_t items) {
  return static_cast<unsigned int>(
      std::min<std::int64_t>((items + kThreads - 1) / kThreads, std::int64_t{1} << 20));
}

template <typename In, typename Out>
cudaError_t pad_as(const void* in, std::int64_t in_channels, void* out, std::int64_t pixels,
                   cudaStream_t stream) {
  if (pixels == 0) return cudaSuccess;
  pad_channels_kernel<In, Out><<<blocks_for(pixels), kThreads, 0, stream>>>(
      static_cast<const In*>(in), static_cast<int>(in_channels), static_cast<Out*>(out), pixels);
  return cudaGetLastError();
}

template <typename In>
cudaError_t pad_from(const void* in, std::int64_t in_channels, NhwcDtype out_dtype, void* out,
                     std::int64_t pixels, cudaStream_t stream) {
  switch (out_dtype) {
    case NhwcDtype::kHalf:
      return pad_as<In, __half>(in, in_channels, out, pixels, stream);
    case NhwcDtype::kBFloat16:
      return pad_as<In, __nv_bfloat16>(in, in_channels, out, pixels, stream);
    case NhwcDtype::kFloat:
      return pad_as<In, float>(in, in_channels, out, pixels, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
constexpr int kWide = 16 / sizeof(T);

template <typename T>
bool wide(std::int64_t channels, const void* a, const void* b) {
  return channels % kWide<T> == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
}

template <typename T, int V>
void launch_average_pool(const T* x, T* out, std::int64_t n, std::int64_t pixels,
                         std::int64_t channels, cudaStream_t stream) {
  const auto group_blocks =
      static_cast<unsigned int>((channels / V + kGroupsPerBlock - 1) / kGroupsPerBlock);
  const dim3 grid(group_blocks, static_cast<unsigned int>(std::min<std::int64_t>(n, 65535)));
  average_pool_kernel<T, V><<<grid, kThreads, 0, stream>>>(x, out, n, pixels, channels);
}

template <typename T>
cudaError_t average_pool_as(const void* x, void* out, std::int64_t n, std::int64_t pixels,
                            std::int64_t channels, cudaStream_t stream) {
  if (n == 0 || channels == 0) return cudaSuccess;
  const auto* in = static_cast<const T*>(x);
  auto* result = static_cast<T*>(out);
  if (wide<T>(channels, x, out)) {
    launch_average_pool<T, kWide<T>>(in, result, n, pixels, channels, stream);
  } else {
    launch_average_pool<T, 1>(in, result, n, pixels, channels, stream);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t average_pool_backward_as(const void* grad_y, void* grad_x, std::int64_t n,
                                     std::int64_t pixels, std::int64_t channels,
                                     cudaStream_t stream) {
  if (n == 0 || pixels == 0 || channels == 0) return cudaSuccess;
  const auto* dy = static_cast<const T*>(grad_y);
  auto* dx = static_cast<T*>(grad_x);
  if (wide<T>(channels, grad_y, grad_x)) {
    average_pool_backward_kernel<T, kWide<T>>
        <<<blocks_for(n * pixels * channels / kWide<T>), kThreads, 0, stream>>>(dy, dx, n, pixels,
                                                                                channels);
  } else {
    average_pool_backward_kernel<T, 1>
        <<<blocks_for(n * pixels * channels), kThreads, 0, stream>>>(dy, dx, n, pixels, channels);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t pad_channels_to_4(NhwcDtype in_dtype, const void* in, std::int64_t in_channels,
                              NhwcDtype out_dtype, void* out, std::int64_t pixels,
                              cudaStream_t stream) {
  if (in_channels < 1 || in_channels > 4) return cudaErrorInvalidValue;
  switch (in_dtype) {
    case NhwcDtype::kHalf:
      return pad_from<__half>(in, in_channels, out_dtype, out, pixels, stream);
    case NhwcDtype::kBFloat16:
      return pad_from<__nv_bfloat16>(in, in_channels, out_dtype, out, pixels, stream);
    case NhwcDtype::kFloat:
      return pad_from<float>(in, in_channels, out_dtype, out, pixels, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t global_average_pool(NhwcDtype dtype, const void* x, void* out, std::int64_t n,
                                std::int64_t pixels, std::int64_t channels, cudaStream_t stream) {
  switch (dtype) {
    case NhwcDtype::kHalf:
      return average_pool_as<__half>(x, out, n, pixels, channels, stream);
    case NhwcDtype::kBFloat16:
      return average_pool_as<__nv_bfloat16>(x, out, n, pixels, channels, stream);
    case NhwcDtype::kFloat:
      return average_pool_as<float>(x, out, n, pixels, channels, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t global_average_pool_backward(NhwcDtype dtype, const void* grad_y, void* grad_x,
                                         std::int64_t n, std::int64_t pixels, std::int64_t channels,
                                         cudaStream_t stream) {
  switch (dtype) {
    case NhwcDtype::kHalf:
      return average_pool_backward_as<__half>(grad_y, grad_x, n, pixels, channels, stream);
    case NhwcDtype::kBFloat16:
      return average_pool_backward_as<__nv_bfloat16>(grad_y, grad_x, n, pixels, channels, stream);
    case NhwcDtype::kFloat:
      return average_pool_backward_as<float>(grad_y, grad_x, n, pixels, channels, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuperf::detail
