// The fused cross-entropy's kernels (cross_entropy_kernels.h): a block, or a cluster of blocks,
// per row of logits.

#include <cooperative_groups.h>
#include <math_constants.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "models/cross_entropy_kernels.h"
#include "models/kernel_types.cuh"

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kVector = 8;  // elements per vector load: 16 bytes of bf16/fp16

// Running (maximum, sum of exp(x - maximum)) with one more value.
__device__ __forceinline__ void add_value(float v, float& m, float& s) {
  if (v > m) {
    s = s * expf(m - v) + 1.0f;
    m = v;
  } else {
    s += expf(v - m);
  }
}

// exp(x) for the softmax over logits of type T: the hardware's approximation (ex2.approx, a few
// float32 ulps) for 16-bit logits, whose rounding is a thousand times coarser; expf for float32.
// The forward pass over a 50,304-token vocabulary is bound by its exponentials, not its loads.
template <typename T>
__device__ __forceinline__ float exp_of(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return expf(x);
  } else {
    return __expf(x);
  }
}

// Two running pairs merged (an empty pair is (-inf, 0)).
__device__ __forceinline__ void merge(float om, float os, float& m, float& s) {
  const float top = fmaxf(m, om);
  if (top == -CUDART_INF_F) return;
  s = s * expf(m - top) + os * expf(om - top);
  m = top;
}

template <typename T>
__device__ __forceinline__ bool vector_aligned(const T* p, std::int64_t vocab) {
  return vocab % kVector == 0 &&
         reinterpret_cast<std::uintptr_t>(p) % sizeof(Pack<T, kVector>) == 0;
}

// The row's log(sum(exp(x))) over `vocab` logits, in every thread of the block (online maximum
// and sum, float32). With `stage` (the vector path only) the row is copied there as it is read.
template <typename T>
__device__ float row_log_sum_exp(const T* x, std::int64_t vocab, T* stage = nullptr) {
  float m = -CUDART_INF_F;
  float s = 0.0f;
  if (vector_aligned(x, vocab)) {
    const auto* packs = reinterpret_cast<const Pack<T, kVector>*>(x);
    auto* staged = reinterpret_cast<Pack<T, kVector>*>(stage);
    const auto add_pack = [&](const Pack<T, kVector>& pack) {
      // The pack's maximum first: one rescale of the running sum per pack, not per element.
      float v[kVector];
      float top = m;
#pragma unroll
      for (int i = 0; i < kVector; ++i) {
        v[i] = to_float(pack.v[i]);
        top = fmaxf(top, v[i]);
      }
      if (top > m) {
        s *= exp_of<T>(m - top);
        m = top;
      }
#pragma unroll
      for (int i = 0; i < kVector; ++i) s += exp_of<T>(v[i] - m);
    };
    // kBatch packs loaded before any is used: more bytes in flight per thread, which the staged
    // kernel (2 blocks an SM: half the warps) needs to keep memory busy. Each thread still takes
    // its packs in the same order: the same sums.
    constexpr int kBatch = 4;
    const std::int64_t count = vocab / kVector;
    std::int64_t p = threadIdx.x;
    for (; p + (kBatch - 1) * kThreads < count; p += kBatch * kThreads) {
      Pack<T, kVector> batch[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) batch[b] = packs[p + b * kThreads];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (staged != nullptr) staged[p + b * kThreads] = batch[b];
        add_pack(batch[b]);
      }
    }
    for (; p < count; p += kThreads) {
      const Pack<T, kVector> pack = packs[p];
      if (staged != nullptr) staged[p] = pack;
      add_pack(pack);
    }
  } else {
    for (std::int64_t i = threadIdx.x; i < vocab; i += kThreads) add_value(to_float(x[i]), m, s);
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float om = __shfl_xor_sync(0xffffffffu, m, offset);
    const float os = __shfl_xor_sync(0xffffffffu, s, offset);
    merge(om, os, m, s);
  }
  __shared__ float warp_m[kWarps];
  __shared__ float warp_s[kWarps];
  __shared__ float result;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_s[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < kWarps ? warp_m[lane] : -CUDART_INF_F;
    s = lane < kWarps ? warp_s[lane] : 0.0f;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      const float om = __shfl_xor_sync(0xffffffffu, m, offset);
      const float os = __shfl_xor_sync(0xffffffffu, s, offset);
      merge(om, os, m, s);
    }
    if (lane == 0) result = m + logf(s);
  }
  __syncthreads();
  return result;
}

// g = (softmax(x) - one_hot(t)) x factor over the row, in the logits' dtype.
template <typename T>
__device__ void write_row_gradient(const T* x, std::int64_t vocab, float log_sum, std::int64_t t,
                                   float factor, T* g) {
  if (vector_aligned(x, vocab) && vector_aligned(g, vocab)) {
    const auto* in = reinterpret_cast<const Pack<T, kVector>*>(x);
    auto* out = reinterpret_cast<Pack<T, kVector>*>(g);
    for (std::int64_t p = threadIdx.x; p < vocab / kVector; p += kThreads) {
      const Pack<T, kVector> pack = in[p];
      Pack<T, kVector> result;
#pragma unroll
      for (int i = 0; i < kVector; ++i) {
        const std::int64_t k = p * kVector + i;
        const float prob = exp_of<T>(to_float(pack.v[i]) - log_sum);
        result.v[i] = from_float<T>((prob - (k == t ? 1.0f : 0.0f)) * factor);
      }
      out[p] = result;
    }
  } else {
    for (std::int64_t k = threadIdx.x; k < vocab; k += kThreads) {
      const float prob = expf(to_float(x[k]) - log_sum);
      g[k] = from_float<T>((prob - (k == t ? 1.0f : 0.0f)) * factor);
    }
  }
}

// One block per row: its log-sum-exp (`lse` may be null) and loss; where `grad` is not null, its
// gradient for the incoming gradient `factor` too, from a second read of the row right after the
// first. With every row a block, as many rows are in flight as the SMs hold (about 53 MB of GPT-2's
// 98 KiB rows on an H200), so the second read comes mostly from memory; fewer blocks taking rows in
// turn, to keep it in L2, ran slower (1.42 against 1.16 ms for GPT-2, 2.41 against 1.52 ms for
// Llama 1B: docs/results/2026-12-05-h200-lm-fewer-passes).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(const T* logits, const std::int64_t* targets, std::int64_t vocab, float* lse,
                   float* loss, float factor, T* grad) {
  const std::int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  const float log_sum = row_log_sum_exp(x, vocab);
  const std::int64_t t = targets[row];
  if (threadIdx.x == 0) {
    if (lse != nullptr) lse[row] = log_sum;
    loss[row] = t >= 0 && t < vocab ? log_sum - to_float(x[t]) : CUDART_NAN_F;
  }
  if (grad != nullptr) write_row_gradient(x, vocab, log_sum, t, factor, grad + row * vocab);
}

// forward_kernel with the gradient, for rows that fit an SM's shared memory twice (GPT-2's 98 KiB
// of bf16): the row is kept there from the first read, so the gradient reads it from shared
// memory, not from device memory again. Vector path only (vocab a multiple of kVector, aligned
// rows).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    staged_forward_kernel(const T* logits, const std::int64_t* targets, std::int64_t vocab,
                          float* lse, float* loss, float factor, T* grad) {
  extern __shared__ __align__(16) unsigned char staged_row[];
  T* stage = reinterpret_cast<T*>(staged_row);
  const std::int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  // Its closing __syncthreads also makes every thread's staged packs visible to all.
  const float log_sum = row_log_sum_exp(x, vocab, stage);
  const std::int64_t t = targets[row];
  if (threadIdx.x == 0) {
    if (lse != nullptr) lse[row] = log_sum;
    loss[row] = t >= 0 && t < vocab ? log_sum - to_float(x[t]) : CUDART_NAN_F;
  }
  write_row_gradient(stage, vocab, log_sum, t, factor, grad + row * vocab);
}

// Blocks a row of clustered_forward_kernel, on GPUs with thread-block clusters (sm_90 on).
constexpr int kCluster = 4;

// staged_forward_kernel for rows too long for one SM's shared memory (Llama's 128,256-token rows:
// 251 KiB of bf16): a cluster of kCluster blocks takes the row, each block staging its own part
// (whole packs, the last part shorter), and the parts' log-sum-exps meet through distributed
// shared memory, so each logit is read from device memory once, as in the staged kernel. Without
// clusters (the code for GPUs before sm_90) it only traps, and shared_limit() never lets it launch.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    clustered_forward_kernel(const T* logits, const std::int64_t* targets, std::int64_t vocab,
                             std::int64_t part, float* lse, float* loss, float factor, T* grad) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  extern __shared__ __align__(16) unsigned char staged_part[];
  __shared__ float part_log_sum;
  const cg::cluster_group cluster = cg::this_cluster();
  const auto rank = static_cast<std::int64_t>(cluster.block_rank());
  const std::int64_t row = blockIdx.x / kCluster;
  const std::int64_t begin = rank * part;
  const std::int64_t count = begin < vocab ? (vocab - begin < part ? vocab - begin : part) : 0;
  T* stage = reinterpret_cast<T*>(staged_part);
  const float own = row_log_sum_exp(logits + row * vocab + begin, count, stage);
  if (threadIdx.x == 0) part_log_sum = own;
  cluster.sync();
  float parts[kCluster];
  float top = -CUDART_INF_F;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) {
    parts[r] = *cluster.map_shared_rank(&part_log_sum, r);
    top = fmaxf(top, parts[r]);
  }
  // No block leaves (its shared memory with it) while another may still read its part's sum.
  cluster.sync();
  float sum = 0.0f;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) sum += expf(parts[r] - top);
  const float log_sum = top + logf(sum);
  const std::int64_t t = targets[row];
  if (rank == 0 && threadIdx.x == 0) {
    if (lse != nullptr) lse[row] = log_sum;
    loss[row] = t >= 0 && t < vocab ? log_sum - to_float(logits[row * vocab + t]) : CUDART_NAN_F;
  }
  write_row_gradient(stage, count, log_sum, t - begin, factor, grad + row * vocab + begin);
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without clusters: a launch fails rather than writing nothing
#endif
}

// The most dynamic shared memory a block of `Kernel` may take on `device` where two blocks fit an
// SM, set as the kernel's limit (`clustered`: 0 unless the device launches clusters and runs the
// kernel compiled for sm_90 or later, not a JIT of older code): asked and allowed once per kernel
// and device, never while `stream` is being captured into a graph (a capture may refuse those
// calls; TrainStep's warm-up steps come first), 0 until then or where the device cannot be asked.
template <auto Kernel>
std::size_t shared_limit(bool clustered, int device, cudaStream_t stream) {
  constexpr int kDevices = 64;
  static std::atomic<std::int64_t> known[kDevices] = {};  // 0: not asked, -1: none, else bytes
  if (device < 0 || device >= kDevices) return 0;
  std::int64_t limit = known[device].load(std::memory_order_relaxed);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (limit == 0 && cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
      capture == cudaStreamCaptureStatusNone) {
    int per_block = 0;
    int per_sm = 0;
    int clusters = 0;
    cudaFuncAttributes code = {};
    // Beside the row: the log-sum-exp's static shared memory and the runtime's reserve a block.
    constexpr std::int64_t kBesides = 2048;
    limit = -1;
    if (cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) ==
            cudaSuccess &&
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) ==
            cudaSuccess &&
        (!clustered ||
         (cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device) == cudaSuccess &&
          clusters == 1 && cudaFuncGetAttributes(&code, Kernel) == cudaSuccess &&
          code.ptxVersion >= 90))) {
      const std::int64_t bytes = std::min<std::int64_t>(per_block, per_sm / 2) - kBesides;
      if (bytes > 0 && cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)) == cudaSuccess) {
        limit = bytes;
      }
    }
    (void)cudaGetLastError();  // an attribute the device lacks is an answer, not an error
    known[device].store(limit, std::memory_order_relaxed);
  }
  return limit > 0 ? static_cast<std::size_t>(limit) : 0;
}

// How a row of 16-bit logits is staged: in one block (`bytes` of it), in a cluster (`part`
// logits a block, `bytes` each), or not at all (bytes 0: forward_kernel reads it twice).
struct Staging {
  std::size_t bytes = 0;
  std::int64_t part = 0;  // 0: one block takes the row
};

template <typename T>
Staging staging(std::int64_t vocab, const void* logits, const void* grad, cudaStream_t stream) {
  if (sizeof(T) != 2 || vocab % kVector != 0 ||
      reinterpret_cast<std::uintptr_t>(logits) % sizeof(Pack<T, kVector>) != 0 ||
      reinterpret_cast<std::uintptr_t>(grad) % sizeof(Pack<T, kVector>) != 0) {
    return {};
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  const auto bytes = static_cast<std::size_t>(vocab) * sizeof(T);
  if (bytes <= shared_limit<staged_forward_kernel<T>>(false, device, stream)) return {bytes, 0};
  const std::int64_t packs = vocab / kVector;
  const std::int64_t part = (packs + kCluster - 1) / kCluster * kVector;
  const auto part_bytes = static_cast<std::size_t>(part) * sizeof(T);
  if (part_bytes <= shared_limit<clustered_forward_kernel<T>>(true, device, stream)) {
    return {part_bytes, part};
  }
  return {};
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    backward_kernel(const T* logits, const std::int64_t* targets, const float* lse,
                    const float* grad_loss, float scale, std::int64_t vocab, T* grad) {
  const std::int64_t row = blockIdx.x;
  write_row_gradient(logits + row * vocab, vocab, lse[row], targets[row], grad_loss[0] * scale,
                     grad + row * vocab);
}

// grad x= grad_loss[0] / expected, unless they are equal (then every block returns at once).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    rescale_kernel(T* grad, std::int64_t n, const float* grad_loss, float expected) {
  const float incoming = grad_loss[0];
  if (incoming == expected) return;
  const float factor = incoming / expected;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (std::int64_t i = first; i < n; i += stride) {
    grad[i] = from_float<T>(to_float(grad[i]) * factor);
  }
}

}  // namespace

cudaError_t cross_entropy_forward(NhwcDtype dtype, const void* logits, const std::int64_t* targets,
                                  std::int64_t rows, std::int64_t vocab, float* lse, float* loss,
                                  float factor, void* grad, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_type(dtype, [&](auto type) {
    using T = decltype(type);
    const Staging staged = grad != nullptr ? staging<T>(vocab, logits, grad, stream) : Staging{};
    if (staged.part > 0) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(static_cast<unsigned>(rows * kCluster));
      config.blockDim = dim3(kThreads);
      config.dynamicSmemBytes = staged.bytes;
      config.stream = stream;
      cudaLaunchAttribute cluster = {};
      cluster.id = cudaLaunchAttributeClusterDimension;
      cluster.val.clusterDim.x = kCluster;
      cluster.val.clusterDim.y = 1;
      cluster.val.clusterDim.z = 1;
      config.attrs = &cluster;
      config.numAttrs = 1;
      return cudaLaunchKernelEx(&config, clustered_forward_kernel<T>, static_cast<const T*>(logits),
                                targets, vocab, staged.part, lse, loss, factor,
                                static_cast<T*>(grad));
    }
    if (staged.bytes > 0) {
      staged_forward_kernel<T><<<static_cast<unsigned>(rows), kThreads, staged.bytes, stream>>>(
          static_cast<const T*>(logits), targets, vocab, lse, loss, factor, static_cast<T*>(grad));
    } else {
      forward_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
          static_cast<const T*>(logits), targets, vocab, lse, loss, factor, static_cast<T*>(grad));
    }
    return cudaGetLastError();
  });
}

cudaError_t cross_entropy_backward(NhwcDtype dtype, const void* logits, const std::int64_t* targets,
                                   const float* lse, const float* grad_loss, float scale,
                                   std::int64_t rows, std::int64_t vocab, void* grad,
                                   cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_type(dtype, [&](auto type) {
    using T = decltype(type);
    backward_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(logits), targets, lse, grad_loss, scale, vocab,
        static_cast<T*>(grad));
    return cudaGetLastError();
  });
}

cudaError_t cross_entropy_rescale(NhwcDtype dtype, void* grad, std::int64_t n,
                                  const float* grad_loss, float expected, int blocks,
                                  cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type(dtype, [&](auto type) {
    using T = decltype(type);
    rescale_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<T*>(grad), n, grad_loss, expected);
    return cudaGetLastError();
  });
}

}  // namespace gpuperf::detail
