#pragma once
// column_sum_kernel: the second pass of gpuperf's deterministic column reductions (the norms'
// weight and bias gradients, the linear layers' bias gradients): each launch of the first pass
// leaves per-part sums, this adds them in a fixed order (nvcc only).

#include <cstdint>

namespace gpuperf::detail {

// out[c] = sum over p of partial[p][c], p in a fixed order: 32 columns x 8 partial rows a block;
// blockIdx.y 1 sums the second array (partial + parts x width into out2).
static __global__ void column_sum_kernel(const float* partial, int parts, int width, float* out,
                                         float* out2) {
  if (blockIdx.y == 1) {
    partial += static_cast<std::int64_t>(parts) * width;
    out = out2;
  }
  __shared__ float tile[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  float s = 0.0f;
  if (c < width) {
    for (int p = threadIdx.y; p < parts; p += 8)
      s += partial[static_cast<std::int64_t>(p) * width + c];
  }
  tile[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < width) {
    float t = 0.0f;
#pragma unroll
    for (int y = 0; y < 8; ++y) t += tile[y][threadIdx.x];
    out[c] = t;
  }
}

}  // namespace gpuperf::detail
