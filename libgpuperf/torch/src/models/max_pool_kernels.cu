// NHWC max pool with one-byte window indices (max_pool_kernels.h). Each thread handles one pixel's
// group of V channels (16 bytes when the channel count and the pointers allow it), so that a warp
// reads and writes contiguous memory; arithmetic is in fp32, values pass through unchanged.

#include "models/max_pool_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>  // INFINITY
#include <cstdint>

namespace gpuperf::detail {
namespace {

__device__ __forceinline__ std::int64_t smaller(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// V consecutive channels of one pixel, loaded and stored as one vector.
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};
template <int V>
struct alignas(V) IndexPack {
  std::uint8_t v[V];
};

// The grid: blockIdx.y walks rows of the output (n, oh), blockIdx.x and the threads the row's
// (ow, channel group) items, so that a thread needs one 32-bit division, not a chain of 64-bit
// ones (which made the first version compute-bound: 0.64 ms for the ResNet-50 stem's backward).
template <typename T, int V>
__global__ void forward_kernel(const T* __restrict__ x, T* __restrict__ y,
                               std::uint8_t* __restrict__ index, PoolShape s) {
  const int groups = static_cast<int>(s.channels / V);
  const int item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= s.out_width * groups) return;
  const std::int64_t ow = item / groups;
  const std::int64_t group = item - ow * groups;
  for (std::int64_t row = blockIdx.y; row < s.n * s.out_height; row += gridDim.y) {
    const std::int64_t n = row / s.out_height;
    const std::int64_t oh = row - n * s.out_height;
    // The window's top-left corner, possibly in the padding; only its part inside x is read.
    const std::int64_t h0 = oh * s.stride - s.padding;
    const std::int64_t w0 = ow * s.stride - s.padding;
    const int kh_begin = static_cast<int>(h0 < 0 ? -h0 : 0);
    const int kw_begin = static_cast<int>(w0 < 0 ? -w0 : 0);
    const int kh_end = static_cast<int>(smaller(s.kernel, s.height - h0));
    const int kw_end = static_cast<int>(smaller(s.kernel, s.width - w0));

    float best[V];
    int where[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      best[v] = -INFINITY;
      where[v] = kh_begin * s.kernel + kw_begin;  // an all -inf window: its first element
    }
    const T* image = x + n * s.height * s.width * s.channels + group * V;
    for (int kh = kh_begin; kh < kh_end; ++kh) {
      for (int kw = kw_begin; kw < kw_end; ++kw) {
        const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(
            image + ((h0 + kh) * s.width + (w0 + kw)) * s.channels);
        const int position = kh * s.kernel + kw;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float value = to_float(p.v[v]);
          // ATen's rule: the first largest value wins, a NaN wins over everything after it.
          if (value > best[v] || value != value) {  // value != value: a NaN
            best[v] = value;
            where[v] = position;
          }
        }
      }
    }
    const std::int64_t out = (row * s.out_width + ow) * s.channels + group * V;
    Pack<T, V> result;
#pragma unroll
    for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(best[v]);
    *reinterpret_cast<Pack<T, V>*>(y + out) = result;
    if (index != nullptr) {
      IndexPack<V> chosen;
#pragma unroll
      for (int v = 0; v < V; ++v) chosen.v[v] = static_cast<std::uint8_t>(where[v]);
      *reinterpret_cast<IndexPack<V>*>(index + out) = chosen;
    }
  }
}

// The grid as forward_kernel's, over rows (n, h) of the input.
template <typename T, int V>
__global__ void backward_kernel(const T* __restrict__ grad_y,
                                const std::uint8_t* __restrict__ index, T* __restrict__ grad_x,
                                PoolShape s) {
  const int groups = static_cast<int>(s.channels / V);
  const int item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= s.width * groups) return;
  const std::int64_t w = item / groups;
  const std::int64_t group = item - w * groups;
  for (std::int64_t row = blockIdx.y; row < s.n * s.height; row += gridDim.y) {
    const std::int64_t n = row / s.height;
    const std::int64_t h = row - n * s.height;
    // The windows holding (h, w): oh * stride - padding <= h <= oh * stride - padding + kernel - 1.
    const int hp = static_cast<int>(h) + s.padding;
    const int wp = static_cast<int>(w) + s.padding;
    const int oh_begin = hp < s.kernel ? 0 : (hp - s.kernel) / s.stride + 1;
    const int ow_begin = wp < s.kernel ? 0 : (wp - s.kernel) / s.stride + 1;
    const int oh_end = static_cast<int>(smaller(s.out_height, hp / s.stride + 1));
    const int ow_end = static_cast<int>(smaller(s.out_width, wp / s.stride + 1));

    float sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = 0.0f;
    for (int oh = oh_begin; oh < oh_end; ++oh) {
      for (int ow = ow_begin; ow < ow_end; ++ow) {
        const int position = (hp - oh * s.stride) * s.kernel + (wp - ow * s.stride);
        const std::int64_t at =
            ((n * s.out_height + oh) * s.out_width + ow) * s.channels + group * V;
        const IndexPack<V> chosen = *reinterpret_cast<const IndexPack<V>*>(index + at);
        const Pack<T, V> g = *reinterpret_cast<const Pack<T, V>*>(grad_y + at);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if (chosen.v[v] == position) sum[v] += to_float(g.v[v]);
        }
      }
    }
    Pack<T, V> result;
#pragma unroll
    for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(sum[v]);
    *reinterpret_cast<Pack<T, V>*>(grad_x + (row * s.width + w) * s.channels + group * V) = result;
  }
}

constexpr int kThreads = 256;

// Blocks along a row's items, and rows in y (at most 65,535 of them; each block loops over the
// rest).
dim3 grid_for(std::int64_t row_items, std::int64_t rows) {
  const auto x = static_cast<unsigned int>((row_items + kThreads - 1) / kThreads);
  const auto y = static_cast<unsigned int>(std::min<std::int64_t>(rows, 65535));
  return dim3(x, y);
}

bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// 16-byte vectors where the channel count and every pointer allow them, else one channel a thread.
template <typename T>
constexpr int kWide = 16 / sizeof(T);

template <typename T>
bool wide(std::int64_t channels, const void* a, const void* b, const void* index) {
  return channels % kWide<T> == 0 && aligned(a, 16) && aligned(b, 16) &&
         (index == nullptr || aligned(index, kWide<T>));
}

template <typename T>
cudaError_t forward_as(const void* x, void* y, std::uint8_t* index, const PoolShape& s,
                       cudaStream_t stream) {
  const auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  const std::int64_t rows = s.n * s.out_height;
  if (rows == 0 || s.out_width == 0 || s.channels == 0) return cudaSuccess;
  if (wide<T>(s.channels, x, y, index)) {
    forward_kernel<T, kWide<T>>
        <<<grid_for(s.out_width * s.channels / kWide<T>, rows), kThreads, 0, stream>>>(
            in, out, index, s);
  } else {
    forward_kernel<T, 1>
        <<<grid_for(s.out_width * s.channels, rows), kThreads, 0, stream>>>(in, out, index, s);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_as(const void* grad_y, const std::uint8_t* index, void* grad_x,
                        const PoolShape& s, cudaStream_t stream) {
  const auto* dy = static_cast<const T*>(grad_y);
  auto* dx = static_cast<T*>(grad_x);
  const std::int64_t rows = s.n * s.height;
  if (rows == 0 || s.width == 0 || s.channels == 0) return cudaSuccess;
  if (wide<T>(s.channels, grad_y, grad_x, index)) {
    backward_kernel<T, kWide<T>>
        <<<grid_for(s.width * s.channels / kWide<T>, rows), kThreads, 0, stream>>>(dy, index, dx,
                                                                                   s);
  } else {
    backward_kernel<T, 1>
        <<<grid_for(s.width * s.channels, rows), kThreads, 0, stream>>>(dy, index, dx, s);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t max_pool_forward(PoolDtype dtype, const void* x, void* y, std::uint8_t* index,
                             const PoolShape& shape, cudaStream_t stream) {
  switch (dtype) {
    case PoolDtype::kHalf:
      return forward_as<__half>(x, y, index, shape, stream);
    case PoolDtype::kBFloat16:
      return forward_as<__nv_bfloat16>(x, y, index, shape, stream);
    case PoolDtype::kFloat:
      return forward_as<float>(x, y, index, shape, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t max_pool_backward(PoolDtype dtype, const void* grad_y, const std::uint8_t* index,
                              void* grad_x, const PoolShape& shape, cudaStream_t stream) {
  switch (dtype) {
    case PoolDtype::kHalf:
      return backward_as<__half>(grad_y, index, grad_x, shape, stream);
    case PoolDtype::kBFloat16:
      return backward_as<__nv_bfloat16>(grad_y, index, grad_x, shape, stream);
    case PoolDtype::kFloat:
      return backward_as<float>(grad_y, index, grad_x, shape, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuperf::detail
