#pragma once
// Element conversions, vector packs and the dtype dispatch shared by gpuperf's CUDA kernels (nvcc
// only).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

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

// N consecutive elements at p as float32 (and back), in loads (stores) of at most 16 bytes: p
// aligned to min(16, N x sizeof(T)) bytes.
template <int N, typename T>
__device__ __forceinline__ void load_floats(const T* p, float (&v)[N]) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(T)) < N ? 16 / static_cast<int>(sizeof(T)) : N;
#pragma unroll
  for (int j = 0; j < N; j += kPer) {
    const Pack<T, kPer> pack = *reinterpret_cast<const Pack<T, kPer>*>(p + j);
#pragma unroll
    for (int i = 0; i < kPer; ++i) v[j + i] = to_float(pack.v[i]);
  }
}

template <int N, typename T>
__device__ __forceinline__ void store_floats(T* p, const float (&v)[N]) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(T)) < N ? 16 / static_cast<int>(sizeof(T)) : N;
#pragma unroll
  for (int j = 0; j < N; j += kPer) {
    Pack<T, kPer> pack;
#pragma unroll
    for (int i = 0; i < kPer; ++i) pack.v[i] = from_float<T>(v[j + i]);
    *reinterpret_cast<Pack<T, kPer>*>(p + j) = pack;
  }
}

// f(T{}) for the element type T that `dtype` names: a launcher's one dispatch over its kernels'
// instantiations.
template <typename F>
cudaError_t with_type(NhwcDtype dtype, F&& f) {
  switch (dtype) {
    case NhwcDtype::kHalf:
      return f(__half{});
    case NhwcDtype::kBFloat16:
      return f(__nv_bfloat16{});
    default:
      return f(float{});
  }
}

}  // namespace gpuperf::detail
