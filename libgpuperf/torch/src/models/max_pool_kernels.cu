// NHWC max pool with one-byte window indices (max_pool_kernels.h). Each thread handles one pixel's
// group of V channels (16 bytes when the channel count and the pointers allow it), so that a warp
// reads and writes contiguous memory; arithmetic is in fp32, values pass through unchanged.

#include "models/max_pool_kernels.h"
#include "models/kernel_types.cuh"

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

template <int V>
struct alignas(V) IndexPack {
  std::uint8_t v[V];
};

// The grid: blockIdx.y walks rows of the output (n, oh), blockIdx.x and the threads the row's
// (ow, channel group) items, so that a thread needs one 32-bit division, not a chain of 64-bit
// ones (which made the first version compute-bound: 0.64 ms for the ResNet-50 stem's backward).
// K: the window size where it is known when compiling (3, ResNet's), so that the window's loads
// are unrolled and issued together; 0 reads it from the shape.
template <typename T, int V, int K>
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
    const int kernel = K > 0 ? K : s.kernel;
#pragma unroll
    for (int kh = 0; kh < kernel; ++kh) {
#pragma unroll
      for (int kw = 0; kw < kernel; ++kw) {
        // Row-major over the window, the part inside x only: ATen's order.
        if (kh < kh_begin || kh >= kh_end || kw < kw_begin || kw >= kw_end) continue;
        const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(
            image + ((h0 + kh) * s.width + (w0 + kw)) * s.channels);
        const int position = kh * kernel + kw;
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

// Adds grad_y of window (oh, ow) where that window chose input position `position`.
template <typename T, int V>
__device__ __forceinline__ void gather(const T* __restrict__ grad_y,
                                       const std::uint8_t* __restrict__ index, std::int64_t at,
                                       int position, float (&sum)[V]) {
  const IndexPack<V> chosen = *reinterpret_cast<const IndexPack<V>*>(index + at);
  const Pack<T, V> g = *reinterpret_cast<const Pack<T, V>*>(grad_y + at);
#pragma unroll
  for (int v = 0; v < V; ++v) {
    if (chosen.v[v] == position) sum[v] += to_float(g.v[v]);
  }
}

// The grid as forward_kernel's, over rows (n, h) of the input. W: the most windows holding an
// input element along each dimension (ceil(kernel / stride)) where it is known when compiling,
// so that their loads are unrolled and issued together (ResNet's 3x3, stride 2: 2); 0 loops.
template <typename T, int V, int W>
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
    const std::int64_t image = n * s.out_height;
    if (W > 0) {
#pragma unroll
      for (int i = 0; i < W; ++i) {
#pragma unroll
        for (int j = 0; j < W; ++j) {
          const int oh = oh_begin + i;
          const int ow = ow_begin + j;
          if (oh < oh_end && ow < ow_end) {
            gather<T, V>(grad_y, index, ((image + oh) * s.out_width + ow) * s.channels + group * V,
                         (hp - oh * s.stride) * s.kernel + (wp - ow * s.stride), sum);
          }
        }
      }
    } else {
      for (int oh = oh_begin; oh < oh_end; ++oh) {
        for (int ow = ow_begin; ow < ow_end; ++ow) {
          gather<T, V>(grad_y, index, ((image + oh) * s.out_width + ow) * s.channels + group * V,
                       (hp - oh * s.stride) * s.kernel + (wp - ow * s.stride), sum);
        }
      }
    }
    Pack<T, V> result;
#pragma unroll
    for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(sum[v]);
    *reinterpret_cast<Pack<T, V>*>(grad_x + (row * s.width + w) * s.channels + group * V) = result;
  }
}

// ResNet's pool (3x3 windows, stride 2, padding 1), one thread per 2x2 block of input pixels
// (rows 2a, 2a + 1, columns 2b, 2b + 1): the block lies in windows (a, b) to (a + 1, b + 1) only,
// and pixel (2a + dh, 2b + dw) sits at row dh + 1 - 2i, column dw + 1 - 2j of window
// (a + i, b + j). The four windows are loaded once for the four pixels, where backward_kernel
// loads nine (0.49 ms for the ResNet-50 stem's backward at batch 256 on the H200, 3.5x its
// memory traffic).
template <typename T, int V>
__global__ void backward_3x3_stride2_kernel(const T* __restrict__ grad_y,
                                            const std::uint8_t* __restrict__ index,
                                            T* __restrict__ grad_x, PoolShape s) {
  const int groups = static_cast<int>(s.channels / V);
  const int block_columns = static_cast<int>((s.width + 1) / 2);
  const int block_rows = static_cast<int>((s.height + 1) / 2);
  const int item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= block_columns * groups) return;
  const int b = item / groups;
  const int group = item - b * groups;
  for (std::int64_t row = blockIdx.y; row < s.n * block_rows; row += gridDim.y) {
    const std::int64_t n = row / block_rows;
    const int a = static_cast<int>(row - n * block_rows);
    IndexPack<V> chosen[2][2];
    Pack<T, V> g[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        if (a + i < s.out_height && b + j < s.out_width) {
          const std::int64_t at =
              ((n * s.out_height + a + i) * s.out_width + b + j) * s.channels + group * V;
          chosen[i][j] = *reinterpret_cast<const IndexPack<V>*>(index + at);
          g[i][j] = *reinterpret_cast<const Pack<T, V>*>(grad_y + at);
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) chosen[i][j].v[v] = 0xff;  // no window position
        }
      }
    }
#pragma unroll
    for (int dh = 0; dh < 2; ++dh) {
#pragma unroll
      for (int dw = 0; dw < 2; ++dw) {
        const int h = 2 * a + dh;
        const int w = 2 * b + dw;
        if (h >= s.height || w >= s.width) continue;
        float sum[V];
#pragma unroll
        for (int v = 0; v < V; ++v) sum[v] = 0.0f;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const int kh = dh + 1 - 2 * i;
            const int kw = dw + 1 - 2 * j;
            if (kh < 0 || kw < 0) continue;  // known when compiling: outside this window
#pragma unroll
            for (int v = 0; v < V; ++v) {
              if (chosen[i][j].v[v] == kh * 3 + kw) sum[v] += to_float(g[i][j].v[v]);
            }
          }
        }
        Pack<T, V> result;
#pragma unroll
        for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(sum[v]);
        *reinterpret_cast<Pack<T, V>*>(grad_x + ((n * s.height + h) * s.width + w) * s.channels +
                                       group * V) = result;
      }
    }
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

template <typename T, int V, int K>
void launch_forward(const T* x, T* y, std::uint8_t* index, const PoolShape& s,
                    cudaStream_t stream) {
  forward_kernel<T, V, K>
      <<<grid_for(s.out_width * s.channels / V, s.n * s.out_height), kThreads, 0, stream>>>(
          x, y, index, s);
}

template <typename T, int V>
void launch_forward(const T* x, T* y, std::uint8_t* index, const PoolShape& s,
                    cudaStream_t stream) {
  if (s.kernel == 3) {
    launch_forward<T, V, 3>(x, y, index, s, stream);
  } else {
    launch_forward<T, V, 0>(x, y, index, s, stream);
  }
}

template <typename T>
cudaError_t forward_as(const void* x, void* y, std::uint8_t* index, const PoolShape& s,
                       cudaStream_t stream) {
  const auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  if (s.n * s.out_height == 0 || s.out_width == 0 || s.channels == 0) return cudaSuccess;
  if (wide<T>(s.channels, x, y, index)) {
    launch_forward<T, kWide<T>>(in, out, index, s, stream);
  } else {
    launch_forward<T, 1>(in, out, index, s, stream);
  }
  return cudaGetLastError();
}

template <typename T, int V, int W>
void launch_backward(const T* dy, const std::uint8_t* index, T* dx, const PoolShape& s,
                     cudaStream_t stream) {
  backward_kernel<T, V, W>
      <<<grid_for(s.width * s.channels / V, s.n * s.height), kThreads, 0, stream>>>(dy, index, dx,
                                                                                    s);
}

template <typename T, int V>
void launch_backward(const T* dy, const std::uint8_t* index, T* dx, const PoolShape& s,
                     cudaStream_t stream) {
  if (s.kernel == 3 && s.stride == 2 && s.padding == 1) {
    backward_3x3_stride2_kernel<T, V>
        <<<grid_for((s.width + 1) / 2 * (s.channels / V), s.n * ((s.height + 1) / 2)), kThreads, 0,
           stream>>>(dy, index, dx, s);
    return;
  }
  switch ((s.kernel + s.stride - 1) / s.stride) {
    case 1:
      return launch_backward<T, V, 1>(dy, index, dx, s, stream);
    case 2:
      return launch_backward<T, V, 2>(dy, index, dx, s, stream);
    case 3:
      return launch_backward<T, V, 3>(dy, index, dx, s, stream);
    default:
      return launch_backward<T, V, 0>(dy, index, dx, s, stream);
  }
}

template <typename T>
cudaError_t backward_as(const void* grad_y, const std::uint8_t* index, void* grad_x,
                        const PoolShape& s, cudaStream_t stream) {
  const auto* dy = static_cast<const T*>(grad_y);
  auto* dx = static_cast<T*>(grad_x);
  if (s.n * s.height == 0 || s.width == 0 || s.channels == 0) return cudaSuccess;
  if (wide<T>(s.channels, grad_y, grad_x, index)) {
    launch_backward<T, kWide<T>>(dy, index, dx, s, stream);
  } else {
    launch_backward<T, 1>(dy, index, dx, s, stream);
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
