// PIL's resampling, Pillow 9.4 Resample.c: precompute_coeffs, normalize_coeffs_8bpc,
// ImagingResampleHorizontal_8bpc / Vertical_8bpc. Kept in its arithmetic (double weights, (int)
// truncation of the bounds, the 22-bit rounding, clip8) because any change moves some outputs
// by one level and the reference test compares exactly.
#include "input/resample.h"

#include <cmath>
#include <cstring>

// On x86-64 the passes have vector versions chosen at run time, with the same integer
// arithmetic and so the same outputs: the vertical pass compiled for AVX2 beside the baseline
// (function multiversioning; SSE2 has no 32-bit multiply, AVX2 multiplies eight lanes at once),
// the horizontal pass of RGB rows with SSE4.1 (one pixel's three channels in one vector per tap).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GPUPERF_RESAMPLE_X86 1
#include <immintrin.h>
#define GPUPERF_RESAMPLE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPUPERF_RESAMPLE_X86 0
#define GPUPERF_RESAMPLE_CLONES
#endif

namespace gpuperf::detail {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double bilinear_filter(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

inline std::uint8_t clip8(int value) {
  if (value >= (1 << kPrecisionBits << 8)) return 255;
  if (value <= 0) return 0;
  return static_cast<std::uint8_t>(value >> kPrecisionBits);
}

// One output of the horizontal pass over RGB: Pillow's sums, one channel at a time.
inline void resample_rgb_pixel(const std::uint8_t* in, const std::int32_t* k, int taps,
                               std::uint8_t* out) {
  const int half = 1 << (kPrecisionBits - 1);
  int s0 = half;
  int s1 = half;
  int s2 = half;
  for (int x = 0; x < taps; ++x) {
    s0 += in[x * 3 + 0] * k[x];
    s1 += in[x * 3 + 1] * k[x];
    s2 += in[x * 3 + 2] * k[x];
  }
  out[0] = clip8(s0);
  out[1] = clip8(s1);
  out[2] = clip8(s2);
}

#if GPUPERF_RESAMPLE_X86
// The same sums with the three channels in one vector: each tap loads four bytes (the pixel and
// the next one's first channel, whose lane is ignored), so an output whose taps reach the last
// pixel the axis uses is left to the scalar code.
__attribute__((target("sse4.1"))) void resample_rgb_row_sse41(const std::uint8_t* row,
                                                              int row_origin,
                                                              const ResampleAxis& axis,
                                                              std::uint8_t* out) {
  const int count = axis.count();
  const __m128i half = _mm_set1_epi32(1 << (kPrecisionBits - 1));
  for (int i = 0; i < count; ++i) {
    const std::int32_t* k = &axis.kk[static_cast<std::size_t>(i) * axis.ksize];
    const int first = axis.first[static_cast<std::size_t>(i)];
    const int taps = axis.taps[static_cast<std::size_t>(i)];
    const std::uint8_t* in = row + static_cast<std::ptrdiff_t>(first - row_origin) * 3;
    if (first + taps >= axis.hi) {
      resample_rgb_pixel(in, k, taps, out + static_cast<std::ptrdiff_t>(i) * 3);
      continue;
    }
    __m128i sum = half;
    for (int x = 0; x < taps; ++x) {
      std::int32_t bytes = 0;
      std::memcpy(&bytes, in + static_cast<std::ptrdiff_t>(x) * 3, sizeof bytes);
      const __m128i pixel = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(bytes));
      sum = _mm_add_epi32(sum, _mm_mullo_epi32(pixel, _mm_set1_epi32(k[x])));
    }
    std::uint8_t* o = out + static_cast<std::ptrdiff_t>(i) * 3;
    o[0] = clip8(_mm_cvtsi128_si32(sum));
    o[1] = clip8(_mm_extract_epi32(sum, 1));
    o[2] = clip8(_mm_extract_epi32(sum, 2));
  }
}

bool has_sse41() {
  static const bool supported = __builtin_cpu_supports("sse4.1") != 0;
  return supported;
}
#endif

}  // namespace

void build_axis(int in_size, double in0, double in1, int out_size, int out_first, int out_count,
                ResampleAxis& axis) {
  const double scale = (in1 - in0) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = 1.0 * filterscale;  // the bilinear filter's support is 1
  axis.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  axis.first.assign(static_cast<std::size_t>(out_count), 0);
  axis.taps.assign(static_cast<std::size_t>(out_count), 0);
  axis.kk.assign(static_cast<std::size_t>(out_count) * axis.ksize, 0);
  std::vector<double> k(static_cast<std::size_t>(axis.ksize));
  axis.lo = in_size;
  axis.hi = 0;
  for (int i = 0; i < out_count; ++i) {
    const int xx = out_first + i;
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    // (int)(x + 0.5) as Pillow's resampler rounds (truncating), for its kernels bit for bit.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings): Pillow's rounding, on purpose
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    // NOLINTNEXTLINE(bugprone-incorrect-roundings): Pillow's rounding, on purpose
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = bilinear_filter((x + xmin - center + 0.5) * ss);
      k[static_cast<std::size_t>(x)] = w;
      ww += w;
    }
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[static_cast<std::size_t>(x)] /= ww;
    }
    std::int32_t* fixed = &axis.kk[static_cast<std::size_t>(i) * axis.ksize];
    for (int x = 0; x < xmax; ++x) {
      const double v = k[static_cast<std::size_t>(x)];
      // NOLINTBEGIN(bugprone-incorrect-roundings): Pillow's rounding of its fixed-point kernels
      fixed[x] = v < 0 ? static_cast<std::int32_t>(-0.5 + v * (1 << kPrecisionBits))
                       : static_cast<std::int32_t>(0.5 + v * (1 << kPrecisionBits));
      // NOLINTEND(bugprone-incorrect-roundings)
    }
    axis.first[static_cast<std::size_t>(i)] = xmin;
    axis.taps[static_cast<std::size_t>(i)] = xmax;
    if (xmax > 0) {
      if (xmin < axis.lo) axis.lo = xmin;
      if (xmin + xmax > axis.hi) axis.hi = xmin + xmax;
    }
  }
  if (axis.lo > axis.hi) axis.lo = axis.hi = 0;
}

void resample_row(const std::uint8_t* row, int row_origin, int channels, const ResampleAxis& axis,
                  std::uint8_t* out) {
#if GPUPERF_RESAMPLE_X86
  if (channels == 3 && has_sse41()) {
    resample_rgb_row_sse41(row, row_origin, axis, out);
    return;
  }
#endif
  const int count = axis.count();
  const int half = 1 << (kPrecisionBits - 1);
  for (int i = 0; i < count; ++i) {
    const std::int32_t* k = &axis.kk[static_cast<std::size_t>(i) * axis.ksize];
    const std::uint8_t* in =
        row + static_cast<std::ptrdiff_t>(axis.first[i] - row_origin) * channels;
    const int taps = axis.taps[i];
    if (channels == 3) {
      resample_rgb_pixel(in, k, taps, out + static_cast<std::ptrdiff_t>(i) * 3);
    } else {
      for (int c = 0; c < channels; ++c) {
        int s = half;
        for (int x = 0; x < taps; ++x) s += in[x * channels + c] * k[x];
        out[i * channels + c] = clip8(s);
      }
    }
  }
}

GPUPERF_RESAMPLE_CLONES void resample_columns(const std::uint8_t* rows, int row_origin,
                                              int row_bytes, const ResampleAxis& axis,
                                              std::uint8_t* out) {
  const int count = axis.count();
  const int half = 1 << (kPrecisionBits - 1);
  std::vector<int> sums(static_cast<std::size_t>(row_bytes));
  for (int i = 0; i < count; ++i) {
    const std::int32_t* k = &axis.kk[static_cast<std::size_t>(i) * axis.ksize];
    const std::uint8_t* in =
        rows + static_cast<std::ptrdiff_t>(axis.first[i] - row_origin) * row_bytes;
    const int taps = axis.taps[i];
    for (int b = 0; b < row_bytes; ++b) sums[static_cast<std::size_t>(b)] = half;
    for (int y = 0; y < taps; ++y) {
      const std::uint8_t* r = in + static_cast<std::ptrdiff_t>(y) * row_bytes;
      const int w = k[y];
      for (int b = 0; b < row_bytes; ++b) sums[static_cast<std::size_t>(b)] += r[b] * w;
    }
    std::uint8_t* o = out + static_cast<std::ptrdiff_t>(i) * row_bytes;
    for (int b = 0; b < row_bytes; ++b) o[b] = clip8(sums[static_cast<std::size_t>(b)]);
  }
}

}  // namespace gpuperf::detail
