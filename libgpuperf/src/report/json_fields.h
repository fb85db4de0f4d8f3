#pragma once
// JSON pieces shared by the writers and readers of run records, inference results and
// microbenchmark reports (torch-free).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/report/run_record.h"

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

}  // namespace gpuperf::detail
