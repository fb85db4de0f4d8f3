#include "gpuperf/base/checkpoint_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

constexpr std::string_view kMagic = "gpuperf.checkpoint/";

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Reads the header's lines one by one, never past the bytes given.
class HeaderReader {
 public:
  HeaderReader(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw IoError("'" + what_ + "': " + message);
  }

  std::string_view line(const char* field) {
    const std::size_t limit = std::min(bytes_.size(), kMaxCheckpointHeaderBytes);
    const std::size_t end = bytes_.find('\n', pos_);
    if (end == std::string_view::npos || end >= limit) {
      fail(std::string("cut or malformed header: no end to its ") + field + " line");
    }
    const std::string_view out = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }

  // "<name> <value>", returning the value.
  std::string_view field(const char* name) {
    const std::string_view text = line(name);
    const std::size_t n = std::strlen(name);
    if (text.size() <= n + 1 || text.compare(0, n, name) != 0 || text[n] != ' ') {
      fail(std::string("malformed header: expected '") + name + " <value>', got '" +
           printable(text) + "'");
    }
    return text.substr(n + 1);
  }

  std::uint64_t decimal(const char* name, std::uint64_t max) {
    const std::string_view text = field(name);
    std::uint64_t value = 0;
    for (char c : text) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (c < '0' || c > '9' || value > max / 10 || digit > max - value * 10) {
        fail(std::string(name) + ": must be a decimal integer <= " + std::to_string(max) +
             ", got '" + printable(text) + "'");
      }
      value = value * 10 + digit;
    }
    return value;
  }

  std::uint64_t hex(const char* name) {
    const std::string_view text = field(name);
    if (text.size() != 16) fail(std::string(name) + ": must be 16 hex digits");
    std::uint64_t value = 0;
    for (char c : text) {
      unsigned digit;
      if (c >= '0' && c <= '9') {
        digit = static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<unsigned>(c - 'a' + 10);
      } else {
        fail(std::string(name) + ": must be 16 lowercase hex digits, got '" + printable(text) +
             "'");
      }
      value = value << 4 | digit;
    }
    return value;
  }

  [[nodiscard]] std::size_t position() const { return pos_; }

  static std::string printable(std::string_view text) {
    std::string out;
    for (char c : text.substr(0, 80)) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f) {
        char escaped[5];
        std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
        out += escaped;
      } else {
        out += c;
      }
    }
    return out;
  }

 private:
  std::string_view bytes_;
  const std::string& what_;
  std::size_t pos_ = 0;
};

}  // namespace

void Fnv1a64::update(const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = hash_;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  hash_ = h;
}

void Fnv1a64::update(std::string_view text) noexcept {
  update(static_cast<std::int64_t>(text.size()));
  update(text.data(), text.size());
}

void Fnv1a64::update(std::int64_t value) noexcept {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(value) >> (8 * i));
  }
  update(bytes, sizeof bytes);
}

std::string encode_checkpoint(const CheckpointHeader& header, std::string_view payload) {
  Fnv1a64 checksum;
  checksum.update(payload.data(), payload.size());
  std::string out = std::string(kMagic) + std::to_string(kCheckpointFormat) + "\n";
  out += "payload_bytes " + std::to_string(payload.size()) + "\n";
  out += "payload_fnv1a64 " + hex64(checksum.value()) + "\n";
  out += "tensors_fnv1a64 " + hex64(header.tensors_checksum) + "\n";
  out += "identity " + std::to_string(header.identity.size()) + "\n";
  for (const auto& [key, value] : header.identity) {
    if (key.empty() || key.find_first_of("\t\n") != std::string::npos ||
        value.find('\n') != std::string::npos) {
      throw ConfigError("checkpoint: the identity line '" + key + "' cannot be written");
    }
    out += key;
    out += '\t';
    out += value;
    out += '\n';
  }
  out += "\n";
  out.append(payload.data(), payload.size());
  return out;
}

CheckpointFile decode_checkpoint(std::string_view bytes, const std::string& what) {
  HeaderReader in(bytes, what);
  if (bytes.compare(0, kMagic.size(), kMagic) != 0) {
    if (bytes.size() >= 4 && bytes.compare(0, 4, std::string_view("PK\x03\x04", 4)) == 0) {
      in.fail(
          "is a checkpoint of format 1 (a bare LibTorch archive without checksums), which "
          "cannot be checked before it is parsed; this gpuperf reads format " +
          std::to_string(kCheckpointFormat) + ": save it again");
    }
    in.fail("is not a gpuperf checkpoint (it does not start with 'gpuperf.checkpoint/')");
  }
  const std::string_view magic = in.line("format");
  const std::string_view format = magic.substr(kMagic.size());
  if (format != std::to_string(kCheckpointFormat)) {
    in.fail("is checkpoint format '" + HeaderReader::printable(format) +
            "'; this gpuperf reads format " + std::to_string(kCheckpointFormat));
  }
  CheckpointFile out;
  const std::uint64_t payload_bytes = in.decimal("payload_bytes", bytes.size());
  const std::uint64_t payload_checksum = in.hex("payload_fnv1a64");
  out.header.tensors_checksum = in.hex("tensors_fnv1a64");
  // Each identity line takes at least 3 bytes: a count above that is a lie, not an allocation.
  const std::uint64_t lines = in.decimal("identity", bytes.size() / 3);
  std::set<std::string_view> keys;
  for (std::uint64_t i = 0; i < lines; ++i) {
    const std::string_view text = in.line("identity");
    const std::size_t tab = text.find('\t');
    if (tab == std::string_view::npos || tab == 0) {
      in.fail("malformed identity line " + std::to_string(i + 1) + ": '" +
              HeaderReader::printable(text) + "'");
    }
    const std::string_view key = text.substr(0, tab);
    if (!keys.insert(key).second) {
      in.fail("identity line " + std::to_string(i + 1) + " repeats '" +
              HeaderReader::printable(key) + "'");
    }
    out.header.identity.emplace_back(std::string(key), std::string(text.substr(tab + 1)));
  }
  if (!in.line("end of header").empty()) in.fail("malformed header: no empty line after it");
  const std::size_t start = in.position();
  const std::size_t have = bytes.size() - start;
  if (have < payload_bytes) {
    in.fail("is cut: its payload has " + std::to_string(have) + " of " +
            std::to_string(payload_bytes) + " bytes");
  }
  if (have > payload_bytes) {
    in.fail("has " + std::to_string(have - payload_bytes) + " bytes after its payload");
  }
  out.payload = bytes.substr(start, payload_bytes);
  Fnv1a64 checksum;
  checksum.update(out.payload.data(), out.payload.size());
  if (checksum.value() != payload_checksum) {
    in.fail("is corrupt: its payload's checksum is " + hex64(checksum.value()) +
            ", the header records " + hex64(payload_checksum));
  }
  return out;
}

std::string identity_mismatch(const CheckpointIdentity& in_file, const CheckpointIdentity& here) {
  const std::size_t n = std::min(in_file.size(), here.size());
  std::size_t i = 0;
  while (i < n && in_file[i] == here[i]) ++i;
  if (i < n) {
    const auto& [file_key, file_value] = in_file[i];
    const auto& [key, value] = here[i];
    if (file_key != key) {
      return "the checkpoint has " + file_key + " where this model has " + key;
    }
    return file_key + " is " + file_value + " in the checkpoint, " + value + " here";
  }
  if (in_file.size() > n) return "the checkpoint has " + in_file[n].first + ", this model has not";
  if (here.size() > n) return "this model has " + here[n].first + ", the checkpoint has not";
  return {};
}

std::string read_binary_file(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw IoError("'" + path + "' is not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    throw IoError("'" + path + "' is larger than " + std::to_string(max_bytes) +
                  " bytes, the limit of this file");
  }
  // One byte more than the size: a file that grows while it is read is still bounded.
  std::string out(static_cast<std::size_t>(size) + 1, '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != size) throw IoError("'" + path + "' changed while it was read");
  out.resize(got);
  return out;
}

}  // namespace gpuperf
