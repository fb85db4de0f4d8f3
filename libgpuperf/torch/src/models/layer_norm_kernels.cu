// The residual add and LayerNorm kernels (layer_norm_kernels.h): the row in registers (4 x kVecs
// values per lane) of 1 or 2 warps forward, of 1 to 8 warps backward; float32 math.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "models/column_sum.cuh"
#include "models/kernel_types.cuh"
#include "models/layer_norm_kernels.h"

namespace gpuperf::detail {
namespace {

constexpr int kWarps = 4;  // rows per block (forward), each over 1 or 2 warps
constexpr int kThreads = kWarps * 32;
// The backward pass: 8 warps a block, one wave of blocks (an H100/H200 has 132 SMs) at
// backward_blocks_per_sm, one partial row each.
constexpr int kBackwardWarps = 8;
constexpr int kBackwardThreads = kBackwardWarps * 32;
constexpr int kBackwardSms = 132;
static_assert(kBackwardSms * 4 <= kLayerNormPartialRows, "a partial row a block");

// Blocks an SM at the registers backward_kernel needs (<= 64 a thread for 4, <= 80 for 3) with
// `vecs` vectors a lane: LayerNorm keeps a bias gradient too.
constexpr int backward_blocks_per_sm(int vecs, bool rms) {
  if (vecs <= 2) return 4;
  if (vecs == 3) return rms ? 4 : 3;
  return rms ? 3 : 2;
}

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

// A row is split over kW warps: lane `lane` of the row's warp `part` holds its elements
// 4v..4v+3 for v = lane + 32 (part + kW k), k < kVecs. A block takes kWarps rows, one a row
// group of kW warps; with kW > 1 the row's warps add their sums through shared memory (each warp
// adds the kW sums in the same order: the same mean and 1/std in all of them).
template <typename T, int kW, int kVecs, bool kRms>
__global__ void __launch_bounds__(kThreads* kW)
    forward_kernel(const float* x, const T* branch, const float* branch_bias, const float* weight,
                   const float* bias, float eps, std::int64_t rows, int width, float* sum, T* y,
                   float* mean_out, float* rstd_out) {
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int group = warp / kW;
  const int part = warp % kW;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarps + group;
  const bool active = row < rows;
  if (kW == 1 && !active) return;  // no other warp waits for it
  const std::int64_t base = row * width;
  const auto element = [&](int k) { return 4 * (lane + 32 * (part + kW * k)); };
  // The row's sum over its kW warps (one __syncthreads); `slot` 0 for the mean, 1 for the
  // variance, so that the second sum never overwrites the first before every warp has read it.
  __shared__ float partial[2][kWarps * kW];
  const auto row_sum = [&](float v, int slot) {
    v = warp_sum(v);
    if constexpr (kW > 1) {
      if (lane == 0) partial[slot][warp] = v;
      __syncthreads();
      v = 0.0f;
#pragma unroll
      for (int j = 0; j < kW; ++j) v += partial[slot][group * kW + j];
    }
    return v;
  };
  float h[kVecs][4];
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int e = element(k);
    if (active && e < width) {
      load4(x + base + e, h[k]);
      if (branch != nullptr) {
        float b[4];
        load4(branch + base + e, b);
#pragma unroll
        for (int i = 0; i < 4; ++i) h[k][i] += b[i];
        if (branch_bias != nullptr) {
          load4(branch_bias + e, b);
#pragma unroll
          for (int i = 0; i < 4; ++i) h[k][i] += b[i];
        }
        store4(sum + base + e, h[k]);
      }
      s += (h[k][0] + h[k][1]) + (h[k][2] + h[k][3]);
    }
  }
  const float mean = kRms ? 0.0f : row_sum(s, 0) / static_cast<float>(width);
  float q = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (active && element(k) < width) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float d = h[k][i] - mean;
        q += d * d;
      }
    }
  }
  const float rstd = rsqrtf(row_sum(q, 1) / static_cast<float>(width) + eps);
  if (!active) return;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int e = element(k);
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
  if (lane == 0 && part == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

// A row is split over kW warps (a block takes kBackwardWarps / kW rows at a time, one a row
// group): lane `lane` of the row's warp `part` holds its elements 4v..4v+3 for
// v = lane + 32 (part + kW k), k < kVecs. Every warp of a block runs the block's turns over the
// rows (rows past the end idle), since a row's warps add their sums through shared memory, one
// __syncthreads a turn. Every warp keeps its share of the weight and bias gradients in registers;
// the block adds its row groups' shares in group order (shared memory) into its partial row, and
// column_sum_kernel adds the blocks' rows. kBranchBias: the branch's bias gradient too (the column
// sums of grad_branch as written, in `dtype`), kept and added as the others.
template <typename T, int kW, int kVecs, bool kRms, bool kBranchBias>
__global__ void __launch_bounds__(kBackwardThreads, backward_blocks_per_sm(kVecs, kRms))
    backward_kernel(const float* sum, const T* grad_y, const float* grad_sum, const float* weight,
                    const float* mean, const float* rstd, std::int64_t rows, int width,
                    float* grad_x, T* grad_branch, float* partial_weight, float* partial_bias,
                    float* partial_branch_bias) {
  constexpr int kGroups = kBackwardWarps / kW;  // rows a block takes at once
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int group = warp / kW;
  const int part = warp % kW;
  float dw[kVecs][4];
  float db[kVecs][4];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
#pragma unroll
    for (int i = 0; i < 4; ++i) dw[k][i] = db[k][i] = 0.0f;
  }
  // The branch bias's share in shared memory, a thread's own slots (registers are full: 80 a
  // thread at 3 blocks an SM).
  __shared__ float4 branch_share[kBranchBias ? kVecs * kBackwardThreads : 1];
  if constexpr (kBranchBias) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      branch_share[k * kBackwardThreads + threadIdx.x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }
  // The row's warps' (sum of g, sum of g x xhat); two buffers, so that one __syncthreads a row
  // keeps a warp from overwriting sums that a slower warp of its row has yet to read.
  __shared__ float2 row_sums[2][kBackwardWarps];
  const float inverse_width = 1.0f / static_cast<float>(width);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kGroups;
  int buffer = 0;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kGroups; first < rows;
       first += stride) {
    const std::int64_t row = first + group;
    const bool active = row < rows;
    const std::int64_t base = row * width;
    float m = 0.0f;
    float r = 0.0f;
    if (active) {
      if (!kRms) m = mean[row];
      r = rstd[row];
    }
    float xhat[kVecs][4];
    // grad_sum + rstd x g (g = grad_y x weight) before the row's means are known, so that g need
    // not stay in registers; grad_sum loads with the rest: one round trip to memory a row.
    float dx[kVecs][4];
    float sg = 0.0f;
    float sgx = 0.0f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int e = 4 * (lane + 32 * (part + kW * k));
      if (active && e < width) {
        float gy[4];
        float w[4];
        load4(sum + base + e, xhat[k]);
        load4(grad_y + base + e, gy);
        load4(weight + e, w);
        if (grad_sum != nullptr) {
          load4(grad_sum + base + e, dx[k]);
        } else {
          dx[k][0] = dx[k][1] = dx[k][2] = dx[k][3] = 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          xhat[k][i] = (xhat[k][i] - m) * r;
          db[k][i] += gy[i];
          dw[k][i] += gy[i] * xhat[k][i];
          const float g = gy[i] * w[i];
          sg += g;
          sgx += g * xhat[k][i];
          dx[k][i] += r * g;
        }
      }
    }
    sg = kRms ? 0.0f : warp_sum(sg);
    sgx = warp_sum(sgx);
    if constexpr (kW > 1) {
      // Every warp of the row adds the row's kW sums in the same order: the same means in all.
      if (lane == 0) row_sums[buffer][warp] = make_float2(sg, sgx);
      __syncthreads();
      sg = sgx = 0.0f;
#pragma unroll
      for (int j = 0; j < kW; ++j) {
        const float2 s = row_sums[buffer][group * kW + j];
        sg += s.x;
        sgx += s.y;
      }
      buffer ^= 1;
    }
    const float mean_g = sg * inverse_width;
    const float mean_gx = sgx * inverse_width;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int e = 4 * (lane + 32 * (part + kW * k));
      if (active && e < width) {
#pragma unroll
        for (int i = 0; i < 4; ++i) dx[k][i] -= r * (mean_g + xhat[k][i] * mean_gx);
        store4(grad_x + base + e, dx[k]);
        if (grad_branch != nullptr) store4(grad_branch + base + e, dx[k]);
        if constexpr (kBranchBias) {
          float4& b = branch_share[k * kBackwardThreads + threadIdx.x];
          b.x += to_float(from_float<T>(dx[k][0]));
          b.y += to_float(from_float<T>(dx[k][1]));
          b.z += to_float(from_float<T>(dx[k][2]));
          b.w += to_float(from_float<T>(dx[k][3]));
        }
      }
    }
  }
  // The block's row groups add their shares one after another, in group order (the same sums on
  // every run), then the block writes one partial row of each.
  constexpr int kShares = kBranchBias ? 3 : 2;
  __shared__ float4 shares[kShares][kLayerNormMaxWidth / 4];
  const auto add_share = [&](int s, int v, const float(&own)[4], bool first) {
    float4 a = make_float4(own[0], own[1], own[2], own[3]);
    if (!first) {
      const float4 p = shares[s][v];
      a = make_float4(p.x + a.x, p.y + a.y, p.z + a.z, p.w + a.w);
    }
    shares[s][v] = a;
  };
  for (int j = 0; j < kGroups; ++j) {
    if (group == j) {
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int v = lane + 32 * (part + kW * k);
        if (4 * v < width) {
          add_share(0, v, dw[k], j == 0);
          if (!kRms) add_share(1, v, db[k], j == 0);
          if constexpr (kBranchBias) {
            const float4 b = branch_share[k * kBackwardThreads + threadIdx.x];
            const float own[4] = {b.x, b.y, b.z, b.w};
            add_share(kShares - 1, v, own, j == 0);
          }
        }
      }
    }
    __syncthreads();
  }
  const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * width;
  for (int v = threadIdx.x; 4 * v < width; v += kBackwardThreads) {
    *reinterpret_cast<float4*>(partial_weight + at + 4 * v) = shares[0][v];
    if (!kRms) *reinterpret_cast<float4*>(partial_bias + at + 4 * v) = shares[1][v];
    if constexpr (kBranchBias) {
      *reinterpret_cast<float4*>(partial_branch_bias + at + 4 * v) = shares[kShares - 1][v];
    }
  }
}

// A row split: kW warps a row, kVecs vectors of 4 a lane.
template <int kW, int kVecs>
struct Split {
  static constexpr int kWarpsPerRow = kW;
  static constexpr int kVecsPerLane = kVecs;
};

// The forward pass's row split for `width`: one warp a row with the smallest instantiated
// vector count that covers it; Llama 1B's 2048 over two warps (one warp's 64 values a lane held
// 5 blocks of 4 rows an SM: 8,192 rows took 3.1 waves of blocks, the last one a tenth full).
template <typename F>
cudaError_t with_forward_split(int width, F&& launch) {
  const int needed = (width / 4 + 31) / 32;
  if (needed <= 2) return launch(Split<1, 2>{});
  if (needed <= 4) return launch(Split<1, 4>{});
  if (needed <= 6) return launch(Split<1, 6>{});
  if (needed <= 8) return launch(Split<1, 8>{});
  if (needed <= 10) return launch(Split<1, 10>{});
  if (needed <= 13) return launch(Split<1, 13>{});
  return launch(Split<2, 8>{});
}

// The backward pass's row split for `width`: kW warps a row of kVecs vectors a lane, few vectors
// (registers for 3 or 4 blocks an SM) and few warps (fewer warps to wait for at each row's
// __syncthreads).

template <bool kRms, typename F>
cudaError_t with_backward_split(int width, F&& launch) {
  const int needed = (width / 4 + 31) / 32;  // vectors a lane with one warp a row
  if (needed <= 1) return launch(Split<1, 1>{});
  if (needed <= 2) return launch(Split<1, 2>{});
  if (needed <= 4) return launch(Split<2, 2>{});
  if (needed <= 6) return launch(Split<2, 3>{});  // GPT-2's 768
  if (needed <= 8) return launch(Split<4, 2>{});
  if (needed <= 12) return launch(Split<4, 3>{});
  // GPT-2 XL's 1600, Llama 1B's 2048 (RMSNorm: registers for 4 vectors at 3 blocks an SM).
  if constexpr (kRms) {
    return launch(Split<4, 4>{});
  } else {
    return launch(Split<8, 2>{});
  }
}

template <typename T, bool kRms>
cudaError_t forward_as(const float* x, const void* branch, const float* branch_bias,
                       const float* weight, const float* bias, float eps, std::int64_t rows,
                       int width, float* sum, void* y, float* mean, float* rstd,
                       cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  return with_forward_split(width, [&](auto split) {
    constexpr int kW = decltype(split)::kWarpsPerRow;
    forward_kernel<T, kW, decltype(split)::kVecsPerLane, kRms>
        <<<blocks, kThreads * kW, 0, stream>>>(x, static_cast<const T*>(branch), branch_bias,
                                               weight, bias, eps, rows, width, sum,
                                               static_cast<T*>(y), mean, rstd);
    return cudaGetLastError();
  });
}

template <typename T, bool kRms, bool kBranchBias>
cudaError_t backward_as(const float* sum, const void* grad_y, const float* grad_sum,
                        const float* weight, const float* mean, const float* rstd,
                        std::int64_t rows, int width, float* grad_x, void* grad_branch,
                        float* partial, float* grad_weight, float* grad_bias,
                        float* grad_branch_bias, cudaStream_t stream) {
  int blocks = 0;
  const cudaError_t launched = with_backward_split<kRms>(width, [&](auto split) {
    constexpr int kW = decltype(split)::kWarpsPerRow;
    constexpr int kVecs = decltype(split)::kVecsPerLane;
    constexpr int kGroups = kBackwardWarps / kW;
    // One wave of blocks, or one a row group where there are fewer (fewer partial rows to add).
    const std::int64_t groups = std::max<std::int64_t>(1, (rows + kGroups - 1) / kGroups);
    blocks = static_cast<int>(
        std::min<std::int64_t>(kBackwardSms * backward_blocks_per_sm(kVecs, kRms), groups));
    // The bias's partial rows right after the weight's, the branch bias's after those, where
    // column_sum reads them.
    float* partial_bias = partial + static_cast<std::int64_t>(blocks) * width;
    float* partial_branch_bias =
        partial_bias + (kRms ? 0 : static_cast<std::int64_t>(blocks) * width);
    backward_kernel<T, kW, kVecs, kRms, kBranchBias><<<blocks, kBackwardThreads, 0, stream>>>(
        sum, static_cast<const T*>(grad_y), grad_sum, weight, mean, rstd, rows, width, grad_x,
        static_cast<T*>(grad_branch), partial, partial_bias, partial_branch_bias);
    return cudaGetLastError();
  });
  if (launched != cudaSuccess) return launched;
  return column_sum(partial, blocks, width, grad_weight, kRms ? nullptr : grad_bias,
                    kBranchBias ? grad_branch_bias : nullptr, stream);
}

// The launch for `kind`, `dtype` and whether there is a branch bias (LayerNorm only).
template <typename F>
cudaError_t with_types(NormKind kind, NhwcDtype dtype, bool branch_bias, F&& launch) {
  const auto by_dtype = [&](auto rms, auto with_branch_bias) {
    switch (dtype) {
      case NhwcDtype::kHalf:
        return launch(__half{}, rms, with_branch_bias);
      case NhwcDtype::kBFloat16:
        return launch(__nv_bfloat16{}, rms, with_branch_bias);
      default:
        return launch(float{}, rms, with_branch_bias);
    }
  };
  using True = std::true_type;
  using False = std::false_type;
  if (kind == NormKind::kRmsNorm) {
    return branch_bias ? cudaErrorInvalidValue : by_dtype(True{}, False{});
  }
  return branch_bias ? by_dtype(False{}, True{}) : by_dtype(False{}, False{});
}

}  // namespace

cudaError_t residual_layer_norm_forward(NormKind kind, NhwcDtype dtype, const float* x,
                                        const void* branch, const float* branch_bias,
                                        const float* weight, const float* bias, float eps,
                                        std::int64_t rows, int width, float* sum, void* y,
                                        float* mean, float* rstd, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (branch_bias != nullptr && branch == nullptr) return cudaErrorInvalidValue;
  return with_types(
      kind, dtype, branch_bias != nullptr && branch != nullptr, [&](auto t, auto rms, auto) {
        return forward_as<decltype(t), decltype(rms)::value>(
            x, branch, branch_bias, weight, bias, eps, rows, width, sum, y, mean, rstd, stream);
      });
}

cudaError_t residual_layer_norm_backward(NormKind kind, NhwcDtype dtype, const float* sum,
                                         const void* grad_y, const float* grad_sum,
                                         const float* weight, const float* mean, const float* rstd,
                                         std::int64_t rows, int width, float* grad_x,
                                         void* grad_branch, float* partial, float* grad_weight,
                                         float* grad_bias, float* grad_branch_bias,
                                         cudaStream_t stream) {
  return with_types(kind, dtype, grad_branch_bias != nullptr, [&](auto t, auto rms, auto bb) {
    return backward_as<decltype(t), decltype(rms)::value, decltype(bb)::value>(
        sum, grad_y, grad_sum, weight, mean, rstd, rows, width, grad_x, grad_branch, partial,
        grad_weight, grad_bias, grad_branch_bias, stream);
  });
}

}  // namespace gpuperf::detail
