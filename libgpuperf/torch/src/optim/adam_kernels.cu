// Adam and AdamW over many tensors (adam_kernels.h): the tensors' pointers and sizes travel in the
// kernel's parameters, as ATen's multi-tensor kernels pass theirs; each block updates one chunk of
// one tensor, four elements a thread at a time where the pointers allow vectors; with copies, each
// updated value is written rounded to 16 bits too.

#include "optim/adam_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxTensors = 48;  // 2.9 KB of parameters, under the 4 KB every GPU takes
constexpr std::int64_t kChunk = 16 * kThreads;  // elements per block

struct AdamBatch {
  AdamTensor tensors[kMaxTensors];
  int first_block[kMaxTensors + 1];  // tensor i's chunks are blocks [first_block[i], [i + 1])
  int count;
};

// One element, as ATen's adam_math (fused_adam_utils.cuh) computes it: the settings in double,
// the values and the bias corrections in float, with the same conversions between them.
__device__ __forceinline__ void adam_element(float& param_io, float& grad_io, float& exp_avg_io,
                                             float& exp_avg_sq_io, double lr, const AdamSettings& s,
                                             float bias_correction1, float bias_correction2_sqrt) {
  float param = param_io;
  float grad = grad_io;
  if (s.grad_scale != nullptr) grad /= static_cast<double>(*s.grad_scale);
  grad_io = grad;
  float exp_avg = exp_avg_io;
  float exp_avg_sq = exp_avg_sq_io;
  if (s.weight_decay != 0) {
    if (s.decoupled) {
      param -= lr * s.weight_decay * param;
    } else {
      grad += param * s.weight_decay;
    }
  }
  exp_avg = s.beta1 * exp_avg + (1 - s.beta1) * grad;
  exp_avg_sq = s.beta2 * exp_avg_sq + (1 - s.beta2) * grad * grad;
  const float step_size = lr / bias_correction1;
  const float denom = (std::sqrt(exp_avg_sq) / bias_correction2_sqrt) + s.eps;
  param -= step_size * exp_avg / denom;
  param_io = param;
  exp_avg_io = exp_avg;
  exp_avg_sq_io = exp_avg_sq;
}

// The copy's element type (void: no copy), rounded to nearest even as ATen converts.
__device__ __forceinline__ void round_into(__half* out, float v) { *out = __float2half_rn(v); }
__device__ __forceinline__ void round_into(__nv_bfloat16* out, float v) {
  *out = __float2bfloat16_rn(v);
}

template <typename C>
struct alignas(4 * sizeof(C)) Four {
  C v[4];
};

template <typename C>
__global__ void __launch_bounds__(kThreads) adam_kernel(AdamBatch batch, AdamSettings s) {
  constexpr bool kCopy = !std::is_void_v<C>;
  if (s.found_inf != nullptr && *s.found_inf == 1) return;
  const int block = static_cast<int>(blockIdx.x);
  int t = 0;
  while (t + 1 < batch.count && batch.first_block[t + 1] <= block) ++t;
  const AdamTensor& x = batch.tensors[t];
  // The tensor's bias corrections, once a block: in double from its step count, then float, as
  // ATen's FusedAdamMathFunctor hands them to adam_math.
  __shared__ float corrections[2];
  if (threadIdx.x == 0) {
    const double step = *x.step;
    corrections[0] = static_cast<float>(1 - ::pow(s.beta1, step));
    corrections[1] = static_cast<float>(::sqrt(1 - ::pow(s.beta2, step)));
  }
  __syncthreads();
  const float bias_correction1 = corrections[0];
  const float bias_correction2_sqrt = corrections[1];
  const double lr = *s.lr;
  const bool store_grad = s.grad_scale != nullptr;
  const std::int64_t begin = static_cast<std::int64_t>(block - batch.first_block[t]) * kChunk;
  const std::int64_t end = begin + kChunk < x.numel ? begin + kChunk : x.numel;
  std::int64_t scalar_from = begin;
  const auto vectors_fit = [](const float* p) {
    return reinterpret_cast<std::uintptr_t>(p) % sizeof(float4) == 0;
  };
  // A launch with copies may hold parameters without one (GPT-2's embeddings and norms).
  C* const copy = kCopy ? static_cast<C*>(x.copy) : nullptr;
  bool copy_fits = true;
  if constexpr (kCopy) {
    copy_fits = reinterpret_cast<std::uintptr_t>(copy) % sizeof(Four<C>) == 0;
  }
  if (vectors_fit(x.param) && vectors_fit(x.grad) && vectors_fit(x.exp_avg) &&
      vectors_fit(x.exp_avg_sq) && copy_fits) {
    const std::int64_t vectors = (end - begin) / 4;
    auto* p4 = reinterpret_cast<float4*>(x.param + begin);
    auto* g4 = reinterpret_cast<float4*>(x.grad + begin);
    auto* m4 = reinterpret_cast<float4*>(x.exp_avg + begin);
    auto* v4 = reinterpret_cast<float4*>(x.exp_avg_sq + begin);
    for (std::int64_t k = threadIdx.x; k < vectors; k += kThreads) {
      float4 p = p4[k];
      float4 g = g4[k];
      float4 m = m4[k];
      float4 v = v4[k];
      adam_element(p.x, g.x, m.x, v.x, lr, s, bias_correction1, bias_correction2_sqrt);
      adam_element(p.y, g.y, m.y, v.y, lr, s, bias_correction1, bias_correction2_sqrt);
      adam_element(p.z, g.z, m.z, v.z, lr, s, bias_correction1, bias_correction2_sqrt);
      adam_element(p.w, g.w, m.w, v.w, lr, s, bias_correction1, bias_correction2_sqrt);
      p4[k] = p;
      m4[k] = m;
      v4[k] = v;
      if (store_grad) g4[k] = g;
      if constexpr (kCopy) {
        if (copy != nullptr) {
          Four<C> c;
          round_into(&c.v[0], p.x);
          round_into(&c.v[1], p.y);
          round_into(&c.v[2], p.z);
          round_into(&c.v[3], p.w);
          reinterpret_cast<Four<C>*>(copy + begin)[k] = c;
        }
      }
    }
    scalar_from = begin + 4 * vectors;
  }
  for (std::int64_t k = scalar_from + threadIdx.x; k < end; k += kThreads) {
    float g = x.grad[k];
    adam_element(x.param[k], g, x.exp_avg[k], x.exp_avg_sq[k], lr, s, bias_correction1,
                 bias_correction2_sqrt);
    if (store_grad) x.grad[k] = g;
    if constexpr (kCopy) {
      if (copy != nullptr) round_into(copy + k, x.param[k]);
    }
  }
}

}  // namespace

cudaError_t adam_step(const AdamTensor* tensors, int count, const AdamSettings& settings,
                      cudaStream_t stream) {
  for (int first = 0; first < count; first += kMaxTensors) {
    AdamBatch batch{};
    batch.count = std::min(kMaxTensors, count - first);
    int blocks = 0;
    for (int i = 0; i < batch.count; ++i) {
      batch.tensors[i] = tensors[first + i];
      batch.first_block[i] = blocks;
      blocks += static_cast<int>((tensors[first + i].numel + kChunk - 1) / kChunk);
    }
    batch.first_block[batch.count] = blocks;
    if (blocks == 0) continue;
    switch (settings.copy) {
      case CopyDtype::kHalf:
        adam_kernel<__half><<<blocks, kThreads, 0, stream>>>(batch, settings);
        break;
      case CopyDtype::kBFloat16:
        adam_kernel<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(batch, settings);
        break;
      case CopyDtype::kNone:
        adam_kernel<void><<<blocks, kThreads, 0, stream>>>(batch, settings);
        break;
    }
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace gpuperf::detail
