// Result-file loading with the file name in every error.
#include "gpuperf/report/result_files.h"

#include "gpuperf/error.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {

LoadedRun load_result_file(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return {path, run_record_from_json(text)};
  } catch (const Error& e) {
    throw IoError(path + ": " + e.what());
  } catch (const std::exception& e) {
    // nlohmann throws type or range errors for values the reader's checks let through.
    throw IoError(path + ": run record: " + e.what());
  }
}

std::vector<LoadedRun> load_result_files(const std::vector<std::string>& paths) {
  if (paths.empty()) throw ConfigError("no result files given");
  std::vector<LoadedRun> runs;
  runs.reserve(paths.size());
  for (const auto& path : paths) runs.push_back(load_result_file(path));
  return runs;
}

}  // namespace gpuperf
