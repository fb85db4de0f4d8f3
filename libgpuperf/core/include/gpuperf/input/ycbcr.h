#pragma once
// libjpeg's last two decoding steps, bit-exact and header-only so that CPU and CUDA code share
// them: chroma upsampling (jdsample.c's "fancy" triangle filters for chroma at half width, half
// height or both, and plain replication where libjpeg replicates) and the YCbCr to RGB
// conversion (jdcolor.c's fixed-point tables, computed inline). A decoder that stops at the
// YCbCr planes (decode_jpeg_planes(), or a GPU decoder's planar output) gets libjpeg's RGB from
// the same planes, pixel for pixel: tests/core checks it against libjpeg's own output.
//
//   gpuperf::ChromaPlane cb{plane.samples.data(), plane.width, plane.width, plane.height, 2, 2};
//   const int blue_difference = gpuperf::upsampled_chroma(cb, y, x);  // at full-size (y, x)
//   gpuperf::ycbcr_to_rgb(luma, blue_difference, red_difference, rgb);

#include <cstdint>

#if defined(__CUDACC__)
#define GPUPERF_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GPUPERF_HOST_DEVICE inline
#endif

namespace gpuperf {

/// One chroma component as the IDCT leaves it: `width` x `height` samples (libjpeg's
/// downsampled_width and downsampled_height), rows `pitch` bytes apart, each sample covering
/// h_factor x v_factor image pixels (1 or 2 each).
struct ChromaPlane {
  const std::uint8_t* samples = nullptr;
  int pitch = 0;
  int width = 0;
  int height = 0;
  int h_factor = 1;
  int v_factor = 1;
};

/// Whether upsampled_chroma() reproduces libjpeg for these factors: 1 or 2 each way.
GPUPERF_HOST_DEVICE bool chroma_factors_supported(int h_factor, int v_factor) {
  return (h_factor == 1 || h_factor == 2) && (v_factor == 1 || v_factor == 2);
}

/// The chroma value libjpeg's upsampling gives image pixel (y, x) with fancy upsampling on (PIL's
/// setting): the nearer sample weighs 3/4 and the next one 1/4 along each halved axis, with
/// libjpeg's alternating rounding; edge samples repeat (libjpeg's context rows and columns);
/// planes two samples wide or less are replicated as libjpeg does for 2:1 horizontal factors.
GPUPERF_HOST_DEVICE int upsampled_chroma(const ChromaPlane& p, int y, int x) {
  const int cy = p.v_factor == 2 ? y >> 1 : y;
  const int cx = p.h_factor == 2 ? x >> 1 : x;
  const auto at = [&p](int row, int col) {
    return static_cast<int>(p.samples[static_cast<std::int64_t>(row) * p.pitch + col]);
  };
  if (p.h_factor == 1 && p.v_factor == 1) return at(cy, cx);
  // The row libjpeg blends with: above for the upper image row of a pair, below for the lower.
  int other_row = cy;
  if (p.v_factor == 2) {
    other_row = (y & 1) != 0 ? cy + 1 : cy - 1;
    if (other_row < 0) other_row = 0;
    if (other_row > p.height - 1) other_row = p.height - 1;
  }
  if (p.h_factor == 1) {  // h1v2_fancy_upsample
    return (3 * at(cy, cx) + at(other_row, cx) + ((y & 1) != 0 ? 2 : 1)) >> 2;
  }
  if (p.width <= 2) return at(cy, cx);  // libjpeg replicates (h2v1_upsample, h2v2_upsample)
  int other_col = (x & 1) != 0 ? cx + 1 : cx - 1;
  if (other_col < 0) other_col = 0;
  if (other_col > p.width - 1) other_col = p.width - 1;
  if (p.v_factor == 1) {  // h2v1_fancy_upsample
    return (3 * at(cy, cx) + at(cy, other_col) + ((x & 1) != 0 ? 2 : 1)) >> 2;
  }
  // h2v2_fancy_upsample: column sums of the two rows, then the same blend across columns.
  const int here = 3 * at(cy, cx) + at(other_row, cx);
  const int there = 3 * at(cy, other_col) + at(other_row, other_col);
  return (3 * here + there + ((x & 1) != 0 ? 7 : 8)) >> 4;
}

/// libjpeg's YCbCr to RGB (ycc_rgb_convert): R = Y + 1.402 (Cr - 128), G = Y - 0.34414 (Cb - 128)
/// - 0.71414 (Cr - 128), B = Y + 1.772 (Cb - 128), in 16-bit fixed point with libjpeg's rounding,
/// clamped to 0..255.
GPUPERF_HOST_DEVICE void ycbcr_to_rgb(int luma, int cb, int cr, std::uint8_t* rgb) {
  constexpr int kScaleBits = 16;
  constexpr int kHalf = 1 << (kScaleBits - 1);
  // FIX(x) = x * 2^16 rounded: 1.40200, 1.77200, 0.71414, 0.34414.
  constexpr int kCrToR = 91881;
  constexpr int kCbToB = 116130;
  constexpr int kCrToG = 46802;
  constexpr int kCbToG = 22554;
  const int b_diff = cb - 128;
  const int r_diff = cr - 128;
  const int r = luma + ((kCrToR * r_diff + kHalf) >> kScaleBits);
  const int g = luma + ((-kCbToG * b_diff + kHalf - kCrToG * r_diff) >> kScaleBits);
  const int b = luma + ((kCbToB * b_diff + kHalf) >> kScaleBits);
  const auto clamp = [](int v) {
    return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
  };
  rgb[0] = clamp(r);
  rgb[1] = clamp(g);
  rgb[2] = clamp(b);
}

}  // namespace gpuperf
