// Result-file loading with the file name in every error.
#include "gpuperf/report/result_files.h"

#include "base/json.h"

#include <nlohmann/json.hpp>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {
namespace {

// The error for a file whose schema is neither kind of result.
IoError unknown_schema(const std::string& path, const std::string& schema) {
  return IoError(path + ": field 'schema' is '" + schema + "', expected '" + RunRecord::kSchema +
                 "' (training) or '" + kInferenceSchema + "' (inference)");
}

// Runs a reader with the file name in front of its errors.
template <typename Read>
auto read_named(const std::string& path, const std::string& what, Read read) {
  try {
    return read();
  } catch (const Error& e) {
    throw IoError(path + ": " + e.what());
  } catch (const std::exception& e) {
    // nlohmann throws type or range errors for values the reader's checks let through.
    throw IoError(path + ": " + what + ": " + e.what());
  }
}

// The schema tag of a JSON document, or "" when it has none (the readers then say what is
// wrong). Only a peek: the document is parsed again by its reader.
std::string schema_of(const std::string& text) {
  nlohmann::json parsed;
  try {
    parsed = detail::parse_json(text, "result");  // with the depth and size limits
  } catch (const IoError&) {
    return "";  // the reader of the kind it claims to be says what is wrong
  }
  if (!parsed.is_object()) return "";
  const auto it = parsed.find("schema");
  return it != parsed.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

LoadedRun load_result_file(const std::string& path) {
  const std::string text = read_text_file(path);
  return {path, read_named(path, "run record", [&] { return from_json<RunRecord>(text); })};
}

std::vector<LoadedRun> load_result_files(const std::vector<std::string>& paths) {
  if (paths.empty()) throw ConfigError("no result files given");
  std::vector<LoadedRun> runs;
  runs.reserve(paths.size());
  for (const auto& path : paths) runs.push_back(load_result_file(path));
  return runs;
}

LoadedResults load_results(const std::vector<std::string>& paths) {
  if (paths.empty()) throw ConfigError("no result files given");
  LoadedResults out;
  for (const auto& path : paths) {
    const std::string text = read_text_file(path);
    const std::string schema = schema_of(text);
    if (schema == kInferenceSchema || schema == kInferenceSchemaV2 ||
        schema == kInferenceSchemaV1) {
      out.inference.push_back({path, read_named(path, "inference result",
                                                [&] { return from_json<InferenceResult>(text); })});
    } else if (schema == RunRecord::kSchema || schema.empty()) {
      out.runs.push_back(
          {path, read_named(path, "run record", [&] { return from_json<RunRecord>(text); })});
    } else {
      throw unknown_schema(path, schema);
    }
  }
  return out;
}

}  // namespace gpuperf
