// Channel padding and global average pooling for NHWC images (nhwc_kernels.h).

#include "models/kernel_types.cuh"
#include "models/nhwc_kernels.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;

// One thread per pixel: its (at most 4) channels read one by one (a 3-channel pixel is 6 or 12
// bytes, not a vector), written as one 4-channel vector.
template <typename In, typename Out>
__global__ void pad_channels_kernel(const In* __restrict__ in, int in_channels,
                                    Out* __restrict__ out, std::int64_t pixels) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < pixels; p += stride) {
    Pack<Out, 4> result;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      result.v[c] = from_float<Out>(c < in_channels ? to_float(in[p * in_channels + c]) : 0.0f);
    }
    reinterpret_cast<Pack<Out, 4>*>(out)[p] = result;
  }
}

// One thread per (image, group of V channels): a warp reads a pixel's channels contiguously, and
// the loop walks the pixels.
template <typename T, int V>
__global__ void average_pool_kernel(const T* __restrict__ x, T* __restrict__ out, std::int64_t n,
                                    std::int64_t pixels, std::int64_t channels) {
  const std::int64_t groups = channels / V;
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= n * groups) return;
  const std::int64_t image = item / groups;
  const std::int64_t group = item - image * groups;
  const T* base = x + image * pixels * channels + group * V;
  float sum[V];
#pragma unroll
  for (int v = 0; v < V; ++v) sum[v] = 0.0f;
#pragma unroll 7
  for (std::int64_t p = 0; p < pixels; ++p) {
    const Pack<T, V> values = *reinterpret_cast<const Pack<T, V>*>(base + p * channels);
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] += to_float(values.v[v]);
  }
  Pack<T, V> result;
  const float scale = 1.0f / static_cast<float>(pixels);
#pragma unroll
  for (int v = 0; v < V; ++v) result.v[v] = from_float<T>(sum[v] * scale);
  *reinterpret_cast<Pack<T, V>*>(out + image * channels + group * V) = result;
}

unsigned int blocks_for(std::int64_t items) {
  return static_cast<unsigned int>(
      std::min<std::int64_t>((items + kThreads - 1) / kThreads, std::int64_t{1} << 20));
}

template <typename In, typename Out>
cudaError_t pad_as(const void* in, std::int64_t in_channels, void* out, std::int64_t pixels,
                   cudaStream_t stream) {
  if (pixels == 0) return cudaSuccess;
  pad_channels_kernel<In, Out><<<blocks_for(pixels), kThreads, 0, stream>>>(
      static_cast<const In*>(in), static_cast<int>(in_channels), static_cast<Out*>(out), pixels);
  return cudaGetLastError();
}

template <typename In>
cudaError_t pad_from(const void* in, std::int64_t in_channels, NhwcDtype out_dtype, void* out,
                     std::int64_t pixels, cudaStream_t stream) {
  switch (out_dtype) {
    case NhwcDtype::kHalf:
      return pad_as<In, __half>(in, in_channels, out, pixels, stream);
    case NhwcDtype::kBFloat16:
      return pad_as<In, __nv_bfloat16>(in, in_channels, out, pixels, stream);
    case NhwcDtype::kFloat:
      return pad_as<In, float>(in, in_channels, out, pixels, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t average_pool_as(const void* x, void* out, std::int64_t n, std::int64_t pixels,
                            std::int64_t channels, cudaStream_t stream) {
  if (n == 0 || channels == 0) return cudaSuccess;
  constexpr int kWide = 16 / sizeof(T);
  const bool wide = channels % kWide == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                    reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  const auto* in = static_cast<const T*>(x);
  auto* result = static_cast<T*>(out);
  if (wide) {
    average_pool_kernel<T, kWide><<<blocks_for(n * channels / kWide), kThreads, 0, stream>>>(
        in, result, n, pixels, channels);
  } else {
    average_pool_kernel<T, 1>
        <<<blocks_for(n * channels), kThreads, 0, stream>>>(in, result, n, pixels, channels);
  }
  return cudaGetLastError();
}

}  // namespace

bool own_kernels_run_on(int device) {
  // 0: not asked yet, 1: runs, 2: does not. Every kernel of the library is built for the same
  // architectures: one tells for all.
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {};
  if (device < 0 || device >= kDevices) return false;
  const int state = known[device].load(std::memory_order_relaxed);
  if (state != 0) return state == 1;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  cudaFuncAttributes attributes{};
  const bool runs =
      cudaFuncGetAttributes(&attributes, pad_channels_kernel<float, __half>) == cudaSuccess;
  (void)cudaGetLastError();  // a missing image is an answer here, not an error to report later
  (void)cudaSetDevice(current);
  known[device].store(runs ? 1 : 2, std::memory_order_relaxed);
  return runs;
}

cudaError_t pad_channels_to_4(NhwcDtype in_dtype, const void* in, std::int64_t in_channels,
                              NhwcDtype out_dtype, void* out, std::int64_t pixels,
                              cudaStream_t stream) {
  if (in_channels < 1 || in_channels > 4) return cudaErrorInvalidValue;
  switch (in_dtype) {
    case NhwcDtype::kHalf:
      return pad_from<__half>(in, in_channels, out_dtype, out, pixels, stream);
    case NhwcDtype::kBFloat16:
      return pad_from<__nv_bfloat16>(in, in_channels, out_dtype, out, pixels, stream);
    case NhwcDtype::kFloat:
      return pad_from<float>(in, in_channels, out_dtype, out, pixels, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t global_average_pool(NhwcDtype dtype, const void* x, void* out, std::int64_t n,
                                std::int64_t pixels, std::int64_t channels, cudaStream_t stream) {
  switch (dtype) {
    case NhwcDtype::kHalf:
      return average_pool_as<__half>(x, out, n, pixels, channels, stream);
    case NhwcDtype::kBFloat16:
      return average_pool_as<__nv_bfloat16>(x, out, n, pixels, channels, stream);
    case NhwcDtype::kFloat:
      return average_pool_as<float>(x, out, n, pixels, channels, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuperf::detail
