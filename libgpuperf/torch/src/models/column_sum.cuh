#pragma once
// column_sum_kernel: the second pass of gpuperf's deterministic column reductions (the norms'
// weight and bias gradients, the linear layers' bias gradients): each launch of the first pass
// leaves per-part sums, this adds them in a fixed order (nvcc only).

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuperf::detail {

// Partial rows summed at once by one block of column_sum_kernel (32 columns a block).
constexpr int kColumnSumRows = 32;

// Up to three outputs of one column_sum_kernel launch, one a blockIdx.y.
struct ColumnSumOutputs {
  float* out[3];
};

// outputs.out[y][c] = sum over p of partial[y][p][c] (partial[y] the y-th block of `parts` rows
// of `width`), p in a fixed order: 32 columns x kColumnSumRows partial rows a block.
static __global__ void __launch_bounds__(32 * kColumnSumRows)
    column_sum_kernel(const float* partial, int parts, int width, ColumnSumOutputs outputs) {
  partial += static_cast<std::int64_t>(blockIdx.y) * parts * width;
  float* out = outputs.out[blockIdx.y];
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

// column_sum_kernel over `parts` rows of `width` partial sums into out, and the next `parts`
// rows into out2 and the next into out3, for each of those that is not null (the partial rows of
// the outputs given, in that order, one block of `parts` rows after another).
static cudaError_t column_sum(const float* partial, int parts, int width, float* out, float* out2,
                              float* out3, cudaStream_t stream) {
  ColumnSumOutputs outputs{{out, nullptr, nullptr}};
  unsigned count = 1;
  for (float* o : {out2, out3}) {
    if (o != nullptr) outputs.out[count++] = o;
  }
  const dim3 block(32, kColumnSumRows);
  const dim3 grid(static_cast<unsigned>((width + 31) / 32), count);
  column_sum_kernel<<<grid, block, 0, stream>>>(partial, parts, width, outputs);
  return cudaGetLastError();
}

}  // namespace gpuperf::detail
