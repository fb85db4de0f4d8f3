// torchvision's crop arithmetic. Where torch computes in float32 (the sampled area fraction, the
// log ratio bounds, exp of the sampled log ratio, the latter with torch's own exp) the value is
// rounded to float here too, and Python's round() is round-half-to-even (std::nearbyint in the
// default rounding mode): with doubles, another exp or round-half-away the boxes differ by a
// pixel for some draws (input_reference.py's boundary cases find them).
#include "gpuperf/input/geometry.h"

#include <algorithm>
#include <cmath>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

// torch.empty(1).uniform_(lo, hi) for the draw u: the float32 tensor holding lo + (hi - lo) u.
double uniform_float32(double lo, double hi, double u) {
  return static_cast<double>(static_cast<float>(lo + (hi - lo) * u));
}

// torch.randint(0, n) for the draw u: floor(u n), at most n - 1.
int randint_below(int n, double u) {
  const int value = static_cast<int>(std::floor(u * n));
  return std::clamp(value, 0, n - 1);
}

// torch.exp of a float32 tensor on x86 CPUs with AVX2 or AVX-512 (the builds PyTorch ships):
// ATen calls SLEEF's Sleef_expf8_u10, whose result differs from the correctly rounded exp in the
// last bit for about 7% of inputs. Those bits move RandomResizedCrop's w or h by one pixel when
// sqrt(area * ratio) lies next to k + 0.5, so the algorithm is repeated here (SLEEF's xexpf:
// Cody-Waite reduction by ln 2, a degree-6 polynomial, FMA at every step as AVX2 computes it).
// Checked equal to torch.exp on 10^6 inputs of the log-ratio range.
float sleef_expf_u10(float d) {
  const float r_ln2 = 1.442695040888963407359924681001892137426645954152985934135449406931f;
  const float l2u = 0.693145751953125f;
  const float l2l = 1.428606765330187045e-06f;
  const int q = static_cast<int>(std::nearbyint(d * r_ln2));
  float s = std::fma(static_cast<float>(q), -l2u, d);
  s = std::fma(static_cast<float>(q), -l2l, s);
  float u = 0.000198527617612853646278381f;
  u = std::fma(u, s, 0.00139304355252534151077271f);
  u = std::fma(u, s, 0.00833336077630519866943359f);
  u = std::fma(u, s, 0.0416664853692054748535156f);
  u = std::fma(u, s, 0.166666671633720397949219f);
  u = std::fma(u, s, 0.5f);
  u = 1.0f + std::fma(s * s, u, s);
  if (d < -104.0f) return 0.0f;
  if (d > 100.0f) return HUGE_VALF;
  return std::ldexp(u, q);
}

// Python's int(round(x)).
int round_half_even(double x) { return static_cast<int>(std::nearbyint(x)); }

}  // namespace

void RandomResizedCropOptions::validate() const {
  require_setting(scale_min > 0, "RandomResizedCropOptions::scale_min", scale_min, "> 0");
  require_setting(scale_max >= scale_min, "RandomResizedCropOptions::scale_max", scale_max,
                  ">= {scale_min}");
  require_setting(ratio_min > 0, "RandomResizedCropOptions::ratio_min", ratio_min, "> 0");
  require_setting(ratio_max >= ratio_min, "RandomResizedCropOptions::ratio_max", ratio_max,
                  ">= {ratio_min}");
}

CropBox random_resized_crop_box(int height, int width, const RandomResizedCropOptions& options,
                                const RandomResizedCropDraws& draws) {
  const double area = static_cast<double>(height) * width;
  // log_ratio = torch.log(torch.tensor(ratio)): float32 logs of the float32 bounds.
  const auto log_float32 = [](double r) {
    return static_cast<double>(
        static_cast<float>(std::log(static_cast<double>(static_cast<float>(r)))));
  };
  const double log_lo = log_float32(options.ratio_min);
  const double log_hi = log_float32(options.ratio_max);
  for (int attempt = 0; attempt < RandomResizedCropDraws::kAttempts; ++attempt) {
    const double target_area =
        area * uniform_float32(options.scale_min, options.scale_max, draws.area[attempt]);
    const double aspect_ratio = static_cast<double>(sleef_expf_u10(
        static_cast<float>(uniform_float32(log_lo, log_hi, draws.log_ratio[attempt]))));
    const int w = round_half_even(std::sqrt(target_area * aspect_ratio));
    const int h = round_half_even(std::sqrt(target_area / aspect_ratio));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int top = randint_below(height - h + 1, draws.top);
      const int left = randint_below(width - w + 1, draws.left);
      return {top, left, h, w};
    }
  }
  // Fallback: the whole image, clipped to the ratio range, centred (in doubles, as Python).
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  const double ratio_lo = std::min(options.ratio_min, options.ratio_max);
  const double ratio_hi = std::max(options.ratio_min, options.ratio_max);
  int w = width;
  int h = height;
  if (in_ratio < ratio_lo) {
    h = round_half_even(w / ratio_lo);
  } else if (in_ratio > ratio_hi) {
    w = round_half_even(h * ratio_hi);
  }
  // Python's // on non-negative ints.
  return {(height - h) / 2, (width - w) / 2, h, w};
}

ImageSize resize_shorter_side(int height, int width, int size) {
  const bool width_shorter = width <= height;
  const std::int64_t shorter = width_shorter ? width : height;
  const std::int64_t longer = width_shorter ? height : width;
  // int(size * long / short): an int product, then true division in doubles, truncated.
  const int new_long =
      static_cast<int>(static_cast<double>(size * longer) / static_cast<double>(shorter));
  return width_shorter ? ImageSize{new_long, size} : ImageSize{size, new_long};
}

CropBox center_crop_box(int height, int width, int size) {
  CropBox box{0, 0, size, size};
  // A side smaller than the crop is padded with (size - side) // 2 zeros before it, and the
  // padded side equals the crop: the crop starts at the padding.
  box.top = size > height ? -((size - height) / 2) : round_half_even((height - size) / 2.0);
  box.left = size > width ? -((size - width) / 2) : round_half_even((width - size) / 2.0);
  return box;
}

std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

SampleStream::SampleStream(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index)
    : state_(mix64(mix64(mix64(seed + 0x9E3779B97F4A7C15ULL) ^ epoch) ^ index)) {}

std::uint64_t SampleStream::next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  return mix64(state_);
}

double SampleStream::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

}  // namespace gpuperf
