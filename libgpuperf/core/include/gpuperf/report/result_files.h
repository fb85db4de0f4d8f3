#pragma once
// Reading result files for the compare, report and advise programs: training run records
// (gpuperf.run/1) and inference results (gpuperf.inference/3, /2 or /1), told apart by their
// schema field.
// Reading never writes: a result file is opened read-only and left as it was.
//
//   auto results = gpuperf::load_results({"h200-train.json", "h200-infer.json"});
//   for (const auto& run : results.runs) std::cout << run.record.device.name << "\n";
//   for (const auto& inf : results.inference) std::cout << inf.result.batches.size() << "\n";

#include <string>
#include <vector>

#include "gpuperf/results/inference_result.h"
#include "gpuperf/results/run_record.h"

namespace gpuperf {

/// A run record and the file it came from.
struct LoadedRun {
  std::string path;
  RunRecord record;
};

/// An inference result and the file it came from.
struct LoadedInference {
  std::string path;
  InferenceResult result;
};

/// Result files of both kinds, each list in the order the files were given.
struct LoadedResults {
  std::vector<LoadedRun> runs;
  std::vector<LoadedInference> inference;

  [[nodiscard]] bool empty() const { return runs.empty() && inference.empty(); }
};

/// Reads one training result file. Throws IoError "<path>: ..." naming the file and, for
/// malformed content, the field.
[[nodiscard]] LoadedRun load_result_file(const std::string& path);
/// Reads several training result files; ConfigError when `paths` is empty.
[[nodiscard]] std::vector<LoadedRun> load_result_files(const std::vector<std::string>& paths);
/// Reads result files of either kind by their "schema" field. IoError "<path>: ..." for a
/// malformed file or one of neither schema; ConfigError when `paths` is empty.
[[nodiscard]] LoadedResults load_results(const std::vector<std::string>& paths);

}  // namespace gpuperf
