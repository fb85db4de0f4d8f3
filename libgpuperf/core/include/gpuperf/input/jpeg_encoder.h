#pragma once
// Writing JPEGs with libjpeg-turbo: for generated data sets (benchmarks/make_jpeg_folder) and for
// the tests' files (baseline, progressive, grayscale, CMYK). Not tuned for speed.
//
//   gpuperf::JpegEncodeOptions options;
//   options.quality = 90;
//   options.progressive = true;
//   const std::vector<std::uint8_t> bytes = gpuperf::encode_jpeg(image, options);

#include <cstdint>
#include <vector>

#include "gpuperf/input/jpeg_decoder.h"

namespace gpuperf {

/// The colour space a JPEG is written in.
enum class JpegEncodeColor {
  kYCbCr,      ///< the usual: RGB stored as YCbCr
  kGrayscale,  ///< one channel: the RGB image's luma (ITU-R 601, rounded)
  kCMYK,       ///< four channels, inverted as Adobe (and PIL) write them, with an Adobe marker
  kYCCK,       ///< the same CMYK stored as YCCK (Adobe transform 2), as Photoshop writes it
};

/// How a YCbCr JPEG stores its chroma: at full size, half width (4:2:2), half width and height
/// (4:2:0, libjpeg's and most cameras' default) or half height (4:4:0).
enum class JpegChroma { k444, k422, k420, k440 };

/// How encode_jpeg() writes.
struct JpegEncodeOptions {
  int quality = 90;          ///< libjpeg quality, 1..100
  bool progressive = false;  ///< progressive (multi-scan) instead of baseline
  JpegEncodeColor color = JpegEncodeColor::kYCbCr;  ///< the stored colour space
  JpegChroma chroma = JpegChroma::k420;             ///< YCbCr: the chroma's sampling

  /// Throws ConfigError naming quality unless it is 1..100.
  void validate() const;
};

/// Encodes `image` (RGB). For kCMYK and kYCCK the RGB is stored so that decode_jpeg() gives it back
/// (up to the JPEG loss): K from the brightest channel, C, M, Y from the rest. Throws ConfigError
/// for bad options or an empty image, Error if libjpeg fails.
[[nodiscard]] std::vector<std::uint8_t> encode_jpeg(const RgbImage& image,
                                                    const JpegEncodeOptions& options = {});

}  // namespace gpuperf
