// The residual add and LayerNorm kernels (layer_norm_kernels.h): one warp per row, the row in
// registers (4 x kVecs values per lane), float32 math.

#include <cstdint>
#include <type_traits>

#include "models/column_sum.cuh"
#include "models/kernel_types.cuh"
#include "models/layer_norm_kernels.h"

namespace gpuperf::detail {
namespace {

constexpr int kWarps = 4;  // rows per block (forward)
constexpr int kThreads = kWarps * 32;
// The backward pass: 8 warps a block, one block per partial row (kLayerNormPartialRows blocks,
// about two per SM on an H100/H200: enough warps in flight to keep its loads going).
constexpr int kBackwardWarps = 8;
constexpr int kBackwardThreads = kBackwardWarps * 32;
constexpr int kBackwardBlocks = kLayerNormPartialRows;
constexpr int kBackwardRowStride = kBackwardBlocks * kBackwardWarps;  // warps in all

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ void load4(const float* p, float (&v)[4]) {
  const float4 a = *reinterpret_cast<const float4*>(p);
  v[0] = a.x;
  v[1] = a.y;
  v[2] = a.z;
  v[3] = a.w;
}

__device__ __forceinline__ void store4(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}

template <typename T>
__device__ __forceinline__ void load4(const T* p, float (&v)[4]) {
  const Pack<T, 4> pack = *reinterpret_cast<const Pack<T, 4>*>(p);
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = to_float(pack.v[i]);
}

template <typename T>
__device__ __forceinline__ void store4(T* p, const float (&v)[4]) {
  Pack<T, 4> pack;
#pragma unroll
  for (int i = 0; i < 4; ++i) pack.v[i] = from_float<T>(v[i]);
  *reinterpret_cast<Pack<T, 4>*>(p) = pack;
}

// Lane `lane` holds the row's elements 4v..4v+3 for v = lane + 32k, k < kVecs.
template <typename T, int kVecs, bool kRms>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(const float* x, const T* branch, const float* weight, const float* bias,
                   float eps, std::int64_t rows, int width, float* sum, T* y, float* mean_out,
                   float* rstd_out) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const std::int64_t base = row * width;
  float h[kVecs][4];
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int e = 4 * (lane + 32 * k);
    if (e < width) {
      load4(x + base + e, h[k]);
      if (branch != nullptr) {
        float b[4];
        load4(branch + base + e, b);
#pragma unroll
        for (int i = 0; i < 4; ++i) h[k][i] += b[i];
        store4(sum + base + e, h[k]);
      }
      s += (h[k][0] + h[k][1]) + (h[k][2] + h[k][3]);
    }
  }
  const float mean = kRms ? 0.0f : warp_sum(s) / static_cast<float>(width);
  float q = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (4 * (lane + 32 * k) < width) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float d = h[k][i] - mean;
        q += d * d;
      }
    }
  }
  const float rstd = rsqrtf(warp_sum(q) / static_cast<float>(width) + eps);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int e = 4 * (lane + 32 * k);
    if (e < width) {
      float w[4];
      float b[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      load4(weight + e, w);
      if (!kRms) load4(bias + e, b);
      float out[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) out[i] = (h[k][i] - mean) * rstd * w[i] + b[i];
      store4(y + base + e, out);
    }
  }
  if (lane == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

// Each warp takes rows warp, warp + kBackwardRowStride, ... and keeps its share of the weight and
// bias gradients in registers; the block adds its warps' shares in warp order (shared memory)
// into its partial row, and column_sum_kernel adds the blocks' rows.
template <typename T, int kVecs, bool kRms>
__global__ void __launch_bounds__(kBackwardThreads)
    backward_kernel(const float* sum, const T* grad_y, const float* grad_sum, const float* weight,
                    const float* mean, const float* rstd, std::int64_t rows, int width,
                    float* grad_x, T* grad_branch, float* partial_weight, float* partial_bias) {
  const int warp = blockIdx.x * kBackwardWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  float dw[kVecs][4];
  float db[kVecs][4];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
#pragma unroll
    for (int i = 0; i < 4; ++i) dw[k][i] = db[k][i] = 0.0f;
  }
  const float inverse_width = 1.0f / static_cast<float>(width);
  for (std::int64_t row = warp; row < rows; row += kBackwardRowStride) {
    const std::int64_t base = row * width;
    const float m = kRms ? 0.0f : mean[row];
    const float r = rstd[row];
    float xhat[kVecs][4];
    float g[kVecs][4];  // grad_y x weight
    float sg = 0.0f;
    float sgx = 0.0f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int e = 4 * (lane + 32 * k);
      if (e < width) {
        float gy[4];
        float w[4];
        load4(sum + base + e, xhat[k]);
        load4(grad_y + base + e, gy);
        load4(weight + e, w);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          xhat[k][i] = (xhat[k][i] - m) * r;
          db[k][i] += gy[i];
          dw[k][i] += gy[i] * xhat[k][i];
          g[k][i] = gy[i] * w[i];
          sg += g[k][i];
          sgx += g[k][i] * xhat[k][i];
        }
      }
    }
    const float mean_g = kRms ? 0.0f : warp_sum(sg) * inverse_width;
    const float mean_gx = warp_sum(sgx) * inverse_width;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int e = 4 * (lane + 32 * k);
      if (e < width) {
        float dx[4];
        if (grad_sum != nullptr) {
          load4(grad_sum + base + e, dx);
        } else {
          dx[0] = dx[1] = dx[2] = dx[3] = 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) dx[i] += r * (g[k][i] - mean_g - xhat[k][i] * mean_gx);
        store4(grad_x + base + e, dx);
        if (grad_branch != nullptr) store4(grad_branch + base + e, dx);
      }
    }
  }
  // The block's warps add their shares one after another, in warp order (the same sums on every
  // run), then the block writes one partial row of each.
  __shared__ float4 shares[2][kLayerNormMaxWidth / 4];
  const int warp_in_block = threadIdx.x / 32;
  for (int w = 0; w < kBackwardWarps; ++w) {
    if (warp_in_block == w) {
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int v = lane + 32 * k;
        if (4 * v < width) {
          float4 a = make_float4(dw[k][0], dw[k][1], dw[k][2], dw[k][3]);
          float4 b = make_float4(db[k][0], db[k][1], db[k][2], db[k][3]);
          if (w > 0) {
            const float4 pa = shares[0][v];
            const float4 pb = shares[1][v];
            a = make_float4(pa.x + a.x, pa.y + a.y, pa.z + a.z, pa.w + a.w);
            b = make_float4(pb.x + b.x, pb.y + b.y, pb.z + b.z, pb.w + b.w);
          }
          shares[0][v] = a;
          if (!kRms) shares[1][v] = b;
        }
      }
    }
    __syncthreads();
  }
  const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * width;
  for (int v = threadIdx.x; 4 * v < width; v += kBackwardThreads) {
    *reinterpret_cast<float4*>(partial_weight + at + 4 * v) = shares[0][v];
    if (!kRms) *reinterpret_cast<float4*>(partial_bias + at + 4 * v) = shares[1][v];
  }
}

// The smallest instantiated vectors-per-lane count that covers `width`.
template <typename F>
cudaError_t with_vecs(int width, F&& launch) {
  const int needed = (width / 4 + 31) / 32;
  if (needed <= 2) return launch(std::integral_constant<int, 2>{});
  if (needed <= 4) return launch(std::integral_constant<int, 4>{});
  if (needed <= 6) return launch(std::integral_constant<int, 6>{});
  if (needed <= 8) return launch(std::integral_constant<int, 8>{});
  if (needed <= 10) return launch(std::integral_constant<int, 10>{});
  if (needed <= 13) return launch(std::integral_constant<int, 13>{});
  return launch(std::integral_constant<int, 16>{});
}

template <typename T, bool kRms>
cudaError_t forward_as(const float* x, const void* branch, const float* weight, const float* bias,
                       float eps, std::int64_t rows, int width, float* sum, void* y, float* mean,
                       float* rstd, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  return with_vecs(width, [&](auto vecs) {
    forward_kernel<T, decltype(vecs)::value, kRms>
        <<<blocks, kThreads, 0, stream>>>(x, static_cast<const T*>(branch), weight, bias, eps, rows,
                                          width, sum, static_cast<T*>(y), mean, rstd);
    return cudaGetLastError();
  });
}

template <typename T>
cudaError_t forward_as(NormKind kind, const float* x, const void* branch, const float* weight,
                       const float* bias, float eps, std::int64_t rows, int width, float* sum,
                       void* y, float* mean, float* rstd, cudaStream_t stream) {
  return kind == NormKind::kRmsNorm ? forward_as<T, true>(x, branch, weight, bias, eps, rows, width,
                                                          sum, y, mean, rstd, stream)
                                    : forward_as<T, false>(x, branch, weight, bias, eps, rows,
                                                           width, sum, y, mean, rstd, stream);
}

template <typename T, bool kRms>
cudaError_t backward_as(const float* sum, const void* grad_y, const float* grad_sum,
                        const float* weight, const float* mean, const float* rstd,
                        std::int64_t rows, int width, float* grad_x, void* grad_branch,
                        float* partial, float* grad_weight, float* grad_bias, cudaStream_t stream) {
  float* partial_bias = partial + static_cast<std::int64_t>(kLayerNormPartialRows) * width;
  const cudaError_t launched = with_vecs(width, [&](auto vecs) {
    backward_kernel<T, decltype(vecs)::value, kRms>
        <<<kBackwardBlocks, kBackwardThreads, 0, stream>>>(
            sum, static_cast<const T*>(grad_y), grad_sum, weight, mean, rstd, rows, width, grad_x,
            static_cast<T*>(grad_branch), partial, partial_bias);
    return cudaGetLastError();
  });
  if (launched != cudaSuccess) return launched;
  return column_sum(partial, kLayerNormPartialRows, width, grad_weight, kRms ? nullptr : grad_bias,
                    stream);
}

template <typename T>
cudaError_t backward_as(NormKind kind, const float* sum, const void* grad_y, const float* grad_sum,
                        const float* weight, const float* mean, const float* rstd,
                        std::int64_t rows, int width, float* grad_x, void* grad_branch,
                        float* partial, float* grad_weight, float* grad_bias, cudaStream_t stream) {
  return kind == NormKind::kRmsNorm
             ? backward_as<T, true>(sum, grad_y, grad_sum, weight, mean, rstd, rows, width, grad_x,
                                    grad_branch, partial, grad_weight, grad_bias, stream)
             : backward_as<T, false>(sum, grad_y, grad_sum, weight, mean, rstd, rows, width, grad_x,
                                     grad_branch, partial, grad_weight, grad_bias, stream);
}

}  // namespace

cudaError_t residual_layer_norm_forward(NormKind kind, NhwcDtype dtype, const float* x,
                                        const void* branch, const float* weight, const float* bias,
                                        float eps, std::int64_t rows, int width, float* sum,
                                        void* y, float* mean, float* rstd, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  switch (dtype) {
    case NhwcDtype::kHalf:
      return forward_as<__half>(kind, x, branch, weight, bias, eps, rows, width, sum, y, mean, rstd,
                                stream);
    case NhwcDtype::kBFloat16:
      return forward_as<__nv_bfloat16>(kind, x, branch, weight, bias, eps, rows, width, sum, y,
                                       mean, rstd, stream);
    default:
      return forward_as<float>(kind, x, branch, weight, bias, eps, rows, width, sum, y, mean, rstd,
                               stream);
  }
}

cudaError_t residual_layer_norm_backward(NormKind kind, NhwcDtype dtype, const float* sum,
                                         const void* grad_y, const float* grad_sum,
                                         const float* weight, const float* mean, const float* rstd,
                                         std::int64_t rows, int width, float* grad_x,
                                         void* grad_branch, float* partial, float* grad_weight,
                                         float* grad_bias, cudaStream_t stream) {
  switch (dtype) {
    case NhwcDtype::kHalf:
      return backward_as<__half>(kind, sum, grad_y, grad_sum, weight, mean, rstd, rows, width,
                                 grad_x, grad_branch, partial, grad_weight, grad_bias, stream);
    case NhwcDtype::kBFloat16:
      return backward_as<__nv_bfloat16>(kind, sum, grad_y, grad_sum, weight, mean, rstd, rows,
                                        width, grad_x, grad_branch, partial, grad_weight, grad_bias,
                                        stream);
    default:
      return backward_as<float>(kind, sum, grad_y, grad_sum, weight, mean, rstd, rows, width,
                                grad_x, grad_branch, partial, grad_weight, grad_bias, stream);
  }
}

}  // namespace gpuperf::detail
