// The transformers' element-wise kernels (transformer_kernels.h): float32 math, one rounding to
// the element type on the way out.

#include <cstdint>

#include "models/column_sum.cuh"
#include "models/kernel_types.cuh"
#include "models/transformer_kernels.h"

namespace gpuperf::detail {
namespace {

// The bias gradient: 32 threads of 8 columns each across (256 columns a block), 8 rows down;
// blockIdx.y is the part of the rows (rows y, y + parts, ... in steps of 8 rows) a block sums.
constexpr int kColumnThreads = 32;
constexpr int kRowThreads = 8;
constexpr int kVec = 8;
constexpr int kBlockColumns = kColumnThreads * kVec;

// d/dx of GELU's tanh approximation, the function ATen's GeluBackward computes:
// 0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2), t = tanh(u), u = beta (x + kappa x^3).
// With s = 1 / (1 + e^(2u)), 1 + t = 2 (1 - s) and 1 - t^2 = 4 s (1 - s): one exponential and one
// reciprocal (within 2e-6 of the float64 derivative, whose largest value is 1.13; tanhf's form
// 1.2e-6; both far below the 16-bit rounding of the result) where tanhf's accurate path costs
// about twice the instructions, and the kernel below is bound by them as much as by memory.
// e^(2u) overflowing to infinity gives s = 0 (the derivative 1), as t = 1 would.
__device__ __forceinline__ float gelu_tanh_grad(float x) {
  constexpr float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
  constexpr float kKappa = 0.044715f;
  const float x_sq = x * x;
  const float u = kBeta * (x + kKappa * x_sq * x);
  const float s = __fdividef(1.0f, 1.0f + __expf(2.0f * u));
  const float one_minus_s = 1.0f - s;
  return one_minus_s + 2.0f * x * s * one_minus_s * kBeta * (1.0f + 3.0f * kKappa * x_sq);
}

// Where a bias-gradient launch reads row r's gradient at a thread's kVec columns: `column(c)`
// once a thread, then `load(at, r, g)` each row.
// A [rows, width] gradient (with GELU: times GELU-tanh's gradient at its input `pre`).
template <typename T, bool kGelu>
struct RowSource {
  const T* grad_y;
  const T* pre;
  int width;
  __device__ int column(int c) const { return c; }
  __device__ void load(int c, std::int64_t r, float (&g)[kVec]) const {
    const std::int64_t at = r * width + c;
    load_floats(grad_y + at, g);
    if constexpr (kGelu) {
      float x[kVec];
      load_floats(pre + at, x);
#pragma unroll
      for (int i = 0; i < kVec; ++i) g[i] *= gelu_tanh_grad(x[i]);
    }
  }
};

// Three [batch, heads, sequence, head_width] gradients (q's, k's, v's) read as the rows
// (b, t) of their [batch x sequence, 3 x heads x head_width] join: column c is gradient
// c / part, head (c % part) / head_width, element c % head_width.
template <typename T>
struct HeadsSource {
  const T* grad[3];
  RotaryStrides strides[3];
  int sequence;
  int part;  // heads x head_width
  int head_width;
  struct Column {
    const T* base;  // the element's address at b = t = 0
    std::int64_t batch;
    std::int64_t position;
  };
  __device__ Column column(int c) const {
    const int s = c / part;
    const int h = (c % part) / head_width;
    // Selected, not indexed: an indexed kernel parameter array goes through local memory.
    const T* g = s == 0 ? grad[0] : (s == 1 ? grad[1] : grad[2]);
    const RotaryStrides& at = s == 0 ? strides[0] : (s == 1 ? strides[1] : strides[2]);
    return {g + h * at.head + c % head_width, at.batch, at.position};
  }
  __device__ void load(const Column& at, std::int64_t r, float (&g)[kVec]) const {
    const auto b = static_cast<std::int64_t>(static_cast<std::uint32_t>(r) / sequence);
    const std::int64_t t = r - b * sequence;
    load_floats(at.base + b * at.batch + t * at.position, g);
  }
};

// The column sums of source's gradient over the rows, into partial (and, with `out`, the
// gradient written as [rows, width]).
template <typename T, typename Source>
__global__ void __launch_bounds__(kColumnThreads* kRowThreads)
    bias_gradient_kernel(Source source, std::int64_t rows, int width, T* __restrict__ out,
                         float* __restrict__ partial) {
  const int column = blockIdx.x * kBlockColumns + threadIdx.x * kVec;
  float sum[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) sum[i] = 0.0f;
  if (column < width) {
    const auto at = source.column(column);
    const std::int64_t step = static_cast<std::int64_t>(kBiasGradientParts) * kRowThreads;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * kRowThreads + threadIdx.y;
         r < rows; r += step) {
      float g[kVec];
      source.load(at, r, g);
      if (out != nullptr) store_floats(out + r * width + column, g);
#pragma unroll
      for (int i = 0; i < kVec; ++i) sum[i] += g[i];
    }
  }
  // The 8 row threads' sums, then one column a thread: tile[y][i x 32 + x] is thread (x, y)'s
  // column 8x + i (no bank conflicts either way).
  __shared__ float tile[kRowThreads][kBlockColumns];
#pragma unroll
  for (int i = 0; i < kVec; ++i) tile[threadIdx.y][i * kColumnThreads + threadIdx.x] = sum[i];
  __syncthreads();
  const int j = threadIdx.y * kColumnThreads + threadIdx.x;  // the block's column j
  const int c = blockIdx.x * kBlockColumns + j;
  if (c < width) {
    float t = 0.0f;
#pragma unroll
    for (int y = 0; y < kRowThreads; ++y) t += tile[y][(j % kVec) * kColumnThreads + j / kVec];
    partial[static_cast<std::int64_t>(blockIdx.y) * width + c] = t;
  }
}

// bias_gradient_kernel over `source`, then the partial sums' column_sum.
template <typename T, typename Source>
cudaError_t bias_gradient_from(const Source& source, std::int64_t rows, int width, T* out,
                               float* partial, float* grad_bias, cudaStream_t stream) {
  const dim3 block(kColumnThreads, kRowThreads);
  const dim3 grid(static_cast<unsigned>((width + kBlockColumns - 1) / kBlockColumns),
                  kBiasGradientParts);
  bias_gradient_kernel<T><<<grid, block, 0, stream>>>(source, rows, width, out, partial);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) return launched;
  return column_sum(partial, kBiasGradientParts, width, grad_bias, nullptr, nullptr, stream);
}

template <typename T>
cudaError_t bias_gradient_as(const void* grad_y, const void* pre, std::int64_t rows, int width,
                             void* grad_pre, float* partial, float* grad_bias,
                             cudaStream_t stream) {
  const auto* g = static_cast<const T*>(grad_y);
  if (pre != nullptr) {
    return bias_gradient_from(RowSource<T, true>{g, static_cast<const T*>(pre), width}, rows, width,
                              static_cast<T*>(grad_pre), partial, grad_bias, stream);
  }
  return bias_gradient_from(RowSource<T, false>{g, nullptr, width}, rows, width,
                            static_cast<T*>(nullptr), partial, grad_bias, stream);
}

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

__device__ __forceinline__ float sigmoid(float a) { return 1.0f / (1.0f + expf(-a)); }

// Element (r, c) of a [rows, width] SwiGLU: a's and b's (and their gradients') at r x stride + c,
// the output's (and its gradient's) at r x width + c. width a multiple of kVec: a thread's
// elements share a row.
struct GateLayout {
  std::int64_t width;
  std::int64_t stride;
  std::int64_t total;  // rows x width
  __device__ std::int64_t gate(std::int64_t at) const { return at / width * stride + at % width; }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    swiglu_forward_kernel(const T* a, const T* b, GateLayout layout, T* out) {
  const std::int64_t at = (static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x) * kVec;
  if (at >= layout.total) return;
  const std::int64_t in = layout.gate(at);
  float x[kVec];
  float y[kVec];
  load_floats(a + in, x);
  load_floats(b + in, y);
#pragma unroll
  for (int i = 0; i < kVec; ++i) y[i] *= x[i] * sigmoid(x[i]);
  store_floats(out + at, y);
}

// silu'(a) = sigmoid(a) (1 + a (1 - sigmoid(a))), as ATen's silu_backward.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    swiglu_backward_kernel(const T* grad, const T* a, const T* b, GateLayout layout, T* grad_a,
                           T* grad_b) {
  const std::int64_t at = (static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x) * kVec;
  if (at >= layout.total) return;
  const std::int64_t in = layout.gate(at);
  float g[kVec];
  float x[kVec];
  float y[kVec];
  load_floats(grad + at, g);
  load_floats(a + in, x);
  load_floats(b + in, y);
  float ga[kVec];
  float gb[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const float s = sigmoid(x[i]);
    gb[i] = g[i] * x[i] * s;
    ga[i] = g[i] * y[i] * s * (1.0f + x[i] * (1.0f - s));
  }
  store_floats(grad_a + in, ga);
  store_floats(grad_b + in, gb);
}

// One thread per 4 elements of each half of one (b, h, t) row; rows in (b, t, h) order, heads
// fastest (the projections' layout).
template <typename T, bool kInverse>
__global__ void __launch_bounds__(kThreads)
    rotary_kernel(const T* x, RotaryStrides xs, T* out, RotaryStrides os, const float* cos,
                  const float* sin, std::int64_t heads, std::int64_t sequence, int width,
                  std::int64_t total) {
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (index >= total) return;
  const int groups = width / 8;
  const int half = width / 2;
  const int e = 4 * static_cast<int>(index % groups);
  std::int64_t row = index / groups;
  const std::int64_t h = row % heads;
  row /= heads;
  const std::int64_t t = row % sequence;
  const std::int64_t b = row / sequence;
  const std::int64_t xi = b * xs.batch + h * xs.head + t * xs.position + e;
  const std::int64_t oi = b * os.batch + h * os.head + t * os.position + e;
  const std::int64_t ti = t * width + e;
  float x1[4], x2[4], c1[4], c2[4], s1[4], s2[4];
  load_floats(x + xi, x1);
  load_floats(x + xi + half, x2);
  load_floats(cos + ti, c1);
  load_floats(cos + ti + half, c2);
  load_floats(sin + ti, s1);
  load_floats(sin + ti + half, s2);
  float o1[4], o2[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (kInverse) {
      o1[i] = x1[i] * c1[i] + x2[i] * s2[i];
      o2[i] = x2[i] * c2[i] - x1[i] * s1[i];
    } else {
      o1[i] = x1[i] * c1[i] - x2[i] * s1[i];
      o2[i] = x2[i] * c2[i] + x1[i] * s2[i];
    }
  }
  store_floats(out + oi, o1);
  store_floats(out + oi + half, o2);
}

}  // namespace

cudaError_t bias_gradient(NhwcDtype dtype, const void* grad_y, const void* pre, std::int64_t rows,
                          int width, void* grad_pre, float* partial, float* grad_bias,
                          cudaStream_t stream) {
  return with_type(dtype, [&](auto element) {
    return bias_gradient_as<decltype(element)>(grad_y, pre, rows, width, grad_pre, partial,
                                               grad_bias, stream);
  });
}

cudaError_t join_heads_bias_gradient(NhwcDtype dtype, const void* const grad[3],
                                     const RotaryStrides strides[3], std::int64_t batch, int heads,
                                     int sequence, int head_width, void* joined, float* partial,
                                     float* grad_bias, cudaStream_t stream) {
  const std::int64_t rows = batch * sequence;
  if (rows == 0) return cudaSuccess;
  if (rows > INT32_MAX || head_width % kVec != 0) return cudaErrorInvalidValue;
  return with_type(dtype, [&](auto element) {
    using T = decltype(element);
    HeadsSource<T> source{};
    for (int s = 0; s < 3; ++s) {
      source.grad[s] = static_cast<const T*>(grad[s]);
      source.strides[s] = strides[s];
    }
    source.sequence = sequence;
    source.part = heads * head_width;
    source.head_width = head_width;
    return bias_gradient_from(source, rows, 3 * heads * head_width, static_cast<T*>(joined),
                              partial, grad_bias, stream);
  });
}

cudaError_t swiglu_forward(NhwcDtype dtype, const void* a, const void* b, std::int64_t rows,
                           std::int64_t width, std::int64_t stride, void* out,
                           cudaStream_t stream) {
  if (width % kVec != 0 || stride < width) return cudaErrorInvalidValue;
  const GateLayout layout{width, stride, rows * width};
  if (layout.total == 0) return cudaSuccess;
  return with_type(dtype, [&](auto element) {
    using T = decltype(element);
    swiglu_forward_kernel<T><<<blocks_for(layout.total / kVec), kThreads, 0, stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), layout, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t swiglu_backward(NhwcDtype dtype, const void* grad, const void* a, const void* b,
                            std::int64_t rows, std::int64_t width, std::int64_t stride,
                            void* grad_a, void* grad_b, cudaStream_t stream) {
  if (width % kVec != 0 || stride < width) return cudaErrorInvalidValue;
  const GateLayout layout{width, stride, rows * width};
  if (layout.total == 0) return cudaSuccess;
  return with_type(dtype, [&](auto element) {
    using T = decltype(element);
    swiglu_backward_kernel<T><<<blocks_for(layout.total / kVec), kThreads, 0, stream>>>(
        static_cast<const T*>(grad), static_cast<const T*>(a), static_cast<const T*>(b), layout,
        static_cast<T*>(grad_a), static_cast<T*>(grad_b));
    return cudaGetLastError();
  });
}

cudaError_t rotary_embedding(NhwcDtype dtype, const void* x, RotaryStrides x_strides, void* out,
                             RotaryStrides out_strides, const float* cos, const float* sin,
                             std::int64_t batch, std::int64_t heads, std::int64_t sequence,
                             int width, bool inverse, cudaStream_t stream) {
  const std::int64_t total = batch * heads * sequence * (width / 8);
  if (total == 0) return cudaSuccess;
  return with_type(dtype, [&](auto element) {
    using T = decltype(element);
    const auto* in = static_cast<const T*>(x);
    auto* o = static_cast<T*>(out);
    if (inverse) {
      rotary_kernel<T, true><<<blocks_for(total), kThreads, 0, stream>>>(
          in, x_strides, o, out_strides, cos, sin, heads, sequence, width, total);
    } else {
      rotary_kernel<T, false><<<blocks_for(total), kThreads, 0, stream>>>(
          in, x_strides, o, out_strides, cos, sin, heads, sequence, width, total);
    }
    return cudaGetLastError();
  });
}

}  // namespace gpuperf::detail
