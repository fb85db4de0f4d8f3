#pragma once
// Field readers for gpuperf's data files (spec database, published results). Every error names
// the file and the field path, e.g. "gpu_specs.json: gpus[3].peak_tflops.fp32 is not a number".

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/error.h"

namespace gpuperf::detail {

/// A JSON object plus the file and path it came from, for error messages.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string origin, std::string path)
      : object_(object), origin_(std::move(origin)), path_(std::move(path)) {
    if (!object_.is_object()) fail("", "is not an object");
  }

  /// Throws ConfigError "<origin>: <path.key> <what>".
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(origin_ + ": " + field(key) + " " + what);
  }

  /// The dotted path of `key`, or of this object when `key` is empty.
  [[nodiscard]] std::string field(const std::string& key) const {
    if (key.empty()) return path_.empty() ? std::string("(top level)") : path_;
    return path_.empty() ? key : path_ + "." + key;
  }

  [[nodiscard]] bool has(const char* key) const { return object_.contains(key); }

  [[nodiscard]] const nlohmann::json& at(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end()) fail(key, "is missing");
    return *it;
  }

  [[nodiscard]] std::string string(const char* key) const {
    const auto& v = at(key);
    if (!v.is_string()) fail(key, "is not a string");
    return v.get<std::string>();
  }

  [[nodiscard]] std::string optional_string(const char* key) const {
    return has(key) ? string(key) : std::string();
  }

  [[nodiscard]] bool optional_bool(const char* key) const {
    if (!has(key)) return false;
    const auto& v = at(key);
    if (!v.is_boolean()) fail(key, "is not a boolean");
    return v.get<bool>();
  }

  [[nodiscard]] std::vector<std::string> strings(const char* key, bool required) const {
    std::vector<std::string> out;
    if (!required && !has(key)) return out;
    const auto& v = at(key);
    if (!v.is_array()) fail(key, "is not an array of strings");
    for (const auto& item : v) {
      if (!item.is_string()) fail(key, "holds a non-string");
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  /// A figure: a number, null (unknown -> NaN), "none" (no such path -> 0) or a [low, high]
  /// range (-> high, so peaks never overstate efficiency and prices never understate cost).
  /// Negative or non-finite values are rejected.
  [[nodiscard]] double figure(const char* key, bool required) const {
    if (!required && !has(key)) return std::numeric_limits<double>::quiet_NaN();
    return figure_value(at(key), key);
  }

  [[nodiscard]] double figure_value(const nlohmann::json& v, const std::string& key) const {
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (v.is_string()) {
      if (v.get<std::string>() == "none") return 0;
      fail(key,
           "is the string '" + v.get<std::string>() + "', expected a number, null or \"none\"");
    }
    if (v.is_array()) {
      if (v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
        fail(key, "is an array but not a [low, high] pair of numbers");
      }
      const double low = v[0].get<double>();
      const double high = v[1].get<double>();
      check_non_negative(low, key);
      check_non_negative(high, key);
      if (low > high) fail(key, "range has low " + num(low) + " above high " + num(high));
      return high;
    }
    if (!v.is_number()) fail(key, "is not a number");
    const double value = v.get<double>();
    check_non_negative(value, key);
    return value;
  }

  /// Same as figure() but a range yields its midpoint and "none" is rejected.
  [[nodiscard]] double plain_number(const char* key, bool required) const {
    if (!required && !has(key)) return std::numeric_limits<double>::quiet_NaN();
    const auto& v = at(key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number()) {
      const double low = v[0].get<double>();
      const double high = v[1].get<double>();
      check_non_negative(low, key);
      check_non_negative(high, key);
      if (low > high) fail(key, "range has low " + num(low) + " above high " + num(high));
      return (low + high) / 2;
    }
    if (!v.is_number()) fail(key, "is not a number or a [low, high] pair");
    const double value = v.get<double>();
    check_non_negative(value, key);
    return value;
  }

  [[nodiscard]] Fields child(const char* key) const { return Fields(at(key), origin_, field(key)); }

  [[nodiscard]] const nlohmann::json& object() const { return object_; }
  [[nodiscard]] const std::string& origin() const { return origin_; }

  static std::string num(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

 private:
  void check_non_negative(double value, const std::string& key) const {
    if (!std::isfinite(value)) fail(key, "is not finite");
    if (value < 0) fail(key, "is negative (" + num(value) + ")");
  }

  const nlohmann::json& object_;
  std::string origin_;
  std::string path_;
};

/// Parses JSON text; throws ConfigError "<origin>: not valid JSON: ..." on a syntax error.
inline nlohmann::json parse_json(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // out_of_range too: "1E999" overflows
    throw ConfigError(origin + ": not valid JSON: " + e.what());
  }
}

}  // namespace gpuperf::detail
