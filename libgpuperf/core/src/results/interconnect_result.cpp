// Interconnect arithmetic: collective names, nccl-tests' definitions, size sweeps (torch-free).
#include "gpuperf/results/interconnect_result.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// Splits on commas; every item trimmed (empty items are kept, for the caller to reject).
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    items.push_back(
        trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::string collective_choices() {
  std::string out;
  for (Collective c : all_collectives()) out += (out.empty() ? "" : ", ") + to_string(c);
  return out;
}

// "64", "64K", "64KiB", "64KB", "1M", "2G" (binary multiples); 0 when malformed.
double parse_one_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) return 0;
  const double number = std::stod(text.substr(0, digits));
  std::string unit = text.substr(digits);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'I') unit.pop_back();
  if (unit.empty() || unit == "B") return number;
  if (unit == "K") return number * 1024;
  if (unit == "M") return number * 1024 * 1024;
  if (unit == "G") return number * 1024 * 1024 * 1024;
  return 0;
}

}  // namespace

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> collectives = {
      Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter};
  return collectives;
}

std::string to_string(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return "all-reduce";
    case Collective::kAllGather:
      return "all-gather";
    case Collective::kReduceScatter:
      return "reduce-scatter";
  }
  return "unknown";
}

std::vector<Collective> parse_collectives(const std::string& list, const std::string& option) {
  std::vector<Collective> out;
  for (const std::string& item : split_list(list)) {
    std::string key;
    for (const char c : item) {
      if (c != '-' && c != '_')
        key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    bool found = false;
    for (Collective c : all_collectives()) {
      std::string name = to_string(c);
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      if (!key.empty() && key == name) {
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        found = true;
      }
    }
    if (!found) {
      throw ConfigError(option, (item.empty() ? "empty item in '" + list + "'"
                                              : "unknown collective '" + item + "'") +
                                    " (choose from " + collective_choices() + ")");
    }
  }
  return out;
}

double bus_bandwidth_factor(Collective collective, int ranks) {
  if (ranks < 1) {
    throw ConfigError("bus_bandwidth_factor: ranks must be >= 1, got " + std::to_string(ranks));
  }
  const double n = ranks;
  return collective == Collective::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

CollectiveBuffers collective_buffers(Collective collective, double size_bytes, int ranks,
                                     double element_bytes) {
  if (ranks < 1 || !(element_bytes > 0) || !(size_bytes > 0)) {
    throw ConfigError(to_string(collective) + ": size, ranks and element size must be positive");
  }
  // Whole elements for every rank's part: S is a multiple of ranks x element size.
  const double unit = ranks * element_bytes;
  const double parts = std::floor(size_bytes / unit);
  if (parts < 1) {
    throw ConfigError(to_string(collective) + ": a size of " + format_exact_bytes(size_bytes) +
                      " is less than one " + std::to_string(static_cast<int>(element_bytes)) +
                      "-byte element per rank over " + std::to_string(ranks) + " ranks");
  }
  CollectiveBuffers b;
  b.size_bytes = parts * unit;
  const auto whole = static_cast<std::int64_t>(b.size_bytes / element_bytes);
  const std::int64_t part = whole / ranks;
  switch (collective) {
    case Collective::kAllReduce:
      b.input_elements = b.output_elements = whole;
      break;
    case Collective::kAllGather:
      b.input_elements = part;
      b.output_elements = whole;
      break;
    case Collective::kReduceScatter:
      b.input_elements = whole;
      b.output_elements = part;
      break;
  }
  return b;
}

double collective_seconds(const std::vector<double>& rank_seconds, int iterations) {
  if (rank_seconds.empty() || iterations < 1) {
    throw ConfigError("collective_seconds: needs at least one rank and one iteration");
  }
  double slowest = 0;
  for (double s : rank_seconds) {
    if (!(s > 0)) {
      throw ConfigError("collective_seconds: a rank's time must be > 0, got " + std::to_string(s));
    }
    slowest = std::max(slowest, s);
  }
  return slowest / iterations;
}

std::vector<double> parse_byte_sizes(const std::string& text, const std::string& option) {
  std::vector<double> out;
  const auto add = [&](double bytes) {
    if (std::find(out.begin(), out.end(), bytes) == out.end()) out.push_back(bytes);
  };
  for (const std::string& item : split_list(text)) {
    const auto bad = [&](const std::string& why) {
      return ConfigError(option,
                         why + ", got '" + (item.empty() ? text : item) +
                             "' (sizes like 4096, 64K, 1M, 1GiB, or a sweep A..B or A..B:F)");
    };
    if (item.empty()) throw bad("empty item");
    const auto dots = item.find("..");
    if (dots == std::string::npos) {
      const double bytes = parse_one_size(item);
      if (!(bytes > 0)) throw bad("not a size");
      add(bytes);
      continue;
    }
    const auto colon = item.find(':', dots);
    const double first = parse_one_size(trim(item.substr(0, dots)));
    const double last = parse_one_size(trim(
        item.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2)));
    double factor = 2;
    if (colon != std::string::npos) {
      const std::string f = trim(item.substr(colon + 1));
      factor = f.empty() || f.find_first_not_of("0123456789") != std::string::npos || f.size() > 6
                   ? 0
                   : std::stod(f);
    }
    if (!(first > 0) || !(last > 0)) throw bad("not a size");
    if (last < first) throw bad("a sweep must not end below its start");
    if (factor < 2) throw bad("a sweep's factor must be an integer >= 2");
    // Counted in whole steps, not by a floating-point size: first x factor^k, exact for sizes
    // within 2^53 bytes.
    for (int k = 0; first * std::pow(factor, k) <= last; ++k) add(first * std::pow(factor, k));
  }
  return out;
}

}  // namespace gpuperf
