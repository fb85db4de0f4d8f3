// Microbenchmark settings from option text (results/micro_parse.h).
#include "gpuperf/results/micro_parse.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string dtype_choices() {
  std::string out;
  for (GemmDtype d : all_gemm_dtypes()) out += (out.empty() ? "" : ", ") + to_string(d);
  return out;
}

// Strictly positive decimal integer; no sign, no trailing characters.
bool parse_positive(const std::string& text, std::int64_t& value) {
  if (text.empty() || text.size() > 12 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  value = std::stoll(text);
  return value > 0;
}

}  // namespace

GemmDtype parse_gemm_dtype(const std::string& text, const std::string& option) {
  const std::string key = lower(trim(text));
  for (GemmDtype d : all_gemm_dtypes()) {
    if (key == to_string(d)) return d;
  }
  throw ConfigError(option,
                    "unknown data type '" + text + "' (choose from " + dtype_choices() + ")");
}

std::vector<GemmDtype> parse_gemm_dtypes(const std::string& list, const std::string& option) {
  std::vector<GemmDtype> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (trim(item).empty()) {
      throw ConfigError(option,
                        "empty item in '" + list + "' (choose from " + dtype_choices() + ")");
    }
    const GemmDtype d = parse_gemm_dtype(item, option);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

GemmShape parse_gemm_shape(const std::string& text, const std::string& option) {
  const auto bad = [&] {
    return ConfigError(option, "must be N or MxNxK with positive integers, got '" + text + "'");
  };
  std::vector<std::int64_t> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = text.find_first_of("xX", start);
    std::int64_t value = 0;
    if (!parse_positive(text.substr(start, x == std::string::npos ? std::string::npos : x - start),
                        value)) {
      throw bad();
    }
    parts.push_back(value);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (parts.size() == 1) return {parts[0], parts[0], parts[0]};
  if (parts.size() != 3) throw bad();
  return {parts[0], parts[1], parts[2]};
}

}  // namespace gpuperf
