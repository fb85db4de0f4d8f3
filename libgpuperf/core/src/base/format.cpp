#include "gpuperf/base/format.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>

namespace gpuperf {

namespace {

// printf's output for one double, whatever its length (%.*f of 1e300 is 301 characters).
std::string print_double(const char* format, int digits, double value) {
  const int length = std::snprintf(nullptr, 0, format, digits, value);
  if (length <= 0) return {};
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, digits, value);
  text.resize(static_cast<std::size_t>(length));
  return text;
}

}  // namespace

std::string format_number(double value, int significant) {
  return print_double("%.*g", significant, value);
}

std::string format_fixed(double value, int decimals) {
  return print_double("%.*f", decimals, value);
}

std::string format_fixed_or(double value, int decimals, const char* absent) {
  return std::isfinite(value) ? format_fixed(value, decimals) : absent;
}

std::string format_grouped(double value) {
  if (!std::isfinite(value)) return "n/a";
  std::string digits = format_fixed(std::abs(value), 0);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return (value < 0 && digits != "0" ? "-" : "") + digits;
}

std::string format_readable(double value, const char* absent) {
  if (!std::isfinite(value)) return absent;
  const double magnitude = std::abs(value);
  if (magnitude >= 100) return format_grouped(value);
  if (magnitude == 0) return "0";
  const int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(magnitude))));
  return format_fixed(value, decimals);
}

std::string format_percent(double fraction, int significant) {
  return std::isfinite(fraction) ? format_number(fraction * 100, significant) + "%" : "n/a";
}

std::string format_ms(double seconds, int decimals) {
  return std::isfinite(seconds) ? format_fixed(seconds * 1e3, decimals) + " ms" : "n/a";
}

std::string format_gb(double bytes) {
  return std::isfinite(bytes) ? format_number(bytes / 1e9, 4) + " GB" : "n/a";
}

std::string format_exact_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  // The largest unit that divides the size exactly: sizes stay exact ("1048572 B", "1536 MiB").
  while (unit < 4 && bytes >= 1024 && std::fmod(bytes, 1024) == 0) {
    bytes /= 1024;
    ++unit;
  }
  return format_fixed(bytes, 0) + " " + units[unit];
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return format_fixed(bytes, unit == 0 ? 0 : 2) + " " + units[unit];
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds >= 3600) {
    const auto minutes = static_cast<long>(std::llround(seconds / 60));
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%ld h %02ld min", minutes / 60, minutes % 60);
    return buffer;
  }
  if (seconds >= 60) return format_fixed(seconds / 60, 1) + " min";
  return format_fixed(seconds, 1) + " s";
}

std::size_t invisible_control_at(const std::string& text, std::size_t i, unsigned* code_point) {
  const auto at = [&](std::size_t k) {
    return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u;
  };
  // C1 controls, U+0080..U+009F: C2 80..C2 9F.
  if (at(i) == 0xC2 && at(i + 1) >= 0x80 && at(i + 1) <= 0x9F) {
    *code_point = at(i + 1);
    return 2;
  }
  if (at(i) != 0xE2) return 0;
  const unsigned cp = 0x2000 + ((at(i + 1) & 0x3Fu) << 6) + (at(i + 2) & 0x3Fu);
  const bool continuation = (at(i + 1) & 0xC0u) == 0x80 && (at(i + 2) & 0xC0u) == 0x80;
  // Marks and overrides that reorder what follows them: U+200E/F, U+202A..E, U+2066..9.
  const bool bidi = (cp >= 0x200E && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
                    (cp >= 0x2066 && cp <= 0x2069);
  if (!continuation || !bidi) return 0;
  *code_point = cp;
  return 3;
}

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    char escaped[16];
    unsigned code_point = 0;
    if (byte < 0x20 || byte == 0x7f) {
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else if (const std::size_t n = invisible_control_at(text, i, &code_point); n > 0) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", code_point);
      out += escaped;
      i += n - 1;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace gpuperf
