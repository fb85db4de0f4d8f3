// The fused resize, crop, flip and normalisation of decoded images (image_kernels.h). A block
// writes a tile of output pixels, one a thread: the horizontal pass over each region row the
// tile's vertical taps read is computed once and rounded to 8 bits in shared memory, and the
// vertical pass rounds again, as Pillow's two passes do. The weights are Pillow's
// (precompute_coeffs: the bounds truncated, normalised by their sum) in float32 instead of 22-bit
// fixed point. Planar jobs take each tap's RGB from the YCbCr planes as libjpeg would have
// written it (ycbcr.h), so no RGB image is ever stored.

#include "gpuperf/input/ycbcr.h"
#include "models/kernel_types.cuh"
#include "train/image_kernels.h"

namespace gpuperf::detail {
namespace {

constexpr int kThreads = 256;

// One axis of Pillow's filter for output index `i` of a resize of `in_size` inputs to
// `out_size`: the first input and the count of taps, and the scale of the triangle.
struct Axis {
  int first;
  int count;
  float center;
  float inverse_scale;
};

__device__ __forceinline__ Axis axis_for(int i, int in_size, int out_size) {
  const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
  const float filterscale = scale < 1.0f ? 1.0f : scale;
  const float support = filterscale;
  const float center = (static_cast<float>(i) + 0.5f) * scale;
  int first = static_cast<int>(center - support + 0.5f);
  if (first < 0) first = 0;
  int last = static_cast<int>(center + support + 0.5f);
  if (last > in_size) last = in_size;
  return {first, last - first, center, 1.0f / filterscale};
}

__device__ __forceinline__ float triangle(float x) {
  x = fabsf(x);
  return x < 1.0f ? 1.0f - x : 0.0f;
}

__device__ __forceinline__ float weight(const Axis& a, int k) {
  return triangle((static_cast<float>(k + a.first) - a.center + 0.5f) * a.inverse_scale);
}

// What normalises the axis' weights: one over their sum (zero for none).
__device__ __forceinline__ float weight_scale(const Axis& a) {
  float sum = 0.0f;
  for (int k = 0; k < a.count; ++k) sum += weight(a, k);
  return sum != 0.0f ? 1.0f / sum : 0.0f;
}

__device__ __forceinline__ float clip8(float v) {
  v = rintf(v);
  return v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
}

// The RGB levels of image pixel (y, x).
__device__ __forceinline__ void fetch_rgb(const ImageResizeJob& job, int y, int x, float rgb[3]) {
  if (job.planar == 0) {
    const std::uint8_t* p = job.pixels + static_cast<std::int64_t>(y) * job.pitch + 3 * x;
    rgb[0] = static_cast<float>(p[0]);
    rgb[1] = static_cast<float>(p[1]);
    rgb[2] = static_cast<float>(p[2]);
    return;
  }
  const ChromaPlane blue{job.blue,          job.chroma_pitch,    job.chroma_width,
                         job.chroma_height, job.chroma_h_factor, job.chroma_v_factor};
  ChromaPlane red = blue;
  red.samples = job.red;
  std::uint8_t out[3];
  ycbcr_to_rgb(job.pixels[static_cast<std::int64_t>(y) * job.pitch + x],
               upsampled_chroma(blue, y, x), upsampled_chroma(red, y, x), out);
  rgb[0] = static_cast<float>(out[0]);
  rgb[1] = static_cast<float>(out[1]);
  rgb[2] = static_cast<float>(out[2]);
}

// The resized column output column `x` shows (mirrored where the job flips).
__device__ __forceinline__ int resized_column(const ImageResizeJob& job, int out_size, int x) {
  return (job.flip ? out_size - 1 - x : x) + job.window_left;
}

// Pixel (y, x) of the output: zeros outside the resized region, else the vertical pass over the
// horizontal passes `row(region_y, h)` gives (that row's RGB levels at this pixel, rounded to 8
// bits).
template <typename Out, typename Row>
__device__ __forceinline__ void write_pixel(const ImageResizeJob& job, int out_size, int y, int x,
                                            const ImageNormalization& norm, Row row, Out* out) {
  const int rx = resized_column(job, out_size, x);
  const int ry = y + job.window_top;
  float level[3] = {0.0f, 0.0f, 0.0f};
  if (rx >= 0 && rx < job.resized_width && ry >= 0 && ry < job.resized_height) {
    const Axis ay = axis_for(ry, job.region_height, job.resized_height);
    const float wy_scale = weight_scale(ay);
    float acc[3] = {0.0f, 0.0f, 0.0f};
    for (int j = 0; j < ay.count; ++j) {
      const float wy = weight(ay, j) * wy_scale;
      float h[3];
      row(ay.first + j, h);
      for (int c = 0; c < 3; ++c) acc[c] += wy * h[c];
    }
    for (int c = 0; c < 3; ++c) level[c] = clip8(acc[c]);
  }
  Out* o = out + (static_cast<std::int64_t>(job.sample) * out_size * out_size +
                  static_cast<std::int64_t>(y) * out_size + x) *
                     3;
  for (int c = 0; c < 3; ++c) {
    o[c] = from_float<Out>((level[c] / 255.0f - norm.mean[c]) / norm.std[c]);
  }
}

// The horizontal pass over region row `region_y` with a resized column's taps `ax` (weights
// scaled by `wx_scale`), rounded to 8 bits.
__device__ __forceinline__ void horizontal_pass(const ImageResizeJob& job, int region_y,
                                                const Axis& ax, float wx_scale, float h[3]) {
  float sum[3] = {0.0f, 0.0f, 0.0f};
  for (int k = 0; k < ax.count; ++k) {
    const float wx = weight(ax, k) * wx_scale;
    float rgb[3];
    fetch_rgb(job, job.region_top + region_y, job.region_left + ax.first + k, rgb);
    sum[0] += wx * rgb[0];
    sum[1] += wx * rgb[1];
    sum[2] += wx * rgb[2];
  }
  for (int c = 0; c < 3; ++c) h[c] = clip8(sum[c]);
}

// A block writes a tile of kTileRows x kTileColumns output pixels of one job. Its pixels' vertical
// taps share region rows: each (row, column) horizontal pass is computed once into shared memory
// as 8-bit levels (exactly what the vertical pass reads), then each thread takes its pixel's
// vertical pass from there. Where a tile needs more than kTileRegionRows rows (a downscale beyond
// about 8x), every thread computes its own horizontal passes: the same values, more work.
constexpr int kTileColumns = 32;
constexpr int kTileRows = kThreads / kTileColumns;
constexpr int kTileRegionRows = 96;

template <typename Out>
__global__ void resize_normalize_kernel(const ImageResizeJob* jobs, int out_size,
                                        ImageNormalization norm, Out* out) {
  __shared__ std::uint8_t passes[kTileRegionRows][kTileColumns][3];
  const ImageResizeJob job = jobs[blockIdx.y];
  const int tiles_across = (out_size + kTileColumns - 1) / kTileColumns;
  const int x0 = static_cast<int>(blockIdx.x) % tiles_across * kTileColumns;
  const int y0 = static_cast<int>(blockIdx.x) / tiles_across * kTileRows;
  const int lx = static_cast<int>(threadIdx.x) % kTileColumns;
  const int x = x0 + lx;
  const int y = y0 + static_cast<int>(threadIdx.x) / kTileColumns;
  // The region rows the tile's resized rows inside the region read (axis_for's first taps rise
  // with the row, and so do their last).
  const int ry_first = max(y0 + job.window_top, 0);
  const int ry_last =
      min(min(y0 + kTileRows, out_size) - 1 + job.window_top, job.resized_height - 1);
  int first_row = 0;
  int rows = 0;
  if (ry_first <= ry_last) {
    first_row = axis_for(ry_first, job.region_height, job.resized_height).first;
    const Axis last = axis_for(ry_last, job.region_height, job.resized_height);
    rows = last.first + last.count - first_row;
  }
  // A thread's column is the same for the tile's every row: its taps and their scale, once.
  const int rx = resized_column(job, out_size, x);
  const bool column_read = x < out_size && rx >= 0 && rx < job.resized_width;
  const Axis ax = column_read ? axis_for(rx, job.region_width, job.resized_width) : Axis{};
  const float wx_scale = column_read ? weight_scale(ax) : 0.0f;
  if (rows > kTileRegionRows) {  // the same for every thread of the block
    if (x < out_size && y < out_size) {
      write_pixel(
          job, out_size, y, x, norm,
          [&](int region_y, float h[3]) { horizontal_pass(job, region_y, ax, wx_scale, h); }, out);
    }
    return;
  }
  if (column_read) {  // other columns' passes are never read
    for (int r = static_cast<int>(threadIdx.x) / kTileColumns; r < rows; r += kTileRows) {
      float h[3];
      horizontal_pass(job, first_row + r, ax, wx_scale, h);
      for (int c = 0; c < 3; ++c) passes[r][lx][c] = static_cast<std::uint8_t>(h[c]);
    }
  }
  __syncthreads();
  if (x >= out_size || y >= out_size) return;
  write_pixel(
      job, out_size, y, x, norm,
      [&](int region_y, float h[3]) {
        for (int c = 0; c < 3; ++c) {
          h[c] = static_cast<float>(passes[region_y - first_row][lx][c]);
        }
      },
      out);
}

}  // namespace

cudaError_t resize_normalize_images(const ImageResizeJob* jobs, int job_count, int out_size,
                                    const ImageNormalization& normalization, NhwcDtype out_dtype,
                                    void* out, cudaStream_t stream) {
  if (job_count <= 0) return cudaSuccess;
  const int tiles =
      ((out_size + kTileColumns - 1) / kTileColumns) * ((out_size + kTileRows - 1) / kTileRows);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(job_count));
  switch (out_dtype) {
    case NhwcDtype::kFloat:
      resize_normalize_kernel<float>
          <<<grid, kThreads, 0, stream>>>(jobs, out_size, normalization, static_cast<float*>(out));
      break;
    case NhwcDtype::kHalf:
      resize_normalize_kernel<__half>
          <<<grid, kThreads, 0, stream>>>(jobs, out_size, normalization, static_cast<__half*>(out));
      break;
    case NhwcDtype::kBFloat16:
      resize_normalize_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
          jobs, out_size, normalization, static_cast<__nv_bfloat16*>(out));
      break;
  }
  return cudaGetLastError();
}

}  // namespace gpuperf::detail
