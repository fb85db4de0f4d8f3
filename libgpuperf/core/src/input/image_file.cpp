// Reading image files. POSIX open/read rather than iostreams: one fstat for the size, one read
// into a buffer the caller reuses, and errno for the reason a file cannot be read.
#include "gpuperf/input/image_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace gpuperf {
namespace {

bool starts_with(const std::uint8_t* data, std::size_t size, const char* magic, std::size_t n,
                 std::size_t offset = 0) {
  return size >= offset + n && std::memcmp(data + offset, magic, n) == 0;
}

// Closes a descriptor on every path out.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string to_string(BadImageReason reason) {
  switch (reason) {
    case BadImageReason::kUnreadable:
      return "unreadable";
    case BadImageReason::kEmpty:
      return "empty file";
    case BadImageReason::kNotJpeg:
      return "not a JPEG";
    case BadImageReason::kTruncated:
      return "truncated";
    case BadImageReason::kCorrupt:
      return "corrupt";
    case BadImageReason::kTooManyPixels:
      return "too many pixels";
    case BadImageReason::kUnsupported:
      return "unsupported";
  }
  return "?";
}

BadImageError::BadImageError(std::string path, BadImageReason reason, std::string detail)
    : IoError((path.empty() ? std::string() : path + ": ") + to_string(reason) +
              (detail.empty() ? std::string() : " (" + detail + ")")),
      path_(std::move(path)),
      reason_(reason),
      detail_(std::move(detail)) {}

BadImageError BadImageError::with_path(const std::string& path) const {
  return BadImageError(path, reason_, detail_);
}

std::string sniff_image_format(const std::uint8_t* data, std::size_t size) {
  if (starts_with(data, size, "\xFF\xD8\xFF", 3)) return "JPEG";
  if (starts_with(data, size, "\x89PNG\r\n\x1A\n", 8)) return "PNG";
  if (starts_with(data, size, "GIF87a", 6) || starts_with(data, size, "GIF89a", 6)) return "GIF";
  if (starts_with(data, size, "BM", 2)) return "BMP";
  if (starts_with(data, size, "RIFF", 4) && starts_with(data, size, "WEBP", 4, 8)) return "WebP";
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4)) return "TIFF";
  if (starts_with(data, size, "\0\0\0\x0CjP  ", 8) ||
      starts_with(data, size, "\xFF\x4F\xFF\x51", 4)) {
    return "JPEG 2000";
  }
  return "";
}

void check_jpeg_signature(const std::uint8_t* data, std::size_t size) {
  if (size == 0) throw BadImageError("", BadImageReason::kEmpty, "0 bytes");
  const std::string format = sniff_image_format(data, size);
  if (format == "JPEG") return;
  if (!format.empty()) throw BadImageError("", BadImageReason::kNotJpeg, format + " signature");
  std::string hex;
  for (std::size_t i = 0; i < size && i < 4; ++i) {
    char byte[4];
    std::snprintf(byte, sizeof byte, "%02x", data[i]);
    hex += byte;
  }
  throw BadImageError("", BadImageReason::kNotJpeg, "unknown signature " + hex);
}

void read_image_file(const std::string& path, std::vector<std::uint8_t>& bytes) {
  const auto unreadable = [&](int error) {
    return BadImageError(path, BadImageReason::kUnreadable, std::strerror(error));
  };
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) throw unreadable(errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) throw unreadable(errno);
  if (!S_ISREG(info.st_mode)) {
    throw BadImageError(path, BadImageReason::kUnreadable, "not a regular file");
  }
  bytes.resize(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw unreadable(errno);
    if (got == 0) break;  // the file shrank since fstat: what was read is the file
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  try {
    check_jpeg_signature(bytes.data(), bytes.size());
  } catch (const BadImageError& e) {
    throw e.with_path(path);
  }
}

// Two looks (image_file.h): backwards from the end, an EOI before any start of scan (FF DA); then
// forwards, walking the markers (segments skipped by their length, entropy-coded data scanned for
// the next marker).
bool has_jpeg_end_marker(const std::uint8_t* data, std::size_t size) {
  for (std::size_t i = size; i >= 2; --i) {
    if (data[i - 2] != 0xFF) continue;
    if (data[i - 1] == 0xD9) return true;
    if (data[i - 1] == 0xDA) break;
  }
  std::size_t i = 2;  // after SOI
  while (i + 1 < size) {
    if (data[i] != 0xFF) {
      const void* next = std::memchr(data + i, 0xFF, size - i);
      if (next == nullptr) return false;
      i = static_cast<std::size_t>(static_cast<const std::uint8_t*>(next) - data);
      continue;
    }
    const std::uint8_t marker = data[i + 1];
    if (marker == 0xD9) return true;
    if (marker == 0xFF) {  // fill byte
      ++i;
    } else if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
      i += 2;  // stuffed byte, TEM, restart, stray SOI: no length
    } else {
      if (i + 3 >= size) return false;
      i += 2 + ((static_cast<std::size_t>(data[i + 2]) << 8) | data[i + 3]);
    }
  }
  return false;
}

}  // namespace gpuperf
