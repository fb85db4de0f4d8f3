#pragma once
// Cross-run comparison: groups result files by workload, computes speedups against a baseline
// and judges each difference: training runs with Welch's t-test on the window throughputs,
// inference results per batch size with a Mann-Whitney U test on the stored per-call latencies
// (or, without them, a percentile rule that says it is one).
//
//   auto results = gpuperf::load_results(paths);       // training and inference files
//   gpuperf::CompareOptions options;
//   options.baseline = "a100.json";                    // a file, or a GPU name like "H100"
//   auto tables = gpuperf::compare_results(results, options, &spec_db);
//   gpuperf::write_comparison(std::cout, tables, gpuperf::TableFormat::kMarkdown);

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
  std::string kernel_fusion = "none";  ///< "none" or what was fused, e.g. "conv+bias+relu"
  int world_size = 1;                  ///< data-parallel ranks (batch_size is per rank)
  std::string interconnect{};          ///< what carried the all-reduce (world_size > 1)
  long long accumulation_steps = 1;    ///< micro-batches a step (gradient accumulation)

  /// "train resnet50 bs256 fp16 channels_last sgd eager" (plus " in 4 micro-batches" with
  /// gradient accumulation, " fused conv+bias+relu" when kernels were fused, and " x2 ranks over
  /// <interconnect>" for data-parallel runs).
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
  std::string method;   ///< the statistic behind the verdict, e.g. "Mann-Whitney U, 200 vs 200"
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

/// Stored per-call latencies each side needs before latency_verdict() uses the rank test.
inline constexpr std::size_t kMinRankTestSamples = 10;

/// Mann-Whitney U test of two samples of per-call latencies (seconds, each at least
/// kMinRankTestSamples): `t` holds z, positive when the candidate's calls tend to be faster;
/// two-sided p from the normal approximation with tie and continuity corrections. "faster" /
/// "slower" when p < alpha and the p50s differ by at least min_change in the direction of z.
[[nodiscard]] Significance mann_whitney_test(const std::vector<double>& baseline,
                                             const std::vector<double>& candidate,
                                             const CompareOptions& options);

/// A verdict from percentiles alone (no per-call samples, no p-value): "faster" when the
/// candidate's p90 is at most the baseline's p50 (nine calls in ten beat the baseline's typical
/// call) and its p50 is at least min_change lower; "slower" mirrored; "same" otherwise.
[[nodiscard]] Significance percentile_verdict(const LatencySummary& baseline,
                                              const LatencySummary& candidate,
                                              const CompareOptions& options);

/// mann_whitney_test() on the stored latencies when both sides have enough, else
/// percentile_verdict(); `method` says which.
[[nodiscard]] Significance latency_verdict(const BatchSizeResult& baseline,
                                           const BatchSizeResult& candidate,
                                           const CompareOptions& options);

/// The key of one batch size of an inference result: workload "inference", no optimizer, graph
/// mode "cuda-graph" when graphs were replayed (else "eager"), the result's kernel fusion.
[[nodiscard]] WorkloadKey inference_workload_key(const InferenceResult& result,
                                                 const BatchSizeResult& batch);

/// One row of the inference comparison: one batch size of one file.
struct InferenceComparisonRow {
  WorkloadKey key;
  std::string path;
  std::string gpu;
  std::string software;
  LatencySummary latency;  ///< per call, seconds
  double throughput = 0;   ///< batch / p50, samples/s
  std::size_t stored_latencies = 0;
  bool is_baseline = false;
  bool has_baseline = false;
  double speedup = 0;  ///< baseline p50 / this p50 (= throughput ratio at one batch size)
  Significance significance;
};

/// Inference rows grouped by workload and batch size (baseline first within a group).
struct InferenceComparison {
  std::string baseline_description;
  double alpha = 0.05;
  double min_change = 0.02;
  std::vector<InferenceComparisonRow> rows;
};

/// Both tables of a set of result files; either may be empty.
struct ResultComparison {
  Comparison training;
  InferenceComparison inference;
};

/// Compares training runs (as compare_runs) and inference results (per batch size) at once. The
/// baseline is a file of either kind or a GPU name; empty: the first file of each kind.
/// ConfigError when there are no results or a named baseline matches none of them.
[[nodiscard]] ResultComparison compare_results(const LoadedResults& results,
                                               const CompareOptions& options,
                                               const SpecDatabase* specs = nullptr);

/// Writes the inference table (plus a legend in Markdown saying which statistic was used).
void write_comparison(std::ostream& out, const InferenceComparison& comparison, TableFormat format);
/// Writes the training table, then the inference table, each only when it has rows; in CSV one
/// table of numbers for both (units in the column names, an empty cell where a kind has no
/// figure, "kind" train or inference).
void write_comparison(std::ostream& out, const ResultComparison& comparison, TableFormat format);

}  // namespace gpuperf
