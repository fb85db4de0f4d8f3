// PIL's resampling, Pillow 9.4 Resample.c: precompute_coeffs, normalize_coeffs_8bpc,
// ImagingResampleHorizontal_8bpc / Vertical_8bpc. Kept in its arithmetic (double weights, (int)
// truncation of the bounds, the 22-bit rounding, clip8) because any change moves some outputs
// by one level and the reference test compares exactly.
#include "input/resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// On x86-64 the passes have vector versions chosen at run time, with the same integer
// arithmetic and so the same outputs: the vertical pass compiled for AVX2 beside the baseline
// (function multiversioning; SSE2 has no 32-bit multiply, AVX2 multiplies eight lanes at once),
// the horizontal pass of RGB rows two taps at a time in 16-bit multiply-adds, one output per
// SSE4.1 vector or two per AVX2 vector.
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
// The same sums two taps at a time in 16-bit multiply-adds: the taps' bytes spread to
// (R0, R1, G0, G1, B0, B1, 0, 0) as 16-bit lanes, multiplied by the pair's weights and added in
// pairs (pmaddwd), once with the weights' high parts and once with their low parts; the exact
// 32-bit sum is high * 2^11 + low (every weight < 2^22 + 1, so no step overflows). Each pair loads
// eight bytes (its two pixels and two of the next), so an output whose loads reach the last
// pixel the axis uses is left to the scalar code. Outputs [begin, end).
__attribute__((target("sse4.1"))) void resample_rgb_row_pairs(const std::uint8_t* row,
                                                              int row_origin,
                                                              const ResampleAxis& axis, int begin,
                                                              int end, std::uint8_t* out) {
  const __m128i spread = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m128i half = _mm_set1_epi32(1 << (kPrecisionBits - 1));
  const __m128i zero = _mm_setzero_si128();
  for (int i = begin; i < end; ++i) {
    const int first = axis.first[static_cast<std::size_t>(i)];
    const int taps = axis.taps[static_cast<std::size_t>(i)];
    const int pairs = (taps + 1) / 2;
    const std::uint8_t* in = row + static_cast<std::ptrdiff_t>(first - row_origin) * 3;
    std::uint8_t* o = out + static_cast<std::ptrdiff_t>(i) * 3;
    if (first + 2 * pairs >= axis.hi) {
      resample_rgb_pixel(in, &axis.kk[static_cast<std::size_t>(i) * axis.ksize], taps, o);
      continue;
    }
    const std::size_t at = static_cast<std::size_t>(i) * axis.pair_count;
    const std::int32_t* high = &axis.pairs_high[at];
    const std::int32_t* low = &axis.pairs_low[at];
    __m128i sum_high = zero;
    __m128i sum_low = zero;
    for (int p = 0; p < pairs; ++p) {
      std::int64_t bytes = 0;
      std::memcpy(&bytes, in + static_cast<std::ptrdiff_t>(p) * 6, sizeof bytes);
      const __m128i pixels = _mm_shuffle_epi8(_mm_cvtsi64_si128(bytes), spread);
      sum_high = _mm_add_epi32(sum_high, _mm_madd_epi16(pixels, _mm_set1_epi32(high[p])));
      sum_low = _mm_add_epi32(sum_low, _mm_madd_epi16(pixels, _mm_set1_epi32(low[p])));
    }
    const __m128i sum = _mm_add_epi32(_mm_add_epi32(_mm_slli_epi32(sum_high, 11), sum_low), half);
    // clip8: the sum >> 22, saturated to 0..255 (a sum <= 0 gives 0, one >= 2^30 gives 255).
    const __m128i levels =
        _mm_packus_epi16(_mm_packs_epi32(_mm_srai_epi32(sum, kPrecisionBits), zero), zero);
    const std::int32_t rgb = _mm_cvtsi128_si32(levels);
    std::memcpy(o, &rgb, 3);
  }
}

// resample_rgb_row_pairs() for two outputs at once, one in each 128-bit lane: both run the
// larger one's pairs (the tables hold zero weights past an output's taps), and a pair of outputs
// whose loads reach the last pixel the axis uses goes through the one-output code.
__attribute__((target("avx2"))) void resample_rgb_row_pairs_avx2(const std::uint8_t* row,
                                                                 int row_origin,
                                                                 const ResampleAxis& axis,
                                                                 std::uint8_t* out) {
  const int count = axis.count();
  const __m256i spread = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
                                          0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m256i half = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  const __m256i zero = _mm256_setzero_si256();
  int i = 0;
  for (; i + 1 < count; i += 2) {
    const auto a = static_cast<std::size_t>(i);
    const int first0 = axis.first[a];
    const int first1 = axis.first[a + 1];
    const int pairs = (std::max(axis.taps[a], axis.taps[a + 1]) + 1) / 2;
    if (std::max(first0, first1) + 2 * pairs >= axis.hi) {
      resample_rgb_row_pairs(row, row_origin, axis, i, i + 2, out);
      continue;
    }
    const std::uint8_t* in0 = row + static_cast<std::ptrdiff_t>(first0 - row_origin) * 3;
    const std::uint8_t* in1 = row + static_cast<std::ptrdiff_t>(first1 - row_origin) * 3;
    const std::int32_t* high0 = &axis.pairs_high[a * axis.pair_count];
    const std::int32_t* low0 = &axis.pairs_low[a * axis.pair_count];
    const std::int32_t* high1 = high0 + axis.pair_count;
    const std::int32_t* low1 = low0 + axis.pair_count;
    __m256i sum_high = zero;
    __m256i sum_low = zero;
    for (int p = 0; p < pairs; ++p) {
      std::int64_t bytes0 = 0;
      std::int64_t bytes1 = 0;
      std::memcpy(&bytes0, in0 + static_cast<std::ptrdiff_t>(p) * 6, sizeof bytes0);
      std::memcpy(&bytes1, in1 + static_cast<std::ptrdiff_t>(p) * 6, sizeof bytes1);
      const __m256i pixels = _mm256_shuffle_epi8(
          _mm256_setr_m128i(_mm_cvtsi64_si128(bytes0), _mm_cvtsi64_si128(bytes1)), spread);
      const __m256i wh = _mm256_setr_m128i(_mm_set1_epi32(high0[p]), _mm_set1_epi32(high1[p]));
      const __m256i wl = _mm256_setr_m128i(_mm_set1_epi32(low0[p]), _mm_set1_epi32(low1[p]));
      sum_high = _mm256_add_epi32(sum_high, _mm256_madd_epi16(pixels, wh));
      sum_low = _mm256_add_epi32(sum_low, _mm256_madd_epi16(pixels, wl));
    }
    const __m256i sum =
        _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(sum_high, 11), sum_low), half);
    const __m256i levels =
        _mm256_packus_epi16(_mm256_packs_epi32(_mm256_srai_epi32(sum, kPrecisionBits), zero), zero);
    const std::int32_t rgb0 = _mm256_extract_epi32(levels, 0);
    const std::int32_t rgb1 = _mm256_extract_epi32(levels, 4);
    std::uint8_t* o = out + static_cast<std::ptrdiff_t>(i) * 3;
    std::memcpy(o, &rgb0, 3);
    std::memcpy(o + 3, &rgb1, 3);
  }
  resample_rgb_row_pairs(row, row_origin, axis, i, count, out);
}

bool has_avx2() {
  static const bool supported = __builtin_cpu_supports("avx2") != 0;
  return supported;
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
  axis.pairs_ok = false;  // until build_pair_weights()
}

void build_pair_weights(ResampleAxis& axis) {
  constexpr int kLowBits = 11;
  const int count = axis.count();
  axis.pair_count = (axis.ksize + 1) / 2;
  axis.pairs_high.assign(static_cast<std::size_t>(count) * axis.pair_count, 0);
  axis.pairs_low.assign(static_cast<std::size_t>(count) * axis.pair_count, 0);
  axis.pairs_ok = true;
  for (int i = 0; i < count; ++i) {
    const std::int32_t* fixed = &axis.kk[static_cast<std::size_t>(i) * axis.ksize];
    for (int p = 0; p < axis.pair_count; ++p) {
      std::uint32_t high = 0;
      std::uint32_t low = 0;
      for (int half = 0; half < 2; ++half) {
        const int x = 2 * p + half;
        const std::int32_t w = x < axis.ksize ? fixed[x] : 0;
        if (w < 0 || w > (1 << kPrecisionBits)) axis.pairs_ok = false;
        const auto u = static_cast<std::uint32_t>(w);
        high |= (u >> kLowBits) << (16 * half);
        low |= (u & ((1U << kLowBits) - 1)) << (16 * half);
      }
      const std::size_t at = static_cast<std::size_t>(i) * axis.pair_count + p;
      axis.pairs_high[at] = static_cast<std::int32_t>(high);
      axis.pairs_low[at] = static_cast<std::int32_t>(low);
    }
  }
}

void resample_row(const std::uint8_t* row, int row_origin, int channels, const ResampleAxis& axis,
                  std::uint8_t* out) {
#if GPUPERF_RESAMPLE_X86
  if (channels == 3 && axis.pairs_ok && has_avx2()) {
    resample_rgb_row_pairs_avx2(row, row_origin, axis, out);
    return;
  }
  if (channels == 3 && axis.pairs_ok && has_sse41()) {
    resample_rgb_row_pairs(row, row_origin, axis, 0, axis.count(), out);
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
