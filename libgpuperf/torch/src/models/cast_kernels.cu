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
constexpr int kMaxTensors = 48;          // 1.3 KB of parameters, under the 4 KB every GPU takes
constexpr std::int64_t kChunk = 16 * kThreads;  // elements per block

struct CastBatch {
  const void* in[kMaxTensors];
  void* out[kMaxTensors];
  std::int64_t numel[kMaxTensors];
  int first_block[kMaxTensors + 1];  // tensor i's chunks are blocks [first_block[i], [i + 1])
  int count;
};

template <typename In, typename Out>
__global__ void cast_kernel(CastBatch batch) {
  const int block = static_cast<int>(blockIdx.x);
  int t = 0;
  while (t + 1 < batch.count && batch.first_block[t + 1] <= block) ++t;
  const std::int64_t begin = static_cast<std::int64_t>(block - batch.first_block[t]) * kChunk;
  const std::int64_t end = begin + kChunk < batch.numel[t] ? begin + kChunk : batch.numel[t];
  const auto* in = static_cast<const In*>(batch.in[t]);
  auto* out = static_cast<Out*>(batch.out[t]);
  for (std::int64_t k = begin + threadIdx.x; k < end; k += kThreads) {
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
