// Training-mode batch norm + ReLU (+ residual add) for NHWC images (batch_norm_kernels.h).

#include "models/batch_norm_kernels.h"
#include "models/kernel_types.cuh"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;
// Blocks per multiprocessor for the passes that reduce: 1,024 threads each holding up to four
// 16-byte loads in flight keep HBM busy, and fewer blocks mean fewer partials to add up.
constexpr int kReduceBlocksPerSm = 4;
// Vectors per thread in the elementwise passes.
constexpr int kUnroll = 4;
// The finalize kernels: a block per 8 channels, 128 threads adding each channel's partials (a few
// loads each, all in flight: the kernels are bound by latency, not bandwidth).
constexpr int kFinalizeChannels = 8;
constexpr int kFinalizeStripes = 128;

template <typename T>
constexpr int kWidth = 16 / sizeof(T);

// A device attribute, asked once per device; `fallback` where the runtime cannot say.
template <cudaDeviceAttr Attribute>
int device_attribute(int device, int fallback) {
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {};
  if (device < 0 || device >= kDevices) return fallback;
  int value = known[device].load(std::memory_order_relaxed);
  if (value > 0) return value;
  if (cudaDeviceGetAttribute(&value, Attribute, device) != cudaSuccess || value < 1) {
    (void)cudaGetLastError();
    return fallback;
  }
  known[device].store(value, std::memory_order_relaxed);
  return value;
}

int multiprocessors(int device) {
  return device_attribute<cudaDevAttrMultiProcessorCount>(device, 1);
}

// Programmatic dependent launch (compute capability 9.0 on): each kernel of a batch norm may be
// launched before the kernel ahead of it in the stream has finished. It waits in
// wait_for_previous() before it reads anything a kernel ahead of it wrote, then lets the next
// kernel launch; so when a kernel starts, every kernel two or more ahead of it has finished,
// and what it loads before waiting (parameters, running statistics, its input) is final. What
// hides is the launch and block scheduling between two kernels.
bool overlap_launches(int device) {
  return device_attribute<cudaDevAttrComputeCapabilityMajor>(device, 0) >= 9;
}

__device__ __forceinline__ void wait_for_previous() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, 0, stream>>>(args...), launched early where overlap_launches(device).
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                   int device, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = overlap_launches(device) ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// How the reducing passes cover [pixels, channels]: `lanes` threads per pixel row, a vector of V
// channels each, `rows` rows per block at a time; chunks of `lanes` vectors in blockIdx.y when one
// row has more vectors than a block has threads.
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
  g.lanes = std::min(g.groups, kThreads);
  g.rows = kThreads / g.lanes;
  g.chunks = static_cast<unsigned int>((g.groups + g.lanes - 1) / g.lanes);
  const std::int64_t wanted = (pixels + g.rows - 1) / g.rows;
  const std::int64_t cap = std::max<std::int64_t>(
      1, std::int64_t{kReduceBlocksPerSm} * multiprocessors(device) / g.chunks);
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

// A block's partial sums of its rows, met in shared memory and written by its first row.
template <int V>
__device__ __forceinline__ void write_partial(float (&a)[V], float (&b)[V], int rows, int row,
                                              int lanes, bool active, int channels, int group,
                                              float2* __restrict__ partial) {
  __shared__ float2 shared[kThreads * V];
  if (rows > 1) {
    if (active) {
#pragma unroll
      for (int v = 0; v < V; ++v) shared[threadIdx.x * V + v] = make_float2(a[v], b[v]);
    }
    __syncthreads();
    if (row == 0 && active) {
      for (int r = 1; r < rows; ++r) {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float2 other = shared[(r * lanes + threadIdx.x) * V + v];
          a[v] += other.x;
          b[v] += other.y;
        }
      }
    }
  }
  if (row == 0 && active) {
    float2* out = partial + static_cast<std::int64_t>(blockIdx.x) * channels + group * V;
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = make_float2(a[v], b[v]);
  }
}

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    statistics_kernel(const T* __restrict__ x, std::int64_t pixels, int channels, int lanes,
                      int rows, float2* __restrict__ partial, const int* __restrict__ only) {
  wait_for_previous();
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  const int row = static_cast<int>(threadIdx.x) / lanes;
  const int group = static_cast<int>(blockIdx.y) * lanes + lane;
  bool active = row < rows && group * V < channels;
  if (active && only != nullptr) {
    // The recheck after a convolution's sums: only the vectors with a flagged channel.
    bool flagged = false;
#pragma unroll
    for (int v = 0; v < V; ++v) flagged |= only[group * V + v] != 0;
    active = flagged;
  }
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
  write_partial<V>(sum, squares, rows, row, lanes, active, channels, group, partial);
}

// Sums each channel's partials in fp64 in a fixed order: threadIdx.y's stripe of the blocks (four
// loads in flight: the loop is bound by L2 latency, not bandwidth), then the stripes pairwise in
// shared memory. Leaves the totals in sum/squares for threadIdx.y == 0.
__device__ __forceinline__ void total_partials(const float2* __restrict__ partial, int parts,
                                               int channels, int channel, double& sum,
                                               double& squares) {
  __shared__ double shared_sum[kFinalizeStripes][kFinalizeChannels + 1];
  __shared__ double shared_squares[kFinalizeStripes][kFinalizeChannels + 1];
  sum = 0;
  squares = 0;
  if (channel < channels) {
    const float2* column = partial + channel;
    const std::int64_t stride = static_cast<std::int64_t>(kFinalizeStripes) * channels;
    int b = static_cast<int>(threadIdx.y);
    for (; b + 3 * kFinalizeStripes < parts; b += 4 * kFinalizeStripes) {
      const float2 v0 = column[b * static_cast<std::int64_t>(channels)];
      const float2 v1 = column[b * static_cast<std::int64_t>(channels) + stride];
      const float2 v2 = column[b * static_cast<std::int64_t>(channels) + 2 * stride];
      const float2 v3 = column[b * static_cast<std::int64_t>(channels) + 3 * stride];
      sum += (static_cast<double>(v0.x) + v1.x) + (static_cast<double>(v2.x) + v3.x);
      squares += (static_cast<double>(v0.y) + v1.y) + (static_cast<double>(v2.y) + v3.y);
    }
    for (; b < parts; b += kFinalizeStripes) {
      const float2 v = column[b * static_cast<std::int64_t>(channels)];
      sum += v.x;
      squares += v.y;
    }
  }
  shared_sum[threadIdx.y][threadIdx.x] = sum;
  shared_squares[threadIdx.y][threadIdx.x] = squares;
  for (int half = kFinalizeStripes / 2; half > 0; half /= 2) {
    __syncthreads();
    if (static_cast<int>(threadIdx.y) < half) {
      shared_sum[threadIdx.y][threadIdx.x] += shared_sum[threadIdx.y + half][threadIdx.x];
      shared_squares[threadIdx.y][threadIdx.x] += shared_squares[threadIdx.y + half][threadIdx.x];
    }
  }
  __syncthreads();
  sum = shared_sum[0][threadIdx.x];
  squares = shared_squares[0][threadIdx.x];
}

// One channel's statistics from the sum and sum of squares of (x - origin) over its `n` values:
// mean, invstd, the apply pass's scale and shift, and the running statistics updated as
// PyTorch's BatchNorm updates them (the unbiased variance, the momentum).
__device__ __forceinline__ void write_statistics(int channel, double sum, double squares,
                                                 double origin, double n, float weight, float bias,
                                                 float running_mean, float running_var,
                                                 const BatchNormChannels& c, float momentum,
                                                 float eps) {
  const double shifted_mean = sum / n;
  const double variance = fmax(squares / n - shifted_mean * shifted_mean, 0.0);
  const double mean = origin + shifted_mean;
  const float invstd = static_cast<float>(1.0 / sqrt(variance + static_cast<double>(eps)));
  const float scale = weight * invstd;
  c.save_mean[channel] = static_cast<float>(mean);
  c.save_invstd[channel] = invstd;
  c.scale[channel] = scale;
  c.shift[channel] = bias - static_cast<float>(mean) * scale;
  const double unbiased = variance * n / (n - 1);
  c.running_mean[channel] = static_cast<float>(momentum * mean + (1.0 - momentum) * running_mean);
  c.running_var[channel] = static_cast<float>(momentum * unbiased + (1.0 - momentum) * running_var);
}

template <typename T>
__global__ void __launch_bounds__(kFinalizeChannels* kFinalizeStripes)
    finalize_kernel(const float2* __restrict__ partial, int parts, const T* __restrict__ x,
                    int channels, std::int64_t count, BatchNormChannels c, float momentum,
                    float eps, const int* __restrict__ only) {
  const int channel = static_cast<int>(blockIdx.x) * kFinalizeChannels + threadIdx.x;
  // The writing threads load what the statistics kernel does not write before they wait for it
  // (`only`, written by finalize_sums_kernel two launches ahead, has finished too). With `only`,
  // the channels finalize_sums_kernel left to this recheck; it wrote the others.
  const bool writes =
      threadIdx.y == 0 && channel < channels && (only == nullptr || only[channel] != 0);
  float weight = 0, bias = 0, running_mean = 0, running_var = 0, origin = 0;
  if (writes) {
    weight = c.weight[channel];
    bias = c.bias[channel];
    running_mean = c.running_mean[channel];
    running_var = c.running_var[channel];
    origin = to_float(x[channel]);
  }
  wait_for_previous();
  double sum = 0, squares = 0;
  total_partials(partial, parts, channels, channel, sum, squares);
  if (!writes) return;
  write_statistics(channel, sum, squares, origin, static_cast<double>(count), weight, bias,
                   running_mean, running_var, c, momentum, eps);
}

// A channel's sums from the convolution are recomputed (shifted, by the statistics pass) when its
// variance is below this fraction of its mean square, E[x^2] - E[x]^2 < E[x^2] / 64, i.e. |mean|
// above about 8 standard deviations: the unshifted fp32 sums lose E[x^2] / variance times their
// own relative error to the subtraction. cuDNN's GenStats sums of layer1's 802,816 values a
// channel were 4e-6 off fp64 on the H200, so the recheck keeps the standard deviation within
// 64 * 4e-6 / 2 = 1.3e-4, below fp16's rounding (4.9e-4); past |mean|/std of 16 it was not.
constexpr double kRecheckMeanSquareOverVariance = 64.0;

// The statistics from sums computed before (a convolution's epilogue): sums[channel] and
// sums[channels + channel], of x itself (no shift). A channel whose sums cannot give its
// variance to fp16's precision (kRecheckMeanSquareOverVariance) is left unwritten and flagged in
// `recheck` for the statistics pass that follows (statistics_kernel and finalize_kernel with
// `only`); the others get 0 there.
__global__ void __launch_bounds__(kThreads)
    finalize_sums_kernel(const float* __restrict__ sums, int channels, std::int64_t count,
                         BatchNormChannels c, float momentum, float eps,
                         int* __restrict__ recheck) {
  const int channel = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const bool writes = channel < channels;
  float weight = 0, bias = 0, running_mean = 0, running_var = 0;
  if (writes) {
    weight = c.weight[channel];
    bias = c.bias[channel];
    running_mean = c.running_mean[channel];
    running_var = c.running_var[channel];
  }
  wait_for_previous();
  if (!writes) return;
  const double n = static_cast<double>(count);
  const double mean = sums[channel] / n;
  const double mean_square = sums[channels + channel] / n;
  const bool ill_conditioned =
      !(mean_square - mean * mean > mean_square / kRecheckMeanSquareOverVariance);
  // A constant channel (variance 0) is rechecked too: its sums cannot tell 0 from rounding.
  recheck[channel] = ill_conditioned && mean_square > 0 ? 1 : 0;
  if (recheck[channel] != 0) return;
  write_statistics(channel, sums[channel], sums[channels + channel], 0.0,
                   static_cast<double>(count), weight, bias, running_mean, running_var, c, momentum,
                   eps);
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
  wait_for_previous();
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
                           int rows, float2* __restrict__ partial) {
  wait_for_previous();
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  const int row = static_cast<int>(threadIdx.x) / lanes;
  const int group = static_cast<int>(blockIdx.y) * lanes + lane;
  const int groups = channels / V;
  const bool active = row < rows && group < groups;
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
  write_partial<V>(sum, products, rows, row, lanes, active, channels, group, partial);
}

__global__ void __launch_bounds__(kFinalizeChannels* kFinalizeStripes)
    backward_finalize_kernel(const float2* __restrict__ partial, int parts, int channels,
                             std::int64_t count, BatchNormChannels c, float* __restrict__ dweight,
                             float* __restrict__ dbias) {
  const int channel = static_cast<int>(blockIdx.x) * kFinalizeChannels + threadIdx.x;
  // The forward's statistics and the weight, loaded before waiting for the reduce kernel.
  const bool writes = threadIdx.y == 0 && channel < channels;
  double invstd = 0, weight = 0, mean = 0;
  if (writes) {
    invstd = c.save_invstd[channel];
    weight = c.weight[channel];
    mean = c.save_mean[channel];
  }
  wait_for_previous();
  double sum = 0, products = 0;
  total_partials(partial, parts, channels, channel, sum, products);
  if (!writes) return;
  const double n = static_cast<double>(count);
  const double a = weight * invstd;
  const double b = a * invstd * invstd * products / n;
  dbias[channel] = static_cast<float>(sum);
  dweight[channel] = static_cast<float>(products * invstd);
  c.scale[channel] = static_cast<float>(a);
  c.shift[channel] = static_cast<float>(b);
  c.shift[channels + channel] = static_cast<float>(b * mean - a * sum / n);
}

// dx = a dy' - b x + c, with dy' = dz (Add), dy * mask (Relu) or dy.
template <typename T, int V, bool Add, bool Relu>
__global__ void __launch_bounds__(kThreads)
    backward_apply_kernel(const T* __restrict__ grad, const std::uint8_t* __restrict__ mask,
                          const T* __restrict__ x, const float* __restrict__ a_,
                          const float* __restrict__ bc, T* __restrict__ dx, std::int64_t vectors,
                          int groups) {
  wait_for_previous();
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

dim3 finalize_grid(std::int64_t channels) {
  return dim3(static_cast<unsigned int>((channels + kFinalizeChannels - 1) / kFinalizeChannels));
}

template <typename T>
cudaError_t forward_as(const void* x_, const void* z_, void* y_, std::uint8_t* mask, float* partial,
                       const float* sums, int* recheck, const BatchNormChannels& c, double momentum,
                       double eps, std::int64_t pixels, std::int64_t channels, int device,
                       cudaStream_t stream) {
  constexpr int V = kWidth<T>;
  const auto* x = static_cast<const T*>(x_);
  const auto* z = static_cast<const T*>(z_);
  auto* y = static_cast<T*>(y_);
  const ReduceGeometry g = reduce_geometry(pixels, channels, V, device);
  auto* partials = reinterpret_cast<float2*>(partial);
  cudaError_t e = cudaSuccess;
  if (sums != nullptr) {
    const unsigned int blocks = static_cast<unsigned int>((channels + kThreads - 1) / kThreads);
    e = launch(finalize_sums_kernel, blocks, kThreads, stream, device, sums,
               static_cast<int>(channels), pixels, c, static_cast<float>(momentum),
               static_cast<float>(eps), recheck);
  }
  // Without sums, every channel's statistics; with them, the flagged channels' only (the two
  // launches then read only what finalize_sums_kernel flagged: usually nothing).
  const int* only = sums != nullptr ? recheck : nullptr;
  if (e == cudaSuccess) {
    e = launch(statistics_kernel<T, V>, dim3(g.blocks, g.chunks), kThreads, stream, device, x,
               pixels, static_cast<int>(channels), g.lanes, g.rows, partials, only);
  }
  if (e == cudaSuccess) {
    e = launch(finalize_kernel<T>, finalize_grid(channels),
               dim3(kFinalizeChannels, kFinalizeStripes), stream, device, partials,
               static_cast<int>(g.blocks), x, static_cast<int>(channels), pixels, c,
               static_cast<float>(momentum), static_cast<float>(eps), only);
  }
  if (e != cudaSuccess) return e;
  const std::int64_t vectors = pixels * g.groups;
  auto* apply = z != nullptr      ? apply_kernel<T, V, true, true>
                : mask != nullptr ? apply_kernel<T, V, false, true>
                                  : apply_kernel<T, V, false, false>;
  return launch(apply, elementwise_blocks(vectors, g.groups), kThreads, stream, device, x, z, y,
                mask, c.scale, c.shift, vectors, g.groups);
}

template <typename T>
cudaError_t backward_as(const void* dy_, const void* x_, const std::uint8_t* mask, void* dx_,
                        void* dz_, float* dweight, float* dbias, float* partial,
                        const BatchNormChannels& c, std::int64_t pixels, std::int64_t channels,
                        int device, cudaStream_t stream) {
  constexpr int V = kWidth<T>;
  const auto* dy = static_cast<const T*>(dy_);
  const auto* x = static_cast<const T*>(x_);
  auto* dx = static_cast<T*>(dx_);
  auto* dz = static_cast<T*>(dz_);
  const ReduceGeometry g = reduce_geometry(pixels, channels, V, device);
  auto* partials = reinterpret_cast<float2*>(partial);
  const int C = static_cast<int>(channels);
  auto* reduce = dz != nullptr     ? backward_reduce_kernel<T, V, true, true>
                 : mask != nullptr ? backward_reduce_kernel<T, V, false, true>
                                   : backward_reduce_kernel<T, V, false, false>;
  if (const cudaError_t e = launch(reduce, dim3(g.blocks, g.chunks), kThreads, stream, device, dy,
                                   x, mask, c.save_mean, dz, pixels, C, g.lanes, g.rows, partials);
      e != cudaSuccess)
    return e;
  if (const cudaError_t e =
          launch(backward_finalize_kernel, finalize_grid(channels),
                 dim3(kFinalizeChannels, kFinalizeStripes), stream, device, partials,
                 static_cast<int>(g.blocks), C, pixels, c, dweight, dbias);
      e != cudaSuccess)
    return e;
  const std::int64_t vectors = pixels * g.groups;
  // dy' is dz where there is one, else dy (masked in the kernel where there is a mask).
  auto* apply = dz != nullptr     ? backward_apply_kernel<T, V, true, true>
                : mask != nullptr ? backward_apply_kernel<T, V, false, true>
                                  : backward_apply_kernel<T, V, false, false>;
  return launch(apply, elementwise_blocks(vectors, g.groups), kThreads, stream, device,
                dz != nullptr ? dz : dy, mask, x, c.scale, c.shift, dx, vectors, g.groups);
}

}  // namespace

int batch_norm_vector_width(NhwcDtype dtype) { return dtype == NhwcDtype::kFloat ? 4 : 8; }

BatchNormWorkspace batch_norm_workspace(NhwcDtype dtype, std::int64_t pixels, std::int64_t channels,
                                        int device) {
  const int width = batch_norm_vector_width(dtype);
  const ReduceGeometry g = reduce_geometry(pixels, channels, width, device);
  return {2 * static_cast<std::int64_t>(g.blocks) * channels, pixels * (channels / width)};
}

cudaError_t batch_norm_forward(NhwcDtype dtype, const void* x, const void* z, void* y,
                               std::uint8_t* mask, float* partial, const float* sums, int* recheck,
                               const BatchNormChannels& c, double momentum, double eps,
                               std::int64_t pixels, std::int64_t channels, int device,
                               cudaStream_t stream) {
  if (pixels < 2 || channels < 1 || channels % batch_norm_vector_width(dtype) != 0)
    return cudaErrorInvalidValue;
  if (sums != nullptr && recheck == nullptr) return cudaErrorInvalidValue;
  switch (dtype) {
    case NhwcDtype::kHalf:
      return forward_as<__half>(x, z, y, mask, partial, sums, recheck, c, momentum, eps, pixels,
                                channels, device, stream);
    case NhwcDtype::kBFloat16:
      return forward_as<__nv_bfloat16>(x, z, y, mask, partial, sums, recheck, c, momentum, eps,
                                       pixels, channels, device, stream);
    case NhwcDtype::kFloat:
      return forward_as<float>(x, z, y, mask, partial, sums, recheck, c, momentum, eps, pixels,
                               channels, device, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t batch_norm_backward(NhwcDtype dtype, const void* dy, const void* x,
                                const std::uint8_t* mask, void* dx, void* dz, float* dweight,
                                float* dbias, float* partial, const BatchNormChannels& c,
                                std::int64_t pixels, std::int64_t channels, int device,
                                cudaStream_t stream) {
  if (pixels < 2 || channels < 1 || channels % batch_norm_vector_width(dtype) != 0)
    return cudaErrorInvalidValue;
  switch (dtype) {
    case NhwcDtype::kHalf:
      return backward_as<__half>(dy, x, mask, dx, dz, dweight, dbias, partial, c, pixels, channels,
                                 device, stream);
    case NhwcDtype::kBFloat16:
      return backward_as<__nv_bfloat16>(dy, x, mask, dx, dz, dweight, dbias, partial, c, pixels,
                                        channels, device, stream);
    case NhwcDtype::kFloat:
      return backward_as<float>(dy, x, mask, dx, dz, dweight, dbias, partial, c, pixels, channels,
                                device, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuperf::detail
