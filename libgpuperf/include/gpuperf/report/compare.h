#pragma once
// Cross-run comparison: groups result files by workload, computes speedups against a baseline
// and judges each difference with Welch's t-test on the window throughputs.
//
//   auto runs = gpuperf::load_result_files(paths);
//   gpuperf::CompareOptions options;
//   options.baseline = "a100.json";                    // a file, or a GPU name like "H100"
//   auto table = gpuperf::compare_runs(runs, options, &spec_db);
//   gpuperf::write_comparison(std::cout, table, gpuperf::TableFormat::kMarkdown);

#include <ostream>
#include <string>
#include <vector>

#include "gpuperf/report/result_files.h"

namespace gpuperf {

class SpecDatabase;

/// Output format of tables.
enum class TableFormat { kMarkdown, kCsv };

/// Parses "md" / "markdown" / "csv"; ConfigError naming `option` otherwise.
[[nodiscard]] TableFormat parse_table_format(const std::string& text, const std::string& option);

/// How runs are compared.
struct CompareOptions {
  /// A result file path (as given) or a GPU name; empty: the first file is the baseline.
  std::string baseline;
  /// Two-sided significance level of the Welch t-test.
  double alpha = 0.05;
  /// Smallest relative change reported as faster/slower, so that a tiny but significant
  /// difference over many windows still reads "same".
  double min_change = 0.02;

  /// Throws ConfigError naming a field outside (0, 1).
  void validate() const;
};

/// The workload identity that makes runs comparable.
struct WorkloadKey {
  std::string workload, model, precision, memory_format, optimizer, graph_mode;
  long long batch_size = 0;

  /// "train resnet50 bs256 fp16 channels_last sgd eager".
  [[nodiscard]] std::string label() const;
  /// Lexicographic order over all fields.
  bool operator<(const WorkloadKey& other) const;
  /// Equality over all fields.
  bool operator==(const WorkloadKey& other) const;
};

/// The key of a record.
[[nodiscard]] WorkloadKey workload_key(const RunRecord& record);

/// Welch's t-test outcome for "candidate vs baseline".
struct Significance {
  double t = 0;         ///< positive when the candidate is faster
  double dof = 0;       ///< Welch-Satterthwaite degrees of freedom
  double p_value = 1;   ///< two-sided; NaN when not computable
  std::string verdict;  ///< "faster", "slower", "same", "baseline" or "unknown (...)"
};

/// Welch's t-test of two samples of window throughputs (each with at least 2 values).
[[nodiscard]] Significance welch_test(const std::vector<double>& baseline,
                                      const std::vector<double>& candidate,
                                      const CompareOptions& options);

/// One row of the comparison.
struct ComparisonRow {
  WorkloadKey key;
  std::string path;
  std::string gpu;       ///< device name in the record
  std::string software;  ///< "LibTorch 2.11.0, CUDA 13.0" from the fingerprint
  double median = 0;     ///< samples/s, median window
  double ci95_half_width = 0;
  std::size_t windows = 0;
  bool is_baseline = false;
  bool has_baseline = false;  ///< false: the group has no baseline run
  double speedup = 0;         ///< median / baseline median
  Significance significance;
};

/// Rows grouped by workload (groups in key order, baseline first within a group).
struct Comparison {
  std::string baseline_description;
  double alpha = 0.05;  ///< the options the verdicts used
  double min_change = 0.02;
  std::vector<ComparisonRow> rows;
};

/// Builds the comparison. `specs` (optional) lets a GPU-name baseline match device names through
/// the datasheet database; without it the name must appear in the device name. ConfigError when
/// `runs` is empty or the baseline matches no run.
[[nodiscard]] Comparison compare_runs(const std::vector<LoadedRun>& runs,
                                      const CompareOptions& options,
                                      const SpecDatabase* specs = nullptr);

/// Writes the comparison as one table (plus a legend line in Markdown).
void write_comparison(std::ostream& out, const Comparison& comparison, TableFormat format);

/// Quotes a CSV field when it holds a comma, quote or newline.
[[nodiscard]] std::string csv_field(const std::string& text);

}  // namespace gpuperf
