#pragma once
// PIL's bilinear resampling (Pillow 9.4, libImaging/Resample.c), transcribed so that the output
// equals Image.resize(size, Image.BILINEAR) bit for bit: per output position the triangle
// filter's support is scaled by the downscale factor (antialiasing), the weights are normalised
// and converted to 22-bit fixed point, and each pass rounds to 8 bits, horizontal pass first.
// Private to the input module.

#include <cstdint>
#include <vector>

namespace gpuperf::detail {

/// The filter of one axis: for outputs [out_first, out_first + count) of an `out_size` resize
/// of the box [in0, in1) of an input of `in_size` samples, the first input index and the
/// fixed-point weights of each output.
struct ResampleAxis {
  int ksize = 0;                 ///< weights stored per output
  std::vector<int> first;        ///< first input index per output
  std::vector<int> taps;         ///< inputs used per output
  std::vector<std::int32_t> kk;  ///< count * ksize weights, 22-bit fixed point
  /// The weights two taps at a time for 16-bit multiply-adds: each weight split into its high
  /// part (k >> 11) and low part (k & 2047), and per output the taps (0, 1), (2, 3), ... packed
  /// as two 16-bit halves, the odd tap's weight 0 past the end (count * pair_count each).
  /// build_pair_weights() fills them; pairs_ok: they are filled and every weight is in 0..2^22
  /// (always, for the bilinear filter).
  int pair_count = 0;
  std::vector<std::int32_t> pairs_high;
  std::vector<std::int32_t> pairs_low;
  bool pairs_ok = false;
  int lo = 0;  ///< smallest input index used
  int hi = 0;  ///< one past the largest input index used

  /// Outputs described.
  [[nodiscard]] int count() const { return static_cast<int>(first.size()); }
};

/// PIL's precompute_coeffs + normalize_coeffs_8bpc for the outputs [out_first, out_first +
/// out_count) of `out_size`.
void build_axis(int in_size, double in0, double in1, int out_size, int out_first, int out_count,
                ResampleAxis& axis);

/// Fills the axis's pair tables (for resample_row's RGB pass; the vertical pass does not use them).
void build_pair_weights(ResampleAxis& axis);

/// The horizontal pass over one row of `channels`-interleaved bytes whose first element is
/// input index `row_origin` (indices in axis are relative to the row's start at that origin):
/// writes axis.count() * channels bytes.
void resample_row(const std::uint8_t* row, int row_origin, int channels, const ResampleAxis& axis,
                  std::uint8_t* out);

/// The vertical pass: `rows` holds rows of `row_bytes` bytes starting at input index
/// `row_origin`; writes axis.count() rows of row_bytes bytes to `out`.
void resample_columns(const std::uint8_t* rows, int row_origin, int row_bytes,
                      const ResampleAxis& axis, std::uint8_t* out);

}  // namespace gpuperf::detail
