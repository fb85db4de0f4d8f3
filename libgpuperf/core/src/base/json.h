#pragma once
// The JSON reader of every gpuperf document (results, spec database, published results) and the
// pieces the writers share. Private to gpuperf::core.

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/fingerprint.h"

namespace gpuperf::detail {

/// A number, or null for NaN ("not available").
[[nodiscard]] nlohmann::json json_number(double value);
/// The "device" object of a record.
[[nodiscard]] nlohmann::json device_json(const DeviceFingerprint& device);

/// Reads the fields of one JSON object; every error is an IoError "<what>: field '<path>' ...".
class JsonReader {
 public:
  /// `what` names the document in errors ("run record"); `path` is the object's field path.
  JsonReader(const nlohmann::json& object, std::string what, std::string path);

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const;
  [[nodiscard]] const nlohmann::json& at(const char* key) const;
  [[nodiscard]] std::string field(const char* key) const;
  [[nodiscard]] bool has(const char* key) const { return object_.contains(key); }

  /// A number; null reads as NaN.
  [[nodiscard]] double number(const char* key) const;
  [[nodiscard]] std::int64_t integer(const char* key) const;
  [[nodiscard]] std::string string(const char* key) const;
  [[nodiscard]] bool boolean(const char* key) const;
  [[nodiscard]] std::vector<double> numbers(const char* key) const;
  [[nodiscard]] std::vector<std::int64_t> integers(const char* key) const;
  [[nodiscard]] std::vector<std::string> strings(const char* key) const;
  [[nodiscard]] JsonReader child(const char* key) const;
  /// The reader of element `index` of the array `key` (which must be an array of objects).
  [[nodiscard]] JsonReader element(const char* key, std::size_t index) const;

 private:
  const nlohmann::json& object_;
  std::string what_;
  std::string path_;
};

/// Reads a "device" object written by device_json().
[[nodiscard]] DeviceFingerprint read_device(const JsonReader& reader);

/// Parses JSON text; IoError "<what>: not valid JSON: ..." otherwise.
[[nodiscard]] nlohmann::json parse_json(const std::string& text, const std::string& what);

// Field readers for the data files (spec database, published results): ConfigError naming the
// file and the field path, e.g. "gpu_specs.json: gpus[3].peak_tflops.fp32 is not a number".


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

/// Parses a data file's JSON text; throws ConfigError "<origin>: not valid JSON: ..." on a syntax error.
inline nlohmann::json parse_data_json(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // out_of_range too: "1E999" overflows
    throw ConfigError(origin + ": not valid JSON: " + e.what());
  }
}

}  // namespace gpuperf::detail
