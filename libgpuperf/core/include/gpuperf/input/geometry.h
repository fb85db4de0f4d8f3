#pragma once
// The crop geometry of torchvision's ImageNet transforms, as pure functions of the image size and
// the uniform draws, and the per-sample random stream the draws come from. The functions repeat
// torchvision 0.14's arithmetic step for step (float32 where torch computes in float32, Python's
// round-half-to-even where it calls round()), so that the same draws give the same integer boxes:
// tests/core/input_reference.py feeds the draws to torchvision itself and compares.
//
//   gpuperf::SampleStream stream(seed, epoch, index);        // independent per sample
//   const auto draws = gpuperf::RandomResizedCropDraws::from(stream);
//   const gpuperf::CropBox box = gpuperf::random_resized_crop_box(height, width, {}, draws);
//   const bool flip = gpuperf::flip_from(stream);            // RandomHorizontalFlip(0.5)
//
//   const gpuperf::ImageSize resized = gpuperf::resize_shorter_side(height, width, 256);
//   const gpuperf::CropBox centre = gpuperf::center_crop_box(resized.height, resized.width, 224);

#include <array>
#include <cstdint>

namespace gpuperf {

/// A rectangle of pixels: rows [top, top + height), columns [left, left + width).
struct CropBox {
  int top = 0;     ///< first row (negative: zero rows above the image, as CenterCrop pads)
  int left = 0;    ///< first column (negative: zero columns left of the image)
  int height = 0;  ///< rows
  int width = 0;   ///< columns

  /// Field-wise equality, for tests.
  bool operator==(const CropBox& other) const {
    return top == other.top && left == other.left && height == other.height && width == other.width;
  }
};

/// An image size in pixels.
struct ImageSize {
  int height = 0;  ///< rows
  int width = 0;   ///< columns
};

/// torchvision's RandomResizedCrop parameters (the defaults are ImageNet training's).
struct RandomResizedCropOptions {
  double scale_min = 0.08;       ///< smallest crop area, as a fraction of the image area
  double scale_max = 1.0;        ///< largest crop area fraction
  double ratio_min = 3.0 / 4.0;  ///< smallest width / height of the crop
  double ratio_max = 4.0 / 3.0;  ///< largest width / height of the crop

  /// Throws ConfigError naming the first bad field: 0 < scale_min <= scale_max, 0 < ratio_min
  /// <= ratio_max.
  void validate() const;
};

/// The uniform draws, each in [0, 1), that torchvision's RandomResizedCrop.get_params consumes:
/// per attempt (10) one for the area and one for the log aspect ratio, then one each for the
/// top and the left offset of the accepted attempt. All are drawn whether used or not, so a
/// sample always consumes the same count from its stream.
struct RandomResizedCropDraws {
  static constexpr int kAttempts = 10;        ///< torchvision's attempts before the fallback
  std::array<double, kAttempts> area{};       ///< torch.empty(1).uniform_(scale) per attempt
  std::array<double, kAttempts> log_ratio{};  ///< torch.empty(1).uniform_(log ratio) per attempt
  double top = 0;                             ///< torch.randint(0, height - h + 1)
  double left = 0;                            ///< torch.randint(0, width - w + 1)

  /// 22 draws from `stream`, in the order above.
  template <typename Stream>
  static RandomResizedCropDraws from(Stream& stream) {
    RandomResizedCropDraws d;
    for (int i = 0; i < kAttempts; ++i) {
      d.area[i] = stream.uniform();
      d.log_ratio[i] = stream.uniform();
    }
    d.top = stream.uniform();
    d.left = stream.uniform();
    return d;
  }
};

/// torchvision's RandomResizedCrop.get_params for an image of `height` x `width` given the
/// draws: 10 attempts of a target area (float32 fraction of the area) and a log-uniform aspect
/// ratio (float32, exp as torch computes it on x86: SLEEF's expf_u10), w = round(sqrt(area *
/// ratio)), h = round(sqrt(area / ratio)), accepted when
/// 0 < w <= width and 0 < h <= height; then the offsets floor(u * (size - crop + 1)). Without an
/// accepted attempt, the centred whole image clipped to the ratio range. `height`, `width` >= 1.
[[nodiscard]] CropBox random_resized_crop_box(int height, int width,
                                              const RandomResizedCropOptions& options,
                                              const RandomResizedCropDraws& draws);

/// torchvision's Resize(size) with one int: the shorter side becomes `size`, the longer
/// int(size * long / short) (truncated, as Python's int()). `height`, `width`, `size` >= 1.
[[nodiscard]] ImageSize resize_shorter_side(int height, int width, int size);

/// torchvision's CenterCrop(size): top = round((height - size) / 2), left likewise (Python's
/// round, half to even). A crop larger than the image is centred over zero padding: the offset
/// is then -((size - side) / 2) and the parts outside the image are zeros.
[[nodiscard]] CropBox center_crop_box(int height, int width, int size);

/// A random stream per sample: SplitMix64 (Steele, Lea and Flood 2014, the generator of Java's
/// SplittableRandom) seeded with a mix of (seed, epoch, index). The same triple gives the same
/// draws on every machine, standard library and thread count, and different samples' streams
/// are independent for practical purposes. uniform() is (next() >> 11) * 2^-53, in [0, 1).
class SampleStream {
 public:
  /// The stream of sample `index` of epoch `epoch` under the run's `seed`.
  SampleStream(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index);
  /// The next 64 random bits.
  std::uint64_t next();
  /// The next uniform double in [0, 1), 53 bits.
  double uniform();

 private:
  std::uint64_t state_;
};

/// RandomHorizontalFlip(p = 0.5): one draw, flipped when it is below 0.5 (torch.rand(1) < p).
template <typename Stream>
[[nodiscard]] bool flip_from(Stream& stream) {
  return stream.uniform() < 0.5;
}

/// The SplitMix64 finaliser: a 64-bit mix with full avalanche (used to derive seeds).
[[nodiscard]] std::uint64_t mix64(std::uint64_t x);

}  // namespace gpuperf
