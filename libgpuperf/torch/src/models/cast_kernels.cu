// Many tensors converted in one launch (cast_kernels.h): the tensors' pointers and sizes travel in
// the kernel's parameters, as ATen's multi-tensor kernels pass theirs; each block converts one
// chunk of one tensor.

#include "models/cast_kernels.h"
#include "models/kernel_types.cuh"

#include <algorithm>
#include <cstdint>

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxTensors = 48;  // 1.3 KB of parameters, under the 4 KB every GPU takes
constexpr std::int64_t kChunk = 16 * kThreads;  // elements per block

struct CastBatch {
  const void* in[kMaxTensors];
  void* out[kMaxTensors];
  std::int64_t numel[kMaxTensors];
  int first_block[kMaxTensors + 1];  // tensor i's chunks are blocks [first_block[i], [i + 1])
  int count;
};

// Four elements a thread where the tensor's pointers allow vectors (the caching allocator's
// blocks do): a chunk starts at a multiple of 4 elements; its last few, past the last multiple of
// 4, go one by one.
template <typename In, typename Out>
__global__ void cast_kernel(CastBatch batch) {
  const int block = static_cast<int>(blockIdx.x);
  int t = 0;
  while (t + 1 < batch.count && batch.first_block[t + 1] <= block) ++t;
  const std::int64_t begin = static_cast<std::int64_t>(block - batch.first_block[t]) * kChunk;
  const std::int64_t end = begin + kChunk < batch.numel[t] ? begin + kChunk : batch.numel[t];
  const auto* in = static_cast<const In*>(batch.in[t]);
  auto* out = static_cast<Out*>(batch.out[t]);
  std::int64_t scalar_from = begin;
  if (reinterpret_cast<std::uintptr_t>(in) % sizeof(Pack<In, 4>) == 0 &&
      reinterpret_cast<std::uintptr_t>(out) % sizeof(Pack<Out, 4>) == 0) {
    const std::int64_t vectors = (end - begin) / 4;
    for (std::int64_t v = threadIdx.x; v < vectors; v += kThreads) {
      const Pack<In, 4> values = reinterpret_cast<const Pack<In, 4>*>(in + begin)[v];
      Pack<Out, 4> result;
#pragma unroll
      for (int i = 0; i < 4; ++i) result.v[i] = from_float<Out>(to_float(values.v[i]));
      reinterpret_cast<Pack<Out, 4>*>(out + begin)[v] = result;
    }
    scalar_from = begin + 4 * vectors;
  }
  for (std::int64_t k = scalar_from + threadIdx.x; k < end; k += kThreads) {
    out[k] = from_float<Out>(to_float(in[k]));
  }
}

template <typename In, typename Out>
cudaError_t cast_as(const void* const* in, void* const* out, const std::int64_t* numel, int count,
                    cudaStream_t stream) {
  for (int first = 0; first < count; first += kMaxTensors) {
    CastBatch batch{};
    batch.count = std::min(kMaxTensors, count - first);
    int blocks = 0;
    for (int i = 0; i < batch.count; ++i) {
      batch.in[i] = in[first + i];
      batch.out[i] = out[first + i];
      batch.numel[i] = numel[first + i];
      batch.first_block[i] = blocks;
      blocks += static_cast<int>((numel[first + i] + kChunk - 1) / kChunk);
    }
    batch.first_block[batch.count] = blocks;
    if (blocks == 0) continue;
    cast_kernel<In, Out><<<blocks, kThreads, 0, stream>>>(batch);
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

template <typename In>
cudaError_t cast_from(const void* const* in, NhwcDtype out_dtype, void* const* out,
                      const std::int64_t* numel, int count, cudaStream_t stream) {
  switch (out_dtype) {
    case NhwcDtype::kHalf:
      return cast_as<In, __half>(in, out, numel, count, stream);
    case NhwcDtype::kBFloat16:
      return cast_as<In, __nv_bfloat16>(in, out, numel, count, stream);
    case NhwcDtype::kFloat:
      return cast_as<In, float>(in, out, numel, count, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t cast_tensors(NhwcDtype in_dtype, const void* const* in, NhwcDtype out_dtype,
                         void* const* out, const std::int64_t* numel, int count,
                         cudaStream_t stream) {
  switch (in_dtype) {
    case NhwcDtype::kHalf:
      return cast_from<__half>(in, out_dtype, out, numel, count, stream);
    case NhwcDtype::kBFloat16:
      return cast_from<__nv_bfloat16>(in, out_dtype, out, numel, count, stream);
    case NhwcDtype::kFloat:
      return cast_from<float>(in, out_dtype, out, numel, count, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuperf::detail
