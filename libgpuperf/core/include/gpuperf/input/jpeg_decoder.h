#pragma once
// Decoding a JPEG with libjpeg-turbo and turning it into a normalised training or validation
// sample, as torchvision's ImageNet transforms over PIL do:
//   training:   RandomResizedCrop(224, scale=(0.08, 1), ratio=(3/4, 4/3)), RandomHorizontalFlip,
//               ToTensor, Normalize(ImageNet mean, std)
//   validation: Resize(256), CenterCrop(224), ToTensor, Normalize
// The resampling is PIL's (Resample.c: separable triangle filter whose support grows with the
// downscale factor, 8-bit fixed-point passes, horizontal first) and the decoder runs with PIL's
// settings (JDCT_ISLOW, fancy upsampling, PIL's CMYK conversion), so that with dct_scaling off
// the output equals PIL + torchvision's bit for bit (tests/core/input_reference.py checks it). With
// dct_scaling on (the default) libjpeg decodes at 1/2, 1/4 or 1/8 size when the crop stays at
// least as large as the output, which is several times faster and differs by a few levels.
// Only the rows and columns the crop needs are decoded (jpeg_skip_scanlines,
// jpeg_crop_scanline). The output is NHWC: crop_size x crop_size x 3, float32 or 16-bit.
//
//   gpuperf::ImageTransformOptions options;                    // training, float32
//   gpuperf::ImageTransformer transformer(options);            // one per thread
//   std::vector<float> out(224 * 224 * 3);
//   const auto random = gpuperf::SampleRandom::draw(seed, epoch, index);
//   const gpuperf::TransformReport report =
//       transformer.transform(bytes.data(), bytes.size(), random, out.data());

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/input/geometry.h"

namespace gpuperf {

/// PIL's Image.MAX_IMAGE_PIXELS: above it PIL warns, and gpuperf refuses the image.
inline constexpr std::int64_t kDefaultMaxImagePixels = 89478485;

/// The colour space a JPEG's header announces (libjpeg's jpeg_color_space).
enum class JpegColorSpace { kGrayscale, kYCbCr, kRGB, kCMYK, kYCCK, kUnknown };

/// "grayscale", "YCbCr", "RGB", "CMYK", "YCCK", "unknown".
[[nodiscard]] std::string to_string(JpegColorSpace value);

/// What a JPEG's header says.
struct JpegHeader {
  int width = 0;                                          ///< pixels
  int height = 0;                                         ///< pixels
  int components = 0;                                     ///< 1 (grayscale), 3, or 4 (CMYK/YCCK)
  JpegColorSpace color_space = JpegColorSpace::kUnknown;  ///< as libjpeg reads the markers
  bool progressive = false;                               ///< progressive (multi-scan) coding
  bool adobe_marker = false;                              ///< has an Adobe APP14 marker
};

/// How the decoder treats doubtful input.
struct DecodeOptions {
  /// Images whose header gives width * height above this are refused before decoding
  /// (BadImageReason::kTooManyPixels). PIL's default limit.
  std::int64_t max_pixels = kDefaultMaxImagePixels;
  /// false (default): data that ends before the image does is a bad file (kTruncated), as PIL
  /// raises "image file is truncated" unless LOAD_TRUNCATED_IMAGES is set; a truncated image's
  /// missing part is grey, which would train on a picture that is not the file's. true: the
  /// image is kept, and the warning counted.
  bool accept_truncated = false;

  /// Throws ConfigError naming max_pixels unless it is >= 1.
  void validate() const;
};

/// Reads the header of a JPEG in memory. Throws BadImageError (no path) for a file that is not
/// a JPEG, a corrupt header, or one above options.max_pixels.
[[nodiscard]] JpegHeader read_jpeg_header(const std::uint8_t* data, std::size_t size,
                                          const DecodeOptions& options = {});

/// An 8-bit RGB image, rows top to bottom, pixels interleaved R, G, B.
struct RgbImage {
  int width = 0;                     ///< pixels
  int height = 0;                    ///< pixels
  std::vector<std::uint8_t> pixels;  ///< width * height * 3 bytes
};

/// Counts of what libjpeg said about one image.
struct DecodeReport {
  int warnings = 0;        ///< libjpeg warnings (corrupt data it decoded past), truncation included
  bool truncated = false;  ///< the data ended early (only when accept_truncated let it through)
  std::string first_warning;  ///< libjpeg's text of the first warning
};

/// Decodes a whole JPEG to RGB as PIL's Image.open(...).convert("RGB") does: grayscale
/// replicated, CMYK and YCCK through PIL's conversion (inverted, "Adobe" CMYK assumed as PIL
/// does for every CMYK JPEG; then R = (255 - K) - C (255 - K) / 255, rounded as PIL's
/// MULDIV255), EXIF orientation not applied (PIL does not either). Throws BadImageError.
[[nodiscard]] RgbImage decode_jpeg(const std::uint8_t* data, std::size_t size,
                                   const DecodeOptions& options = {},
                                   DecodeReport* report = nullptr);

/// One component of a YCbCr JPEG as libjpeg's IDCT leaves it, before upsampling.
struct YCbCrPlane {
  int width = 0;     ///< samples per row (libjpeg's downsampled_width)
  int height = 0;    ///< rows (downsampled_height)
  int h_factor = 1;  ///< image pixels per sample across: 1, or 2 for chroma at half width
  int v_factor = 1;  ///< image pixels per sample down: 1, or 2 for chroma at half height
  std::vector<std::uint8_t> samples;  ///< width * height bytes, rows top to bottom
};

/// A YCbCr JPEG's three planes (Y, Cb, Cr) and the image's size.
struct YCbCrPlanes {
  int width = 0;   ///< image pixels
  int height = 0;  ///< image pixels
  std::array<YCbCrPlane, 3> planes;
};

/// Decodes a 3-component YCbCr JPEG (baseline or progressive) to its planes with PIL's IDCT
/// (JDCT_ISLOW), stopping before upsampling and colour conversion: what a GPU decoder's planar
/// output holds. The luma at full size, each chroma plane at 1 or 2 pixels per sample each way.
/// Throws BadImageError as decode_jpeg() does, kUnsupported for other colour spaces or
/// samplings.
[[nodiscard]] YCbCrPlanes decode_jpeg_planes(const std::uint8_t* data, std::size_t size,
                                             const DecodeOptions& options = {});

/// The planes' RGB image through libjpeg's fancy upsampling and YCbCr conversion
/// (gpuperf/input/ycbcr.h): decode_jpeg()'s pixels for the same file.
[[nodiscard]] RgbImage planes_to_rgb(const YCbCrPlanes& planes);

/// Which of torchvision's ImageNet transforms.
enum class TransformKind {
  kTrain,       ///< RandomResizedCrop + RandomHorizontalFlip
  kValidation,  ///< Resize(resize_size) + CenterCrop(crop_size)
};

/// The element type of a transformed sample.
enum class SampleType {
  kFloat32,   ///< float
  kFloat16,   ///< IEEE half, as uint16 bit patterns (round to nearest even)
  kBFloat16,  ///< bfloat16, as uint16 bit patterns (round to nearest even)
};

/// Bytes of one element of `type`.
[[nodiscard]] std::size_t element_bytes(SampleType type);

/// A sample's transform. Defaults: ImageNet training at 224.
struct ImageTransformOptions {
  TransformKind kind = TransformKind::kTrain;  ///< training or validation transform
  int crop_size = 224;                         ///< output height and width, pixels
  int resize_size = 256;                       ///< validation: the shorter side before the crop
  RandomResizedCropOptions crop;               ///< training: the crop's scale and ratio ranges
  bool horizontal_flip = true;                 ///< training: RandomHorizontalFlip(0.5)
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  ///< per channel (R, G, B), of [0, 1] values
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};   ///< per channel, > 0
  SampleType type = SampleType::kFloat32;             ///< element type of the output
  /// Let libjpeg decode at 1/2, 1/4 or 1/8 size (the largest reduction that keeps the crop at
  /// least crop_size, or for validation the image at least its resized size, in both
  /// directions), so that no upsampling is introduced. Faster; pixels differ from PIL's by a
  /// few levels. false: bit-exact with PIL + torchvision.
  bool dct_scaling = true;
  DecodeOptions decode;  ///< pixel limit, truncated files

  /// Throws ConfigError naming the first bad field: crop_size 1..4096, resize_size >= crop_size
  /// (validation), crop ranges (RandomResizedCropOptions::validate), std > 0, decode.
  void validate() const;
  /// Bytes of one output sample: crop_size^2 * 3 * element_bytes(type).
  [[nodiscard]] std::size_t sample_bytes() const;
};

/// The random choices of one sample, drawn from SampleStream(seed, epoch, index): the crop's
/// 22 draws, then the flip's one (validation samples ignore them).
struct SampleRandom {
  RandomResizedCropDraws crop;  ///< RandomResizedCrop's draws
  bool flip = false;            ///< RandomHorizontalFlip's outcome

  /// The draws of sample `index` of `epoch` under `seed`.
  [[nodiscard]] static SampleRandom draw(std::uint64_t seed, std::uint64_t epoch,
                                         std::uint64_t index);
};

/// Where a sample's pixels come from, in the source image's pixels: what a GPU decoder needs to
/// produce the same sample (sample_plan()).
struct SamplePlan {
  /// The source region that becomes the output: the crop (training) or, for validation, the
  /// whole image (resized to `resized`, then `crop` of the resized image is kept).
  CropBox source;
  ImageSize resized;  ///< validation: the size the whole image is resized to; training: unused
  CropBox crop;       ///< validation: the centre crop in the resized image; training: unused
  bool flip = false;  ///< mirror the output left to right
  /// libjpeg's scale denominator chosen (1, 2, 4, 8): decode at 1/denominator.
  int scale_denominator = 1;
};

/// The plan of one sample for an image of `height` x `width` (pure: no decoding).
[[nodiscard]] SamplePlan sample_plan(int height, int width, const ImageTransformOptions& options,
                                     const SampleRandom& random);

/// What transform() did.
struct TransformReport {
  JpegHeader header;                ///< the source image
  SamplePlan plan;                  ///< the geometry used
  DecodeReport decode;              ///< libjpeg's warnings
  std::int64_t decoded_pixels = 0;  ///< pixels libjpeg produced (after scaling and cropping)
};

/// Decodes and transforms JPEGs into caller-provided slots. Holds the normalisation tables and
/// scratch buffers: one per thread (not thread-safe), reused across samples.
class ImageTransformer {
 public:
  /// Throws ConfigError for bad options.
  explicit ImageTransformer(const ImageTransformOptions& options);
  ~ImageTransformer();
  ImageTransformer(ImageTransformer&& other) noexcept;
  ImageTransformer& operator=(ImageTransformer&& other) noexcept;
  ImageTransformer(const ImageTransformer&) = delete;
  ImageTransformer& operator=(const ImageTransformer&) = delete;

  /// Decodes the JPEG in `data` and writes the transformed sample to `out`
  /// (options.sample_bytes() bytes, NHWC). Throws BadImageError (no path); `out` is then
  /// unspecified.
  TransformReport transform(const std::uint8_t* data, std::size_t size, const SampleRandom& random,
                            void* out);

  /// The options, validated.
  [[nodiscard]] const ImageTransformOptions& options() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// IEEE half bits of `value`, rounded to nearest even (overflow to infinity).
[[nodiscard]] std::uint16_t float_to_half_bits(float value);
/// bfloat16 bits of `value`, rounded to nearest even (NaN kept a NaN).
[[nodiscard]] std::uint16_t float_to_bfloat16_bits(float value);

}  // namespace gpuperf
