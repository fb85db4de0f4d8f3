#pragma once
// Reading an image file and saying why it cannot be used: the part of the input pipeline that a
// CPU decoder and a GPU (nvJPEG) decoder share. A file that cannot become a training sample is
// a BadImageError with a reason; the loader skips it (or, strict, stops on it) and never gives a
// sample a label that is not its own.
//
//   std::vector<std::uint8_t> bytes;
//   try {
//     gpuperf::read_image_file(path, bytes);        // unreadable, empty, not a JPEG -> throws
//     ...decode...
//   } catch (const gpuperf::BadImageError& e) {
//     std::cerr << e.path() << ": " << gpuperf::to_string(e.reason()) << "\n";
//   }

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"

namespace gpuperf {

/// Why a file gives no sample.
enum class BadImageReason {
  kUnreadable,     ///< cannot be opened or read (permission, dangling link, a folder)
  kEmpty,          ///< zero bytes
  kNotJpeg,        ///< no JPEG start-of-image marker (the format, when known, in the detail)
  kTruncated,      ///< the data ends before the image does (libjpeg's premature end warning)
  kCorrupt,        ///< libjpeg refused the data
  kTooManyPixels,  ///< width * height above the pixel limit (a decompression bomb)
  kUnsupported,    ///< a valid JPEG this decoder does not convert (e.g. an unknown colour space)
};

/// "unreadable", "empty file", "not a JPEG", "truncated", "corrupt", "too many pixels",
/// "unsupported".
[[nodiscard]] std::string to_string(BadImageReason reason);

/// A file that gives no sample. An IoError, so programs exit with 2 on it in strict mode; what()
/// reads "<path>: <reason>: <detail>" ("a.jpg: not a JPEG: PNG signature").
class BadImageError : public IoError {
 public:
  /// `path` may be empty when the bytes came from memory (the loader adds it).
  BadImageError(std::string path, BadImageReason reason, std::string detail);
  /// The file ("" for bytes from memory).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Why it gives no sample.
  [[nodiscard]] BadImageReason reason() const noexcept { return reason_; }
  /// What the reader or libjpeg said ("PNG signature", "Premature end of JPEG file").
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }
  /// The same error naming `path`.
  [[nodiscard]] BadImageError with_path(const std::string& path) const;

 private:
  std::string path_;
  BadImageReason reason_;
  std::string detail_;
};

/// The format a file's first bytes announce, for messages: "JPEG", "PNG", "GIF", "BMP", "WebP",
/// "TIFF", "JPEG 2000", or "" when unknown.
[[nodiscard]] std::string sniff_image_format(const std::uint8_t* data, std::size_t size);

/// Throws BadImageError kEmpty for no bytes and kNotJpeg ("PNG signature", "unknown signature
/// ff00aa...") unless the bytes start with the SOI marker and a marker (FF D8 FF): the check
/// by content, since a PNG named .jpg is common in scraped data sets.
void check_jpeg_signature(const std::uint8_t* data, std::size_t size);

/// Whether the data has an EOI marker (FF D9) where a complete JPEG has one: an EOI before any
/// start of scan (FF DA) looking backwards from the end (a file cut inside its entropy-coded data
/// has none, as markers there are escaped, while corrupt bytes in the middle do not matter), or
/// else an EOI found walking the markers forwards (segments skipped by their length, so an EXIF
/// thumbnail's own EOI is not taken): the file with bytes appended after its end, as some cameras
/// write it. libjpeg notices a missing end only when it reads that far, which a crop of the top
/// rows does not: this makes "truncated" a property of the file, not of the crop.
[[nodiscard]] bool has_jpeg_end_marker(const std::uint8_t* data, std::size_t size);

/// Reads the whole file into `bytes` (its capacity reused between calls) and checks its
/// signature (check_jpeg_signature). Throws BadImageError (kUnreadable with the system's
/// message, kEmpty, kNotJpeg) naming `path`.
void read_image_file(const std::string& path, std::vector<std::uint8_t>& bytes);

}  // namespace gpuperf
