// The JSON reader of every gpuperf document, and the pieces its writers share.
#include "base/json.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf::detail {

using nlohmann::json;

JsonReader::JsonReader(const nlohmann::json& object, std::string what, std::string path)
    : object_(object), what_(std::move(what)), path_(std::move(path)) {
  if (!object_.is_object()) fail(path_, "is not an object");
}

void JsonReader::fail(const std::string& field, const std::string& problem) const {
  throw IoError(what_ + ": field '" + (field.empty() ? std::string("(top level)") : field) + "' " +
                problem);
}

std::string JsonReader::field(const std::string& key) const {
  if (key.empty()) return path_;
  return path_.empty() ? key : path_ + "." + key;
}

const nlohmann::json& JsonReader::at(const char* key) const {
  auto it = object_.find(key);
  if (it == object_.end()) fail(field(key), "is missing");
  return *it;
}

double JsonReader::number(const char* key) const {
  const json& value = at(key);
  if (value.is_null()) return kNotAvailable;
  if (!value.is_number()) fail(field(key), "is not a number");
  return value.get<double>();
}

std::int64_t JsonReader::integer(const char* key) const {
  const json& value = at(key);
  if (!value.is_number_integer()) fail(field(key), "is not an integer");
  return value.get<std::int64_t>();
}

std::string JsonReader::string(const char* key) const {
  const json& value = at(key);
  if (!value.is_string()) fail(field(key), "is not a string");
  return value.get<std::string>();
}

bool JsonReader::boolean(const char* key) const {
  const json& value = at(key);
  if (!value.is_boolean()) fail(field(key), "is not a boolean");
  return value.get<bool>();
}

std::vector<double> JsonReader::numbers(const char* key) const {
  const json& value = at(key);
  if (!value.is_array()) fail(field(key), "is not an array");
  std::vector<double> out;
  out.reserve(value.size());
  for (const json& item : value) {
    if (!item.is_number()) fail(field(key), "holds a non-number");
    out.push_back(item.get<double>());
  }
  return out;
}

std::vector<std::int64_t> JsonReader::integers(const char* key) const {
  const json& value = at(key);
  if (!value.is_array()) fail(field(key), "is not an array");
  std::vector<std::int64_t> out;
  for (const json& item : value) {
    if (!item.is_number_integer()) fail(field(key), "holds a non-integer");
    out.push_back(item.get<std::int64_t>());
  }
  return out;
}

std::vector<std::string> JsonReader::strings(const char* key, bool required) const {
  std::vector<std::string> out;
  if (!required && !has(key)) return out;
  const json& value = at(key);
  if (!value.is_array()) fail(field(key), "is not an array");
  for (const json& item : value) {
    if (!item.is_string()) fail(field(key), "holds a non-string");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::string JsonReader::optional_string(const char* key) const {
  return has(key) ? string(key) : std::string();
}

bool JsonReader::optional_bool(const char* key) const { return has(key) ? boolean(key) : false; }

double JsonReader::figure(const char* key, bool required) const {
  if (!required && !has(key)) return kNotAvailable;
  return figure_value(at(key), key);
}

double JsonReader::figure_value(const nlohmann::json& value, const std::string& key) const {
  if (value.is_null()) return kNotAvailable;
  if (value.is_string()) {
    if (value.get<std::string>() == "none") return 0;
    fail(field(key),
         "is the string '" + value.get<std::string>() + "', expected a number, null or \"none\"");
  }
  if (value.is_array()) {
    if (value.size() != 2 || !value[0].is_number() || !value[1].is_number()) {
      fail(field(key), "is an array but not a [low, high] pair of numbers");
    }
    return range(value, key, /*midpoint=*/false);
  }
  if (!value.is_number()) fail(field(key), "is not a number");
  const double number = value.get<double>();
  check_non_negative(number, key);
  return number;
}

double JsonReader::plain_number(const char* key, bool required) const {
  if (!required && !has(key)) return kNotAvailable;
  const json& value = at(key);
  if (value.is_null()) return kNotAvailable;
  if (value.is_array() && value.size() == 2 && value[0].is_number() && value[1].is_number()) {
    return range(value, key, /*midpoint=*/true);
  }
  if (!value.is_number()) fail(field(key), "is not a number or a [low, high] pair");
  const double number = value.get<double>();
  check_non_negative(number, key);
  return number;
}

double JsonReader::range(const nlohmann::json& value, const std::string& key, bool midpoint) const {
  const double low = value[0].get<double>();
  const double high = value[1].get<double>();
  check_non_negative(low, key);
  check_non_negative(high, key);
  if (low > high) fail(field(key), "range has low " + num(low) + " above high " + num(high));
  return midpoint ? (low + high) / 2 : high;
}

void JsonReader::check_non_negative(double value, const std::string& key) const {
  if (!std::isfinite(value)) fail(field(key), "is not finite");
  if (value < 0) fail(field(key), "is negative (" + num(value) + ")");
  // A figure in GB, GB/s, TFLOP/s, W or USD beyond this is no datasheet's, and times 1e12
  // (TFLOP/s to FLOP/s) it would no longer be a finite double.
  if (value > kMaxFigure) fail(field(key), "is " + num(value) + ", expected <= " + num(kMaxFigure));
}

std::string JsonReader::num(double value) { return format_number(value, 6); }

double JsonReader::number_in(const char* key, double low, double high, bool nullable,
                             bool exclusive_low) const {
  const json& value = at(key);
  if (value.is_null()) {
    if (!nullable) fail(field(key), "is null, expected a number");
    return kNotAvailable;
  }
  if (!value.is_number()) fail(field(key), "is not a number");
  const double number = value.get<double>();
  if (!(exclusive_low ? number > low : number >= low) || !(number <= high)) {
    fail(field(key), "is " + num(number) + ", expected " + (exclusive_low ? "> " : ">= ") +
                         num(low) + " and <= " + num(high));
  }
  return number;
}

std::int64_t JsonReader::integer_in(const char* key, std::int64_t low, std::int64_t high) const {
  const json& value = at(key);
  if (!value.is_number_integer()) fail(field(key), "is not an integer");
  // Above INT64_MAX is out of range too, not a wrapped negative number.
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(high)) {
    fail(field(key), "is " + std::to_string(value.get<std::uint64_t>()) +
                         ", expected <= " + std::to_string(high));
  }
  const std::int64_t number = value.get<std::int64_t>();
  if (number < low || number > high) {
    fail(field(key), "is " + std::to_string(number) + ", expected >= " + std::to_string(low) +
                         " and <= " + std::to_string(high));
  }
  return number;
}

std::vector<double> JsonReader::nullable_numbers_in(const char* key, double low,
                                                    double high) const {
  const json& value = at(key);
  if (!value.is_array()) fail(field(key), "is not an array");
  std::vector<double> out;
  out.reserve(value.size());
  // The element's path is spelled out only for an error.
  const auto at_index = [&] { return field(key) + "[" + std::to_string(out.size()) + "]"; };
  for (const json& item : value) {
    if (item.is_null()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    if (!item.is_number()) fail(at_index(), "is neither a number nor null");
    const double v = item.get<double>();
    if (!(v >= low && v <= high)) {
      fail(at_index(), "is " + num(v) + ", expected >= " + num(low) + " and <= " + num(high));
    }
    out.push_back(v);
  }
  return out;
}

std::vector<double> JsonReader::numbers_in(const char* key, double low, double high,
                                           bool exclusive_low) const {
  std::vector<double> out = numbers(key);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double v = out[i];
    if (!(exclusive_low ? v > low : v >= low) || !(v <= high)) {
      fail(field(key) + "[" + std::to_string(i) + "]", "is " + num(v) + ", expected " +
                                                           (exclusive_low ? "> " : ">= ") +
                                                           num(low) + " and <= " + num(high));
    }
  }
  return out;
}

void JsonReader::expect_schema(const std::string& expected) const {
  const std::string schema = string("schema");
  if (schema != expected) fail(field("schema"), "is '" + schema + "', expected '" + expected + "'");
}

const json& JsonReader::non_empty_array(const char* key) const {
  const json& array = at(key);
  if (!array.is_array()) fail(field(key), "is not an array");
  if (array.empty()) fail(field(key), "is empty");
  return array;
}

JsonReader JsonReader::child(const char* key) const { return {at(key), what_, field(key)}; }

JsonReader JsonReader::element(const char* key, std::size_t index) const {
  const json& array = at(key);
  if (!array.is_array()) fail(field(key), "is not an array");
  return {array.at(index), what_, field(key) + "[" + std::to_string(index) + "]"};
}

DeviceFingerprint read_device(const JsonReader& reader) {
  DeviceFingerprint device;
  device.kind = reader.string("kind");
  device.index = static_cast<int>(reader.integer_in("index", 0, kMaxCount));
  device.name = reader.string("name");
  device.sm_count = static_cast<int>(reader.integer_in("sm_count", 0, kMaxCount));
  device.compute_capability = reader.string("compute_capability");
  device.memory_bytes = reader.non_negative("memory_bytes");
  device.sm_clock_max_hz = reader.non_negative("sm_clock_max_hz");
  device.memory_clock_max_hz = reader.non_negative("memory_clock_max_hz");
  device.power_limit_watts = reader.non_negative("power_limit_watts");
  device.driver_version = reader.string("driver_version");
  device.cuda_driver_api_version = reader.string("cuda_driver_api_version");
  device.cuda_runtime_version = reader.string("cuda_runtime_version");
  device.cudnn_version = reader.string("cudnn_version");
  device.libtorch_version = reader.string("libtorch_version");
  device.gpuperf_version = reader.string("gpuperf_version");
  device.intra_op_threads = static_cast<int>(reader.integer_in("intra_op_threads", 0, kMaxCount));
  device.host = reader.string("host");
  device.host_cpu = reader.optional_string("host_cpu");
  device.host_cores = reader.has("host_cores")
                          ? static_cast<int>(reader.integer_in("host_cores", 0, kMaxCount))
                          : 0;
  return device;
}

namespace {

// What parse_json() knows of the containers open around the parser: enough to refuse a key that
// appears twice in one object (nlohmann keeps only the last, so a second "name" would silently
// turn one device into another) and to name it by its full field path.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(const std::string& what) : what_(what) {}

  void open(bool object) {
    std::string path;
    if (!open_.empty()) path = open_.back().child_path();
    open_.push_back({object, std::move(path), 0, {}, {}});
  }
  void key(const std::string& key) {
    Container& c = open_.back();
    if (!c.keys.insert(key).second) {
      throw IoError(what_ + ": field '" + c.join(key) +
                    "' appears twice in one object (a reader would keep only the last)");
    }
    c.key = key;
  }
  // A value ends: a number, string... or a whole container (after close()).
  void value() {
    if (!open_.empty() && !open_.back().object) ++open_.back().index;
  }
  void close() {
    open_.pop_back();
    value();
  }

 private:
  struct Container {
    bool object;
    std::string path;   // "" at the top, as JsonReader's paths
    std::size_t index;  // of the next element, in an array
    std::unordered_set<std::string> keys;
    std::string key;  // the last key, in an object
    [[nodiscard]] std::string join(const std::string& name) const {
      return path.empty() ? name : path + "." + name;
    }
    [[nodiscard]] std::string child_path() const {
      return object ? join(key) : path + "[" + std::to_string(index) + "]";
    }
  };
  const std::string& what_;
  std::vector<Container> open_;
};

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  if (text.size() > kMaxJsonBytes) {
    throw IoError(what + ": " + std::to_string(text.size()) + " bytes, over the " +
                  std::to_string(kMaxJsonBytes >> 20) + " MiB limit of a JSON document");
  }
  // The parser itself is iterative, but a hostile nesting (100k levels) would crash whatever
  // walks the tree recursively afterwards (dump(), comparisons): refuse it while parsing.
  // `depth` counts the containers around the one that starts, so the outermost one is 0.
  DuplicateKeys keys(what);
  using Event = nlohmann::json::parse_event_t;
  const nlohmann::json::parser_callback_t check = [&what, &keys](int depth, Event event,
                                                                 nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth >= kMaxJsonDepth) {
          throw IoError(what + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels, the limit of a JSON document");
        }
        keys.open(event == Event::object_start);
        break;
      case Event::key:
        keys.key(parsed.get_ref<const std::string&>());
        break;
      case Event::value:
        keys.value();
        break;
      case Event::object_end:
      case Event::array_end:
        keys.close();
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, check);
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number too large for a double throws out_of_range (found by
    // the fuzz tests, tests/fuzz).
    throw IoError(what + ": not valid JSON: " + e.what());
  }
}

nlohmann::json json_number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json device_json(const DeviceFingerprint& d) {
  return {{"kind", d.kind},
          {"index", d.index},
          {"name", d.name},
          {"sm_count", d.sm_count},
          {"compute_capability", d.compute_capability},
          {"memory_bytes", json_number(d.memory_bytes)},
          {"sm_clock_max_hz", json_number(d.sm_clock_max_hz)},
          {"memory_clock_max_hz", json_number(d.memory_clock_max_hz)},
          {"power_limit_watts", json_number(d.power_limit_watts)},
          {"driver_version", d.driver_version},
          {"cuda_driver_api_version", d.cuda_driver_api_version},
          {"cuda_runtime_version", d.cuda_runtime_version},
          {"cudnn_version", d.cudnn_version},
          {"libtorch_version", d.libtorch_version},
          {"gpuperf_version", d.gpuperf_version},
          {"intra_op_threads", d.intra_op_threads},
          {"host", d.host},
          {"host_cpu", d.host_cpu},
          {"host_cores", d.host_cores}};
}

}  // namespace gpuperf::detail
