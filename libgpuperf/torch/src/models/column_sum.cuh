#pragma once
// column_sum_kernel: the second pass of gpuperf's deterministic column reductions (the norms'
// weight and bias gradients, the linear layers' bias gradients): each launch of the first pass
// leaves per-part sums, this adds them in a fixed order (nvcc only).

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuperf::detail {

// Partial rows summed at once by one block of column_sum_kernel (32 columns a block).
constexpr int kColumnSumRows = 32;

// out[c] = sum over p of partial[p][c], p in a fixed order: 32 columns x kColumnSumRows partial
// rows a block; blockIdx.y 1 sums the second array (partial + parts x width into out2).
static __global__ void __launch_bounds__(32 * kColumnSumRows)
    column_sum_kernel(const float* partial, int parts, int width, float* out, float* out2) {
  if (blockIdx.y == 1) {
    partial += static_cast<std::int64_t>(parts) * width;
    out = out2;
  }
  __shared__ float tile[kColumnSumRows][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  float s = 0.0f;
  if (c < width) {
#pragma unroll 4
    for (int p = threadIdx.y; p < parts; p += kColumnSumRows) {
      s += partial[static_cast<std::int64_t>(p) * width + c];
    }
  }
  tile[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < width) {
    float t = 0.0f;
#pragma unroll
    for (int y = 0; y < kColumnSumRows; ++y) t += tile[y][threadIdx.x];
    out[c] = t;
  }
}

// column_sum_kernel over `parts` rows of `width` partial sums into out (and, with out2, the
// next `parts` rows into out2).
static cudaError_t column_sum(const float* partial, int parts, int width, float* out, float* out2,
                              cudaStream_t stream) {
  const dim3 block(32, kColumnSumRows);
  const dim3 grid(static_cast<unsigned>((width + 31) / 32), out2 != nullptr ? 2 : 1);
  column_sum_kernel<<<grid, block, 0, stream>>>(partial, parts, width, out, out2);
  return cudaGetLastError();
}

}  // namespace gpuperf::detail
