#pragma once
// Element conversions and vector packs shared by gpuperf's CUDA kernels (nvcc only).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace gpuperf::detail {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Round to nearest even, as ATen converts.
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

}  // namespace gpuperf::detail
