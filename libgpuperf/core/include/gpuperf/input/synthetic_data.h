#pragma once
// Generated JPEG data sets: ImageNet-like folders for measuring the input pipeline without
// ImageNet, and the bad files every loader must survive. The pictures are smooth colour fields
// with soft-edged shapes and a few octaves of value noise (a 1/f-like spectrum, as photographs
// have), not white noise, so that they compress like photographs (about 100 KB at quality 90
// for ImageNet's mean size, about 400 x 350) and decode at a photograph's speed.
//
//   gpuperf::SyntheticFolderOptions options;
//   options.out = "/tmp/fake-imagenet";
//   options.classes = 10;
//   options.images_per_class = 100;
//   const gpuperf::SyntheticFolderReport report = gpuperf::write_synthetic_folder(options);
//   std::cout << report.mean_file_bytes << " bytes per file\n";

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/input/image_file.h"
#include "gpuperf/input/jpeg_decoder.h"
#include "gpuperf/input/jpeg_encoder.h"

namespace gpuperf {

/// A natural-looking RGB picture of `width` x `height` from `seed`: a gradient between two
/// colours, 3 to 8 soft-edged ellipses and rectangles, and value noise in octaves from 64 to 2
/// pixels with amplitude falling with frequency. Width and height >= 1.
[[nodiscard]] RgbImage synthetic_image(int width, int height, std::uint64_t seed);

/// The size of image `index` of a folder generated from `seed`: ImageNet-like (widths about
/// 200 to 800, mean near 410; aspect ratios mostly 4:3, also 3:2, 1:1, 3:4, 16:9).
[[nodiscard]] ImageSize synthetic_image_size(std::uint64_t seed, std::int64_t index);

/// What write_synthetic_folder() writes.
struct SyntheticFolderOptions {
  std::string out;            ///< the folder to create (must not exist, or be empty)
  int classes = 10;           ///< class folders class_0000, class_0001, ...
  int images_per_class = 10;  ///< files per class, class_XXXX_NNNNNN.JPEG
  std::uint64_t seed = 0;     ///< everything written follows from it
  int quality = 90;           ///< libjpeg quality, 1..100
  bool bad_files = false;     ///< also plant_bad_files() into the folder

  /// Throws ConfigError naming the first bad field: out not empty, classes 1..100000,
  /// images_per_class 1..1000000, quality 1..100.
  void validate() const;
};

/// What write_synthetic_folder() wrote.
struct SyntheticFolderReport {
  std::int64_t files = 0;      ///< JPEG files written (planted bad files not counted)
  std::int64_t bytes = 0;      ///< their total size
  double mean_file_bytes = 0;  ///< bytes / files
  double mean_width = 0;       ///< pixels
  double mean_height = 0;      ///< pixels
  std::int64_t planted = 0;    ///< bad-input files planted
};

/// Writes the folder. Throws ConfigError (bad options, an `out` that exists and is not an empty
/// folder: nothing is written then) or IoError (a failed write).
SyntheticFolderReport write_synthetic_folder(const SyntheticFolderOptions& options);

/// One planted file and what a loader must make of it.
struct PlantedFile {
  std::string path;       ///< the file
  std::string case_name;  ///< "truncated", "png named .jpg", ...
  /// The reason it is skipped; none when it must decode (CMYK, grayscale, progressive, corrupt
  /// scan data that libjpeg decodes past with warnings).
  std::optional<BadImageReason> expected;
  bool expect_warnings = false;  ///< decodes, but libjpeg warns
};

/// `jpeg` without its marker segments of type `marker` (0xDB: the quantization tables, 0xC4: the
/// Huffman tables) before the first scan.
[[nodiscard]] std::vector<std::uint8_t> without_jpeg_segments(const std::vector<std::uint8_t>& jpeg,
                                                              std::uint8_t marker);

/// Writes the bad-input cases into `class_folder` (which must exist) and an empty class folder
/// `empty_class_folder` (created; "" for none): a truncated JPEG, one with a corrupt header, one
/// without quantization tables, one with corrupt scan data, CMYK (Adobe), grayscale, progressive,
/// a PNG named .jpg, a zero-byte file, a header claiming 20000 x 20000 pixels, and a dangling
/// symbolic link (unreadable).
/// Returns them with the expected outcome. Throws IoError when a write fails.
std::vector<PlantedFile> plant_bad_files(const std::string& class_folder, std::uint64_t seed,
                                         const std::string& empty_class_folder = "");

}  // namespace gpuperf
