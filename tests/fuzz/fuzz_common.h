#pragma once
// What the libFuzzer targets share: the contract every reader of an untrusted file keeps, and the
// consumers that the programs run on whatever a reader accepted.
//
// The contract: any input is either read or refused with a gpuperf::Error (an IoError naming the
// document and field); never a crash, a sanitizer report, a leak, a hang or another exception.
// What a reader accepted must print and export without any exception, compare, render and rank
// without anything but a gpuperf::Error, and be written by its writer into text that the reader
// accepts again, unchanged.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/advise/advisor.h"
#include "gpuperf/base/error.h"
#include "gpuperf/report/compare.h"
#include "gpuperf/report/html_report.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/results/export.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf::fuzz {

/// The input as text.
inline std::string text_of(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Stops the run with a message: libFuzzer saves the input as a crash.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz contract broken: %s\n", what.c_str());
  std::abort();
}

/// The shipped datasheet database and published figures, read once.
inline const SpecDatabase& shipped_specs() {
  static const SpecDatabase db =
      SpecDatabase::load_file(std::string(GPUPERF_FUZZ_DATA_DIR) + "/gpu_specs.json");
  return db;
}
inline const std::vector<PublishedResult>& shipped_published() {
  static const std::vector<PublishedResult> published =
      load_published_results(std::string(GPUPERF_FUZZ_DATA_DIR) + "/published_results.json");
  return published;
}

/// Writes `value` and reads it back with `read`: the reader must accept what its writer wrote, and
/// writing that again must give the same text.
template <typename T, typename Read>
void check_round_trip(const T& value, Read read, const char* what) {
  const std::string written = to_json(value);
  try {
    const T again = read(written);
    if (to_json(again) != written)
      broken(std::string(what) + ": changed in a write/read round trip");
  } catch (const Error& e) {
    broken(std::string(what) + ": the reader refuses what the writer wrote: " + e.what());
  }
}

/// What gpuperf_compare, gpuperf_report and gpuperf_advise do with results: each may refuse with
/// a gpuperf::Error, nothing else.
inline void consume(const LoadedResults& results, const SpecDatabase& db,
                    const std::vector<PublishedResult>& published) {
  std::ostringstream out;
  try {
    const ResultComparison tables = compare_results(results, CompareOptions{}, &db);
    write_comparison(out, tables, TableFormat::kMarkdown);
    write_comparison(out, tables, TableFormat::kCsv);
  } catch (const Error&) {
  }
  try {
    write_results_report(out, results, &db, published);
  } catch (const Error&) {
  }
  for (const WorkloadKind mode : {WorkloadKind::kTrain, WorkloadKind::kInference}) {
    try {
      AdvisorRequest request;
      request.model = "resnet50";
      request.mode = mode;
      request.batch_size = 64;
      request.budget_usd = 1e5;
      if (mode == WorkloadKind::kInference) request.latency_budget_seconds = 0.01;
      write_advice(out, request, advise_with(request, db, results, published));
    } catch (const Error&) {
    }
  }
}

/// consume() with the shipped database and published figures.
inline void consume(const LoadedResults& results) {
  consume(results, shipped_specs(), shipped_published());
}

}  // namespace gpuperf::fuzz
