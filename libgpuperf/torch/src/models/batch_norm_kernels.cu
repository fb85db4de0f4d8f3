// Training-mode batch norm + ReLU (+ residual add) for NHWC images (batch_norm_kernels.h).

#include "models/batch_norm_kernels.h"
#include "models/kernel_types.cuh"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Blocks per multiprocessor for the passes that reduce: 1,024 threads each holding up to four
// 16-byte loads in flight keep HBM busy.
constexpr int kReduceBlocksPerSm = 4;
// Vectors per thread in the elementwise passes.
constexpr int kUnroll = 4;
// The reducing passes cover the channels in chunks of 32 (blockIdx.y): few enough that the last
// block of a chunk adds up all the chunk's partials quickly.
constexpr int kChunk = 32;
// The last block of a chunk: 16 threads per stripe (two channels each, one float4 of partials),
// 16 stripes of the chunk's blocks.
constexpr int kPairs = kChunk / 2;
constexpr int kStripes = kThreads / kPairs;

template <typename T>
constexpr int kWidth = 16 / sizeof(T);

int multiprocessors(int device) {
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {};
  if (device < 0 || device >= kDevices) return 1;
  int count = known[device].load(std::memory_order_relaxed);
  if (count > 0) return count;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      count < 1) {
    (void)cudaGetLastError();
    return 1;
  }
  known[device].store(count, std::memory_order_relaxed);
  return count;
}

// How the reducing passes cover [pixels, channels]: `lanes` threads per pixel row of a chunk, a
// vector of V channels each, `rows` rows per block at a time; `blocks` blocks per chunk.
struct ReduceGeometry {
  int groups;  // vectors per pixel
  int lanes;
  int rows;
  unsigned int blocks;
  unsigned int chunks;
};

ReduceGeometry reduce_geometry(std::int64_t pixels, std::int64_t channels, int width, int device) {
  ReduceGeometry g{};
  g.groups = static_cast<int>(channels / width);
  g.lanes = kChunk / width;
  g.rows = kThreads / g.lanes;
  g.chunks = static_cast<unsigned int>((channels + kChunk - 1) / kChunk);
  const std::int64_t wanted = (pixels + g.rows - 1) / g.rows;
  const std::int64_t cap = std::max<std::int64_t>(
      1, (std::int64_t{kReduceBlocksPerSm} * multiprocessors(device) + g.chunks - 1) / g.chunks);
  g.blocks = static_cast<unsigned int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
  return g;
}

// Blocks for an elementwise pass over `vectors` with a thread count that `groups` divides, so
// that a thread's vectors all have the same channels.
unsigned int elementwise_blocks(std::int64_t vectors, int groups) {
  std::int64_t blocks = (vectors + std::int64_t{kThreads} * kUnroll - 1) / (kThreads * kUnroll);
  int a = groups, b = kThreads;
  while (b != 0) {
    const int t = a % b;
    a = b;
    b = t;
  }
  const std::int64_t multiple = groups / a;  // blocks * kThreads % groups == 0
  blocks = std::max<std::int64_t>(1, (blocks + multiple - 1) / multiple * multiple);
  return static_cast<unsigned int>(std::min<std::int64_t>(blocks, std::int64_t{1} << 30));
}

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load(const T* p) {
  return *reinterpret_cast<const Pack<T, V>*>(p);
}

// The block's two sums per channel of its chunk, written to its slot of `partial` (kChunk float2
// per block, the chunk's blocks in a row); then the last block of the chunk to finish adds all
// the chunk's slots in fp64 in a fixed order and calls finish(channel, first, second) for each of
// its channels below `channels`. `counter` counts the chunk's finished blocks: zero on entry, and
// the last block sets it back to zero. The totals do not depend on which block finishes last.
template <int V, typename Finish>
__device__ __forceinline__ void reduce_chunk(float (&a)[V], float (&b)[V], int lanes, int channels,
                                             float2* __restrict__ partial,
                                             unsigned int* __restrict__ counter, Finish finish) {
  // The rows of a warp, by shuffles (lane is threadIdx.x % lanes, and lanes divides 32).
  for (int offset = lanes; offset < 32; offset *= 2) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      a[v] += __shfl_xor_sync(0xffffffffu, a[v], offset);
      b[v] += __shfl_xor_sync(0xffffffffu, b[v], offset);
    }
  }
  __shared__ float2 warps[kWarps][kChunk];
  __shared__ double stripes[kStripes][kPairs][4];
  __shared__ bool last;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int within = static_cast<int>(threadIdx.x) % 32;
  if (within < lanes) {
#pragma unroll
    for (int v = 0; v < V; ++v) warps[warp][within * V + v] = make_float2(a[v], b[v]);
  }
  __syncthreads();
  float2* chunk = partial + static_cast<std::int64_t>(blockIdx.y) * gridDim.x * kChunk;
  if (threadIdx.x < kChunk) {
    float2 total = warps[0][threadIdx.x];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      total.x += warps[w][threadIdx.x].x;
      total.y += warps[w][threadIdx.x].y;
    }
    chunk[static_cast<std::int64_t>(blockIdx.x) * kChunk + threadIdx.x] = total;
    __threadfence();  // the slot is visible before the count says so
  }
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  // Thread (pair, stripe): channels 2 pair and 2 pair + 1 of blocks stripe, stripe + kStripes, ...
  const int pair = static_cast<int>(threadIdx.x) % kPairs;
  const int stripe = static_cast<int>(threadIdx.x) / kPairs;
  const auto* slots = reinterpret_cast<const float4*>(chunk);
  double t[4] = {0, 0, 0, 0};
#pragma unroll 4
  for (int k = stripe; k < static_cast<int>(gridDim.x); k += kStripes) {
    const float4 s = __ldcg(slots + static_cast<std::int64_t>(k) * kPairs + pair);
    t[0] += s.x;
    t[1] += s.y;
    t[2] += s.z;
    t[3] += s.w;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) stripes[stripe][pair][i] = t[i];
  for (int half = kStripes / 2; half > 0; half /= 2) {
    __syncthreads();
    if (stripe < half) {
#pragma unroll
      for (int i = 0; i < 4; ++i) stripes[stripe][pair][i] += stripes[stripe + half][pair][i];
    }
  }
  if (stripe != 0) return;
  if (pair == 0) *counter = 0;
  const int channel = static_cast<int>(blockIdx.y) * kChunk + 2 * pair;
  if (channel < channels) finish(channel, stripes[0][pair][0], stripes[0][pair][1]);
  if (channel + 1 < channels) finish(channel + 1, stripes[0][pair][2], stripes[0][pair][3]);
}

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    statistics_kernel(const T* __restrict__ x, std::int64_t pixels, int channels, int lanes,
                      int rows, float2* __restrict__ partial, unsigned int* __restrict__ counters,
                      BatchNormChannels c, float momentum, float eps) {
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  const int row = static_cast<int>(threadIdx.x) / lanes;
  const int group = static_cast<int>(blockIdx.y) * lanes + lane;
  const bool active = group * V < channels;
  float sum[V], squares[V], origin[V];
#pragma unroll
  for (int v = 0; v < V; ++v) sum[v] = squares[v] = origin[v] = 0.0f;
  if (active) {
    const T* base = x + group * V;
    const Pack<T, V> first = load<T, V>(base);
#pragma unroll
    for (int v = 0; v < V; ++v) origin[v] = to_float(first.v[v]);
    auto add = [&](const Pack<T, V>& values) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const float d = to_float(values.v[v]) - origin[v];
        sum[v] += d;
        squares[v] = fmaf(d, d, squares[v]);
      }
    };
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * rows;
    std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * rows + row;
    for (; p + 3 * step < pixels; p += 4 * step) {
      const Pack<T, V> a = load<T, V>(base + p * channels);
      const Pack<T, V> b = load<T, V>(base + (p + step) * channels);
      const Pack<T, V> c = load<T, V>(base + (p + 2 * step) * channels);
      const Pack<T, V> d = load<T, V>(base + (p + 3 * step) * channels);
      add(a);
      add(b);
      add(c);
      add(d);
    }
    for (; p < pixels; p += step) add(load<T, V>(base + p * channels));
  }
  // Per channel: mean, invstd, scale and shift; the running statistics updated as PyTorch's
  // BatchNorm updates them (the unbiased variance, the momentum).
  reduce_chunk<V>(
      sum, squares, lanes, channels, partial, counters + blockIdx.y,
      [&](int channel, double shifted_sum, double shifted_squares) {
        const double n = static_cast<double>(pixels);
        const double shifted_mean = shifted_sum / n;
        const double variance = fmax(shifted_squares / n - shifted_mean * shifted_mean, 0.0);
        const double mean = static_cast<double>(to_float(x[channel])) + shifted_mean;
        const float invstd = static_cast<float>(1.0 / sqrt(variance + static_cast<double>(eps)));
        const float scale = c.weight[channel] * invstd;
        c.save_mean[channel] = static_cast<float>(mean);
        c.save_invstd[channel] = invstd;
        c.scale[channel] = scale;
        c.shift[channel] = c.bias[channel] - static_cast<float>(mean) * scale;
        const double unbiased = variance * n / (n - 1);
        c.running_mean[channel] =
            static_cast<float>(momentum * mean + (1.0 - momentum) * c.running_mean[channel]);
        c.running_var[channel] =
            static_cast<float>(momentum * unbiased + (1.0 - momentum) * c.running_var[channel]);
      });
}

// Vector i of the elementwise passes for the k-th item: from the end back (see the header).
__device__ __forceinline__ std::int64_t reversed(std::int64_t vectors, std::int64_t k) {
  return vectors - 1 - k;
}

// Add implies Relu; without Relu there is no mask.
template <typename T, int V, bool Add, bool Relu>
__global__ void __launch_bounds__(kThreads)
    apply_kernel(const T* __restrict__ x, const T* __restrict__ z, T* __restrict__ y,
                 std::uint8_t* __restrict__ mask, const float* __restrict__ scale,
                 const float* __restrict__ shift, std::int64_t vectors, int groups) {
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first >= vectors) return;
  const int group = static_cast<int>(reversed(vectors, first) % groups);
  float a[V], b[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    a[v] = scale[group * V + v];
    b[v] = shift[group * V + v];
  }
  for (std::int64_t k = first; k < vectors; k += kUnroll * threads) {
    Pack<T, V> in[kUnroll], add[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t item = k + u * threads;
      if (item < vectors) {
        const std::int64_t i = reversed(vectors, item);
        in[u] = load<T, V>(x + i * V);
        if (Add) add[u] = load<T, V>(z + i * V);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t item = k + u * threads;
      if (item >= vectors) break;
      const std::int64_t i = reversed(vectors, item);
      Pack<T, V> out;
      unsigned int bits = 0;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        float t = fmaf(to_float(in[u].v[v]), a[v], b[v]);
        if (Add) t += to_float(add[u].v[v]);
        if (Relu) {
          bits |= (t > 0.0f ? 1u : 0u) << v;
          t = t > 0.0f || t != t ? t : 0.0f;  // NaN propagates, as relu's
        }
        out.v[v] = from_float<T>(t);
      }
      *reinterpret_cast<Pack<T, V>*>(y + i * V) = out;
      if (Relu) mask[i] = static_cast<std::uint8_t>(bits);
    }
  }
}

template <typename T, int V, bool Add, bool Relu>
__global__ void __launch_bounds__(kThreads)
    backward_reduce_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                           const std::uint8_t* __restrict__ mask, const float* __restrict__ mean,
                           T* __restrict__ dz, std::int64_t pixels, int channels, int lanes,
                           int rows, float2* __restrict__ partial,
                           unsigned int* __restrict__ counters, BatchNormChannels c,
                           float* __restrict__ dweight, float* __restrict__ dbias) {
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  const int row = static_cast<int>(threadIdx.x) / lanes;
  const int group = static_cast<int>(blockIdx.y) * lanes + lane;
  const int groups = channels / V;
  const bool active = group < groups;
  float sum[V], products[V], mu[V];
#pragma unroll
  for (int v = 0; v < V; ++v) sum[v] = products[v] = mu[v] = 0.0f;
  if (active) {
#pragma unroll
    for (int v = 0; v < V; ++v) mu[v] = mean[group * V + v];
    const std::int64_t offset = group * V;
    auto add = [&](std::int64_t p, const Pack<T, V>& g, const Pack<T, V>& in, unsigned int bits) {
      Pack<T, V> masked;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const bool on = (bits >> v) & 1u;
        const float d = on ? to_float(g.v[v]) : 0.0f;
        sum[v] += d;
        products[v] = fmaf(d, to_float(in.v[v]) - mu[v], products[v]);
        masked.v[v] = on ? g.v[v] : from_float<T>(0.0f);
      }
      if (Add) *reinterpret_cast<Pack<T, V>*>(dz + p * channels + offset) = masked;
    };
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * rows;
    std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * rows + row;
    for (; p + step < pixels; p += 2 * step) {
      const Pack<T, V> g0 = load<T, V>(dy + p * channels + offset);
      const Pack<T, V> x0 = load<T, V>(x + p * channels + offset);
      const unsigned int m0 = Relu ? mask[p * groups + group] : 0xffu;
      const Pack<T, V> g1 = load<T, V>(dy + (p + step) * channels + offset);
      const Pack<T, V> x1 = load<T, V>(x + (p + step) * channels + offset);
      const unsigned int m1 = Relu ? mask[(p + step) * groups + group] : 0xffu;
      add(p, g0, x0, m0);
      add(p + step, g1, x1, m1);
    }
    for (; p < pixels; p += step) {
      add(p, load<T, V>(dy + p * channels + offset), load<T, V>(x + p * channels + offset),
          Relu ? mask[p * groups + group] : 0xffu);
    }
  }
  // dbias = sum dy', dweight = invstd * sum dy' (x - mean), and dx's coefficients: dx = a dy' -
  // b x + c.
  reduce_chunk<V>(sum, products, lanes, channels, partial, counters + blockIdx.y,
                  [&](int channel, double total, double total_products) {
                    const double n = static_cast<double>(pixels);
                    const double invstd = c.save_invstd[channel];
                    const double a = static_cast<double>(c.weight[channel]) * invstd;
                    const double b = a * invstd * invstd * total_products / n;
                    dbias[channel] = static_cast<float>(total);
                    dweight[channel] = static_cast<float>(total_products * invstd);
                    c.scale[channel] = static_cast<float>(a);
                    c.shift[channel] = static_cast<float>(b);
                    c.shift[channels + channel] =
                        static_cast<float>(b * c.save_mean[channel] - a * total / n);
                  });
}

// dx = a dy' - b x + c, with dy' = dz (Add), dy * mask (Relu) or dy.
template <typename T, int V, bool Add, bool Relu>
__global__ void __launch_bounds__(kThreads)
    backward_apply_kernel(const T* __restrict__ grad, const std::uint8_t* __restrict__ mask,
                          const T* __restrict__ x, const float* __restrict__ a_,
                          const float* __restrict__ bc, T* __restrict__ dx, std::int64_t vectors,
                          int groups) {
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first >= vectors) return;
  const int group = static_cast<int>(reversed(vectors, first) % groups);
  const int channels = groups * V;
  float a[V], b[V], c[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    a[v] = a_[group * V + v];
    b[v] = bc[group * V + v];
    c[v] = bc[channels + group * V + v];
  }
  for (std::int64_t k = first; k < vectors; k += kUnroll * threads) {
    Pack<T, V> g[kUnroll], in[kUnroll];
    unsigned int bits[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t item = k + u * threads;
      bits[u] = 0xffu;
      if (item < vectors) {
        const std::int64_t i = reversed(vectors, item);
        g[u] = load<T, V>(grad + i * V);
        in[u] = load<T, V>(x + i * V);
        if (!Add && Relu) bits[u] = mask[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t item = k + u * threads;
      if (item >= vectors) break;
      const std::int64_t i = reversed(vectors, item);
      Pack<T, V> out;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const float d = (bits[u] >> v) & 1u ? to_float(g[u].v[v]) : 0.0f;
        out.v[v] = from_float<T>(fmaf(a[v], d, fmaf(-b[v], to_float(in[u].v[v]), c[v])));
      }
      *reinterpret_cast<Pack<T, V>*>(dx + i * V) = out;
    }
  }
}

template <typename T>
cudaError_t forward_as(const void* x_, const void* z_, void* y_, std::uint8_t* mask, float* partial,
                       unsigned int* counters, const BatchNormChannels& c, double momentum,
                       double eps, std::int64_t pixels, std::int64_t channels, int device,
                       cudaStream_t stream) {
  constexpr int V = kWidth<T>;
  const auto* x = static_cast<const T*>(x_);
  const auto* z = static_cast<const T*>(z_);
  auto* y = static_cast<T*>(y_);
  const ReduceGeometry g = reduce_geometry(pixels, channels, V, device);
  statistics_kernel<T, V><<<dim3(g.blocks, g.chunks), kThreads, 0, stream>>>(
      x, pixels, static_cast<int>(channels), g.lanes, g.rows, reinterpret_cast<float2*>(partial),
      counters, c, static_cast<float>(momentum), static_cast<float>(eps));
  const std::int64_t vectors = pixels * g.groups;
  const unsigned int blocks = elementwise_blocks(vectors, g.groups);
  if (z != nullptr) {
    apply_kernel<T, V, true, true>
        <<<blocks, kThreads, 0, stream>>>(x, z, y, mask, c.scale, c.shift, vectors, g.groups);
  } else if (mask != nullptr) {
    apply_kernel<T, V, false, true>
        <<<blocks, kThreads, 0, stream>>>(x, z, y, mask, c.scale, c.shift, vectors, g.groups);
  } else {
    apply_kernel<T, V, false, false>
        <<<blocks, kThreads, 0, stream>>>(x, z, y, mask, c.scale, c.shift, vectors, g.groups);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_as(const void* dy_, const void* x_, const std::uint8_t* mask, void* dx_,
                        void* dz_, float* dweight, float* dbias, float* partial,
                        unsigned int* counters, const BatchNormChannels& c, std::int64_t pixels,
                        std::int64_t channels, int device, cudaStream_t stream) {
  constexpr int V = kWidth<T>;
  const auto* dy = static_cast<const T*>(dy_);
  const auto* x = static_cast<const T*>(x_);
  auto* dx = static_cast<T*>(dx_);
  auto* dz = static_cast<T*>(dz_);
  const ReduceGeometry g = reduce_geometry(pixels, channels, V, device);
  auto* partials = reinterpret_cast<float2*>(partial);
  const dim3 grid(g.blocks, g.chunks);
  const int C = static_cast<int>(channels);
  if (dz != nullptr) {
    backward_reduce_kernel<T, V, true, true>
        <<<grid, kThreads, 0, stream>>>(dy, x, mask, c.save_mean, dz, pixels, C, g.lanes, g.rows,
                                        partials, counters, c, dweight, dbias);
  } else if (mask != nullptr) {
    backward_reduce_kernel<T, V, false, true>
        <<<grid, kThreads, 0, stream>>>(dy, x, mask, c.save_mean, dz, pixels, C, g.lanes, g.rows,
                                        partials, counters, c, dweight, dbias);
  } else {
    backward_reduce_kernel<T, V, false, false>
        <<<grid, kThreads, 0, stream>>>(dy, x, mask, c.save_mean, dz, pixels, C, g.lanes, g.rows,
                                        partials, counters, c, dweight, dbias);
  }
  const std::int64_t vectors = pixels * g.groups;
  const unsigned int blocks = elementwise_blocks(vectors, g.groups);
  if (dz != nullptr) {
    backward_apply_kernel<T, V, true, true>
        <<<blocks, kThreads, 0, stream>>>(dz, mask, x, c.scale, c.shift, dx, vectors, g.groups);
  } else if (mask != nullptr) {
    backward_apply_kernel<T, V, false, true>
        <<<blocks, kThreads, 0, stream>>>(dy, mask, x, c.scale, c.shift, dx, vectors, g.groups);
  } else {
    backward_apply_kernel<T, V, false, false>
        <<<blocks, kThreads, 0, stream>>>(dy, mask, x, c.scale, c.shift, dx, vectors, g.groups);
  }
  return cudaGetLastError();
}

}  // namespace

int batch_norm_vector_width(NhwcDtype dtype) { return dtype == NhwcDtype::kFloat ? 4 : 8; }

BatchNormWorkspace batch_norm_workspace(NhwcDtype dtype, std::int64_t pixels, std::int64_t channels,
                                        int device) {
  const int width = batch_norm_vector_width(dtype);
  const ReduceGeometry g = reduce_geometry(pixels, channels, width, device);
  return {2 * std::int64_t{kChunk} * g.blocks * g.chunks, pixels * (channels / width),
          static_cast<std::int64_t>(g.chunks)};
}

namespace {

template <typename T>
struct Type {
  using type = T;
};

// f(Type<T>{}) for the element type T of `dtype`.
template <typename F>
cudaError_t by_dtype(NhwcDtype dtype, std::int64_t pixels, std::int64_t channels, F f) {
  if (pixels < 2 || channels < 1 || channels % batch_norm_vector_width(dtype) != 0)
    return cudaErrorInvalidValue;
  switch (dtype) {
    case NhwcDtype::kHalf:
      return f(Type<__half>{});
    case NhwcDtype::kBFloat16:
      return f(Type<__nv_bfloat16>{});
    case NhwcDtype::kFloat:
      return f(Type<float>{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t batch_norm_forward(NhwcDtype dtype, const void* x, const void* z, void* y,
                               std::uint8_t* mask, float* partial, unsigned int* counters,
                               const BatchNormChannels& c, double momentum, double eps,
                               std::int64_t pixels, std::int64_t channels, int device,
                               cudaStream_t stream) {
  return by_dtype(dtype, pixels, channels, [&](auto type) {
    return forward_as<typename decltype(type)::type>(x, z, y, mask, partial, counters, c, momentum,
                                                     eps, pixels, channels, device, stream);
  });
}

cudaError_t batch_norm_backward(NhwcDtype dtype, const void* dy, const void* x,
                                const std::uint8_t* mask, void* dx, void* dz, float* dweight,
                                float* dbias, float* partial, unsigned int* counters,
                                const BatchNormChannels& c, std::int64_t pixels,
                                std::int64_t channels, int device, cudaStream_t stream) {
  return by_dtype(dtype, pixels, channels, [&](auto type) {
    return backward_as<typename decltype(type)::type>(dy, x, mask, dx, dz, dweight, dbias, partial,
                                                      counters, c, pixels, channels, device,
                                                      stream);
  });
}

}  // namespace gpuperf::detail
