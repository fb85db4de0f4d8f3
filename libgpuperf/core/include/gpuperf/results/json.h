#pragma once
// The results convention, one set of names for every result type (RunRecord, InferenceResult,
// MicroReport):
//
//   std::string text = gpuperf::to_json(result);                  // beside each type
//   auto back = gpuperf::from_json<gpuperf::RunRecord>(text);       // IoError naming the field
//   gpuperf::write_json_file(result, "run.json");                   // atomic: whole or nothing
//   gpuperf::write_text(std::cout, result);                         // the console printer
//
// Readers accept files written by earlier versions of the same schema and say why in comments.

#include <string>

#include "gpuperf/base/files.h"

namespace gpuperf {

/// Reads a result of type T from JSON text written by to_json(const T&); throws IoError naming
/// the field when it is malformed. Specialised beside each result type.
template <typename T>
[[nodiscard]] T from_json(const std::string& text);

/// Writes to_json(value) to `path` atomically (a temporary file renamed over it); IoError.
template <typename T>
void write_json_file(const T& value, const std::string& path) {
  write_text_file_atomically(to_json(value), path);
}

}  // namespace gpuperf
