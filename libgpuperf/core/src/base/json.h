#pragma once
// The JSON reader of every gpuperf document (results, spec database, published results) and the
// pieces the writers share. Private to gpuperf::core.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/fingerprint.h"

namespace gpuperf::detail {

/// A number, or null for NaN ("not available").
[[nodiscard]] nlohmann::json json_number(double value);
/// The "device" object of a record.
[[nodiscard]] nlohmann::json device_json(const DeviceFingerprint& device);

/// The largest measured quantity a reader accepts, in base units (samples/s, bytes, hertz, watts,
/// joules, seconds): no measurement writes more, and arithmetic on larger values (products,
/// conversions to integers) would overflow in the printers, the comparison and the advisor.
inline constexpr double kMaxQuantity = 1e15;
/// The largest datasheet figure, in its file's unit (GB, GB/s, TFLOP/s, W, USD).
inline constexpr double kMaxFigure = 1e9;
/// The largest count (batch size, iterations, ranks...) a reader accepts: fits an int.
inline constexpr std::int64_t kMaxCount = 2147483647;

/// The one reader of JSON documents: result files, the spec database, published results.
/// Every error is an IoError (a malformed input file) "<what>: field '<path>' <problem>", where
/// `what` names the document ("run record", or a file such as "gpu_specs.json") and `path` is the
/// full field path ("gpus[3] (h100-sxm5-80gb).peak_tflops.fp32", "(top level)" for the document).
class JsonReader {
 public:
  /// `what` names the document in errors; `path` is the object's field path ("" at the top).
  /// IoError unless `object` is a JSON object.
  JsonReader(const nlohmann::json& object, std::string what, std::string path);

  /// Throws IoError "<what>: field '<field>' <problem>"; `field` is a full path (see field()).
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const;
  /// The full path of `key` in this object, or of this object itself when `key` is empty.
  [[nodiscard]] std::string field(const std::string& key) const;
  [[nodiscard]] bool has(const char* key) const { return object_.contains(key); }
  /// The value of `key`; IoError "... is missing" when absent.
  [[nodiscard]] const nlohmann::json& at(const char* key) const;
  /// IoError "... field 'schema' is '<found>', expected '<expected>'" unless the string field
  /// "schema" is `expected`.
  void expect_schema(const std::string& expected) const;
  /// The value of `key`: an array with at least one element (IoError otherwise).
  [[nodiscard]] const nlohmann::json& non_empty_array(const char* key) const;
  [[nodiscard]] const nlohmann::json& object() const { return object_; }
  [[nodiscard]] const std::string& what() const { return what_; }

  /// A number; null reads as NaN.
  [[nodiscard]] double number(const char* key) const;
  [[nodiscard]] std::int64_t integer(const char* key) const;
  [[nodiscard]] std::string string(const char* key) const;
  [[nodiscard]] bool boolean(const char* key) const;
  [[nodiscard]] std::vector<double> numbers(const char* key) const;
  [[nodiscard]] std::vector<std::int64_t> integers(const char* key) const;
  /// An array of strings; an absent key reads as empty unless `required`.
  [[nodiscard]] std::vector<std::string> strings(const char* key, bool required = true) const;
  /// A string, or "" when absent.
  [[nodiscard]] std::string optional_string(const char* key) const;
  /// A boolean, or false when absent.
  [[nodiscard]] bool optional_bool(const char* key) const;

  /// A datasheet figure: a number, null (unknown -> NaN), "none" (no such path -> 0) or a
  /// [low, high] range (-> high, so peaks never overstate efficiency and prices never understate
  /// cost). Negative values and values over kMaxFigure are rejected. Absent reads as NaN unless
  /// `required`.
  [[nodiscard]] double figure(const char* key, bool required) const;
  /// figure() of a value already in hand, `key` naming it in this object.
  [[nodiscard]] double figure_value(const nlohmann::json& value, const std::string& key) const;
  /// Same as figure() but a range yields its midpoint and "none" is rejected.
  [[nodiscard]] double plain_number(const char* key, bool required) const;

  /// A number in [low, high] (`low` itself excluded when `exclusive_low`); null reads as NaN
  /// when `nullable`. IoError "... is <value>, expected <range>" otherwise.
  [[nodiscard]] double number_in(const char* key, double low, double high, bool nullable = true,
                                 bool exclusive_low = false) const;
  /// A number in [0, kMaxQuantity] (a measured size, time, rate, energy...); null reads as NaN
  /// when `nullable`.
  [[nodiscard]] double non_negative(const char* key, bool nullable = true) const {
    return number_in(key, 0, kMaxQuantity, nullable);
  }
  /// A number in (0, kMaxQuantity]; null reads as NaN when `nullable`.
  [[nodiscard]] double positive(const char* key, bool nullable = true) const {
    return number_in(key, 0, kMaxQuantity, nullable, /*exclusive_low=*/true);
  }
  /// An integer in [low, high].
  [[nodiscard]] std::int64_t integer_in(const char* key, std::int64_t low, std::int64_t high) const;
  /// An array of numbers, each in [low, high] (`low` excluded when `exclusive_low`), no nulls.
  [[nodiscard]] std::vector<double> numbers_in(const char* key, double low, double high,
                                               bool exclusive_low = false) const;
  /// An array of numbers in [low, high] or nulls (read as NaN: "not available").
  [[nodiscard]] std::vector<double> nullable_numbers_in(const char* key, double low,
                                                        double high) const;

  [[nodiscard]] JsonReader child(const char* key) const;
  /// The reader of element `index` of the array `key` (which must be an array of objects).
  [[nodiscard]] JsonReader element(const char* key, std::size_t index) const;

  /// `value` as the messages print it ("1.5", "-3").
  [[nodiscard]] static std::string num(double value);

 private:
  void check_non_negative(double value, const std::string& key) const;
  [[nodiscard]] double range(const nlohmann::json& value, const std::string& key,
                             bool midpoint) const;

  const nlohmann::json& object_;
  std::string what_;
  std::string path_;
};

/// Whether `value` is above `bound` by more than the rounding of statistics computed in double (an
/// interpolated quantile, the mean of equal values: a few ulps); false when either is NaN.
[[nodiscard]] inline bool exceeds(double value, double bound) {
  return value - bound > 1e-9 * std::max(std::fabs(value), std::fabs(bound));
}

/// Reads a "device" object written by device_json().
[[nodiscard]] DeviceFingerprint read_device(const JsonReader& reader);

/// The limits parse_json() puts on hostile input: nesting depth (containers inside containers)
/// and text size.
inline constexpr int kMaxJsonDepth = 256;
inline constexpr std::size_t kMaxJsonBytes = std::size_t{64} << 20;

/// Parses JSON text; IoError naming `what` when it is not valid JSON ("<what>: not valid JSON:
/// ..."), nests deeper than kMaxJsonDepth levels, is longer than kMaxJsonBytes or holds a key twice
/// in one object ("<what>: field '<path>' appears twice ...").
[[nodiscard]] nlohmann::json parse_json(const std::string& text, const std::string& what);

}  // namespace gpuperf::detail
