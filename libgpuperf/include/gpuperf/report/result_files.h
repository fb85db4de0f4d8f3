#pragma once
// Reading result files (RunRecord JSON) for the compare, report and advise programs. Reading
// never writes: a result file is opened read-only and left as it was.
//
//   auto runs = gpuperf::load_result_files({"h200.json", "a100.json"});
//   for (const auto& run : runs) std::cout << run.path << ": " << run.record.device.name << "\n";

#include <string>
#include <vector>

#include "gpuperf/report/run_record.h"

namespace gpuperf {

/// A run record and the file it came from.
struct LoadedRun {
  std::string path;
  RunRecord record;
};

/// Reads one result file. Throws IoError "<path>: ..." naming the file and, for malformed
/// content, the field.
[[nodiscard]] LoadedRun load_result_file(const std::string& path);
/// Reads several result files; ConfigError when `paths` is empty.
[[nodiscard]] std::vector<LoadedRun> load_result_files(const std::vector<std::string>& paths);

}  // namespace gpuperf
