// Cross-run comparison with a Welch t-test verdict.
#include "gpuperf/report/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/results/csv.h"
#include "gpuperf/specs/specs.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string software(const DeviceFingerprint& d) {
  std::string out = "LibTorch " + (d.libtorch_version.empty() ? "?" : d.libtorch_version);
  if (!d.cuda_runtime_version.empty()) out += ", CUDA " + d.cuda_runtime_version;
  return out;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double variance_of(const std::vector<double>& v, double mean) {
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size() - 1);
}

// Whether a result was measured on the GPU the user named as baseline.
bool run_on_gpu(const DeviceFingerprint& d, const std::string& name, const GpuSpec* wanted,
                const SpecDatabase* specs) {
  if (wanted != nullptr && specs != nullptr) {
    const SpecMatch m = specs->match_device(d.name, d.sm_count, d.memory_bytes);
    if (m.spec != nullptr) return m.spec->id == wanted->id;
  }
  return lower(d.name).find(lower(name)) != std::string::npos;
}

// A result file as the baseline rule sees it.
struct BaselineCandidate {
  const std::string* path;
  const DeviceFingerprint* device;
};

// Marks the files options.baseline names: one file given by its path, or every file measured on
// the named GPU. ConfigError when it names none of them.
std::vector<bool> named_baselines(const std::vector<BaselineCandidate>& items,
                                  const CompareOptions& options, const SpecDatabase* specs,
                                  std::string& description) {
  std::vector<bool> is_base(items.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (*items[i].path == options.baseline) is_base[i] = any = true;
  }
  if (any) {
    description = "baseline: " + options.baseline;
    return is_base;
  }
  const GpuSpec* wanted = nullptr;
  if (specs != nullptr) {
    try {
      wanted = &specs->resolve(options.baseline, "baseline");
    } catch (const ConfigError&) {
      wanted = nullptr;  // not in the database: fall back to the device-name substring
    }
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (run_on_gpu(*items[i].device, options.baseline, wanted, specs)) is_base[i] = any = true;
  }
  if (!any) {
    throw ConfigError(
        "CompareOptions::baseline",
        "'" + options.baseline + "' is neither one of the result files nor the GPU of any of them");
  }
  description = "baseline: runs on " + (wanted != nullptr ? wanted->name : options.baseline);
  return is_base;
}

std::vector<BaselineCandidate> candidates_of(const std::vector<LoadedRun>& runs) {
  std::vector<BaselineCandidate> items;
  items.reserve(runs.size());
  for (const auto& run : runs) items.push_back({&run.path, &run.record.device});
  return items;
}

std::vector<BaselineCandidate> candidates_of(const std::vector<LoadedInference>& results) {
  std::vector<BaselineCandidate> items;
  items.reserve(results.size());
  for (const auto& r : results) items.push_back({&r.path, &r.result.fingerprint});
  return items;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

double relative_p50_gain(double baseline_p50, double candidate_p50) {
  return baseline_p50 > 0 ? (baseline_p50 - candidate_p50) / baseline_p50 : kNaN;
}

// Training rows: groups by workload, the group's first baseline run first.
std::vector<ComparisonRow> training_rows(const std::vector<LoadedRun>& runs,
                                         const std::vector<bool>& is_base,
                                         const CompareOptions& options) {
  std::vector<ComparisonRow> rows;
  std::map<WorkloadKey, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) groups[workload_key(runs[i].record)].push_back(i);

  for (const auto& [key, members] : groups) {
    // The group's baseline is its first baseline run; other baseline-GPU runs in the group are
    // compared with it like any other run.
    const std::size_t* base = nullptr;
    for (const std::size_t& i : members) {
      if (is_base[i]) {
        base = &i;
        break;
      }
    }
    std::vector<std::size_t> order = members;
    if (base != nullptr) {
      const std::size_t b = *base;
      std::stable_partition(order.begin(), order.end(), [b](std::size_t i) { return i == b; });
    }
    for (std::size_t i : order) {
      const RunRecord& r = runs[i].record;
      ComparisonRow row;
      row.key = key;
      row.path = runs[i].path;
      row.gpu = r.device.name;
      row.software = software(r.device);
      row.windows = r.window_throughput.size();
      row.median = r.throughput.count > 0 ? r.throughput.median : r.overall_throughput;
      row.ci95_half_width = r.throughput.count > 1 ? r.throughput.ci95_half_width() : kNaN;
      row.has_baseline = base != nullptr;
      if (base != nullptr) {
        const RunRecord& b = runs[*base].record;
        const double b_median = b.throughput.count > 0 ? b.throughput.median : b.overall_throughput;
        row.speedup = b_median > 0 ? row.median / b_median : kNaN;
        if (i == *base) {
          row.is_baseline = true;
          row.significance.verdict = "baseline";
          row.significance.p_value = kNaN;
        } else {
          row.significance = welch_test(b.window_throughput, r.window_throughput, options);
        }
      } else {
        row.speedup = kNaN;
        row.significance.p_value = kNaN;
        row.significance.verdict = "no baseline run";
      }
      rows.push_back(row);
    }
  }
  return rows;
}

// Inference rows: one per (file, batch size), grouped by workload key (which holds the batch).
std::vector<InferenceComparisonRow> inference_rows(const std::vector<LoadedInference>& results,
                                                   const std::vector<bool>& is_base,
                                                   const CompareOptions& options) {
  struct Member {
    std::size_t file;
    const BatchSizeResult* batch;
  };
  std::map<WorkloadKey, std::vector<Member>> groups;
  for (std::size_t i = 0; i < results.size(); ++i) {
    for (const auto& b : results[i].result.batches) {
      groups[inference_workload_key(results[i].result, b)].push_back({i, &b});
    }
  }
  std::vector<InferenceComparisonRow> rows;
  for (const auto& [key, members] : groups) {
    std::vector<Member> order = members;
    const auto first_base =
        std::find_if(order.begin(), order.end(), [&](const Member& m) { return is_base[m.file]; });
    const bool has_base = first_base != order.end();
    if (has_base) std::rotate(order.begin(), first_base, first_base + 1);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const LoadedInference& file = results[order[k].file];
      const BatchSizeResult& b = *order[k].batch;
      InferenceComparisonRow row;
      row.key = key;
      row.path = file.path;
      row.gpu = file.result.fingerprint.name;
      row.software = software(file.result.fingerprint);
      row.latency = b.latency;
      row.throughput = b.throughput_median;
      row.stored_latencies = b.latencies.size();
      row.has_baseline = has_base;
      row.significance.p_value = kNaN;
      if (!has_base) {
        row.speedup = kNaN;
        row.significance.verdict = "no baseline run";
      } else if (k == 0) {
        row.is_baseline = true;
        row.speedup = 1;
        row.significance.verdict = "baseline";
      } else {
        const BatchSizeResult& base = *order[0].batch;
        row.speedup = b.latency.p50 > 0 ? base.latency.p50 / b.latency.p50 : kNaN;
        row.significance = latency_verdict(base, b, options);
      }
      rows.push_back(row);
    }
  }
  return rows;
}

std::string md_cell(const std::string& s) {
  // A pipe would end the cell early, a line break the row.
  std::string escaped;
  for (char ch : printable(s)) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return escaped;
}

// One Markdown table: a header, right-aligned numeric columns, then the rows.
void write_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<bool>& numeric,
                 const std::vector<std::vector<std::string>>& rows) {
  out << "|";
  for (const auto& h : header) out << " " << h << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << (numeric[i] ? "---:|" : "---|");
  out << "\n";
  for (const auto& v : rows) {
    out << "|";
    for (const auto& cell : v) out << " " << md_cell(cell) << " |";
    out << "\n";
  }
}

}  // namespace

TableFormat parse_table_format(const std::string& text, const std::string& option) {
  if (text == "md" || text == "markdown") return TableFormat::kMarkdown;
  if (text == "csv") return TableFormat::kCsv;
  throw ConfigError(option + ": unknown format '" + text + "' (expected md or csv)");
}

void CompareOptions::validate() const {
  if (!(alpha > 0 && alpha < 1)) {
    throw ConfigError("compare option alpha must be in (0, 1), got " + format_fixed_or(alpha, 4));
  }
  if (!(min_change >= 0 && min_change < 1)) {
    throw ConfigError("compare option min_change must be in [0, 1), got " +
                      format_fixed_or(min_change, 4));
  }
}

std::string WorkloadKey::label() const {
  std::string out = workload + " " + model + " bs" + std::to_string(batch_size) +
                    micro_batches_text(accumulation_steps);
  for (const std::string* part : {&precision, &memory_format, &optimizer, &graph_mode}) {
    if (!part->empty()) out += " " + *part;  // inference has no optimizer
  }
  if (!kernel_fusion.empty() && kernel_fusion != "none") out += " fused " + kernel_fusion;
  if (world_size > 1) out += " x" + std::to_string(world_size) + " ranks over " + interconnect;
  return out;
}

bool WorkloadKey::operator<(const WorkloadKey& o) const {
  return std::tie(workload, model, batch_size, accumulation_steps, precision, memory_format,
                  optimizer, graph_mode, kernel_fusion, world_size,
                  interconnect) < std::tie(o.workload, o.model, o.batch_size, o.accumulation_steps,
                                           o.precision, o.memory_format, o.optimizer, o.graph_mode,
                                           o.kernel_fusion, o.world_size, o.interconnect);
}

bool WorkloadKey::operator==(const WorkloadKey& o) const { return !(*this < o) && !(o < *this); }

WorkloadKey workload_key(const RunRecord& r) {
  const RunConfig& c = r.config;
  return {c.workload,
          c.model,
          c.precision,
          c.memory_format,
          c.optimizer,
          c.graph_mode,
          static_cast<long long>(c.batch_size),
          c.kernel_fusion,
          r.distributed.world_size,
          r.distributed.world_size > 1 ? r.distributed.interconnect : std::string(),
          static_cast<long long>(c.accumulation_steps)};
}

Significance welch_test(const std::vector<double>& baseline, const std::vector<double>& candidate,
                        const CompareOptions& options) {
  Significance s;
  if (baseline.size() < 2 || candidate.size() < 2) {
    s.p_value = kNaN;
    s.verdict = "unknown (fewer than 2 windows)";
    return s;
  }
  const double ma = mean_of(baseline);
  const double mb = mean_of(candidate);
  const double va = variance_of(baseline, ma) / static_cast<double>(baseline.size());
  const double vb = variance_of(candidate, mb) / static_cast<double>(candidate.size());
  const double relative = ma != 0 ? (mb - ma) / std::abs(ma) : kNaN;
  const double se2 = va + vb;
  if (!(se2 > 0)) {
    // Both samples constant: the difference is exact, only its size decides.
    s.p_value = mb == ma ? 1 : 0;
    s.t = mb == ma ? 0 : std::copysign(std::numeric_limits<double>::infinity(), mb - ma);
  } else {
    s.t = (mb - ma) / std::sqrt(se2);
    const double na = static_cast<double>(baseline.size());
    const double nb = static_cast<double>(candidate.size());
    s.dof = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
    s.p_value = 2 * (1 - student_t_cdf(std::abs(s.t), s.dof));
  }
  if (s.p_value < options.alpha && std::abs(relative) >= options.min_change) {
    s.verdict = relative > 0 ? "faster" : "slower";
  } else {
    s.verdict = "same";
  }
  return s;
}

Comparison compare_runs(const std::vector<LoadedRun>& runs, const CompareOptions& options,
                        const SpecDatabase* specs) {
  options.validate();
  if (runs.empty()) throw ConfigError("compare: no result files given");
  Comparison out;
  out.alpha = options.alpha;
  out.min_change = options.min_change;
  // Decide which runs are baselines: one file, or every run on the named GPU.
  std::vector<bool> is_base(runs.size(), false);
  if (options.baseline.empty()) {
    is_base[0] = true;
    out.baseline_description = "baseline: " + runs[0].path + " (first file)";
  } else {
    is_base = named_baselines(candidates_of(runs), options, specs, out.baseline_description);
  }
  out.rows = training_rows(runs, is_base, options);
  return out;
}

ResultComparison compare_results(const LoadedResults& results, const CompareOptions& options,
                                 const SpecDatabase* specs) {
  options.validate();
  if (results.empty()) throw ConfigError("compare: no result files given");
  ResultComparison out;
  out.training.alpha = out.inference.alpha = options.alpha;
  out.training.min_change = out.inference.min_change = options.min_change;
  std::vector<bool> train_base(results.runs.size(), false);
  std::vector<bool> infer_base(results.inference.size(), false);
  if (options.baseline.empty()) {
    // The first file of each kind: a training run is never the baseline of an inference one.
    if (!results.runs.empty()) {
      train_base[0] = true;
      out.training.baseline_description = "baseline: " + results.runs[0].path + " (first file)";
    }
    if (!results.inference.empty()) {
      infer_base[0] = true;
      out.inference.baseline_description =
          "baseline: " + results.inference[0].path + " (first inference file)";
    }
  } else {
    std::vector<BaselineCandidate> items = candidates_of(results.runs);
    const auto inference_items = candidates_of(results.inference);
    items.insert(items.end(), inference_items.begin(), inference_items.end());
    std::string description;
    const std::vector<bool> all = named_baselines(items, options, specs, description);
    std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(train_base.size()),
              train_base.begin());
    std::copy(all.begin() + static_cast<std::ptrdiff_t>(train_base.size()), all.end(),
              infer_base.begin());
    out.training.baseline_description = out.inference.baseline_description = description;
  }
  out.training.rows = training_rows(results.runs, train_base, options);
  out.inference.rows = inference_rows(results.inference, infer_base, options);
  return out;
}

Significance mann_whitney_test(const std::vector<double>& baseline,
                               const std::vector<double>& candidate,
                               const CompareOptions& options) {
  Significance s;
  s.method = "Mann-Whitney U, " + std::to_string(baseline.size()) + " vs " +
             std::to_string(candidate.size()) + " calls";
  if (baseline.size() < kMinRankTestSamples || candidate.size() < kMinRankTestSamples) {
    s.p_value = kNaN;
    s.verdict = "unknown (fewer than " + std::to_string(kMinRankTestSamples) + " latencies)";
    return s;
  }
  // Ranks of the pooled sample, ties sharing their average rank.
  std::vector<std::pair<double, bool>> pooled;  // (latency, is candidate)
  pooled.reserve(baseline.size() + candidate.size());
  for (double v : baseline) pooled.emplace_back(v, false);
  for (double v : candidate) pooled.emplace_back(v, true);
  std::sort(pooled.begin(), pooled.end());
  const double n1 = static_cast<double>(baseline.size());
  const double n2 = static_cast<double>(candidate.size());
  const double n = n1 + n2;
  double candidate_rank_sum = 0;
  double tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    const double ties = static_cast<double>(j - i);
    tie_term += ties * ties * ties - ties;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) candidate_rank_sum += average_rank;
    }
    i = j;
  }
  // U of the candidate: pairs in which the candidate's call is the slower one (ties count half).
  const double u = candidate_rank_sum - n2 * (n2 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  const double shift = mean - u;  // > 0: the candidate's calls tend to be faster
  if (!(variance > 0)) {
    s.p_value = 1;  // every latency equal
  } else {
    s.t = std::copysign(std::max(std::abs(shift) - 0.5, 0.0), shift) / std::sqrt(variance);
    s.p_value = std::erfc(std::abs(s.t) / std::sqrt(2.0));
  }
  const double gain = relative_p50_gain(median(baseline), median(candidate));
  const bool agrees = (gain > 0) == (s.t > 0);
  if (s.p_value < options.alpha && std::abs(gain) >= options.min_change && agrees) {
    s.verdict = gain > 0 ? "faster" : "slower";
  } else {
    s.verdict = "same";
  }
  return s;
}

Significance percentile_verdict(const LatencySummary& baseline, const LatencySummary& candidate,
                                const CompareOptions& options) {
  Significance s;
  s.method = "percentiles only (no per-call latencies)";
  s.p_value = kNaN;
  const double gain = relative_p50_gain(baseline.p50, candidate.p50);
  if (candidate.p90 <= baseline.p50 && gain >= options.min_change) {
    s.verdict = "faster";
  } else if (baseline.p90 <= candidate.p50 && -gain >= options.min_change) {
    s.verdict = "slower";
  } else {
    s.verdict = "same";
  }
  return s;
}

Significance latency_verdict(const BatchSizeResult& baseline, const BatchSizeResult& candidate,
                             const CompareOptions& options) {
  if (baseline.latencies.size() >= kMinRankTestSamples &&
      candidate.latencies.size() >= kMinRankTestSamples) {
    return mann_whitney_test(baseline.latencies, candidate.latencies, options);
  }
  return percentile_verdict(baseline.latency, candidate.latency, options);
}

WorkloadKey inference_workload_key(const InferenceResult& result, const BatchSizeResult& batch) {
  return {"inference",
          result.model,
          result.precision,
          result.memory_format,
          "",
          graph_mode_name(result),
          static_cast<long long>(batch.batch_size),
          result.kernel_fusion};
}

// The CSV of a comparison: one table of numbers for both kinds of result, one row per file
// (training) or per file and batch size (inference); a cell a kind does not have is empty.
void write_comparison_csv_header(std::ostream& out) {
  write_csv_header(out, {"kind",
                         "model",
                         "precision",
                         "memory_format",
                         "optimizer",
                         "graph_mode",
                         "kernel_fusion",
                         "batch_size",
                         "accumulation_steps",
                         "world_size",
                         "gpu",
                         "software",
                         "file",
                         "baseline",
                         "throughput_samples_per_s",
                         "throughput_ci95_half_width_samples_per_s",
                         "windows",
                         "latency_p50_s",
                         "latency_p99_s",
                         "speedup",
                         "p_value",
                         "test",
                         "verdict"});
}

// Inference has no micro-batches: its accumulation_steps cell is empty.
void key_cells(CsvRow& row, const WorkloadKey& k, bool training) {
  row << k.workload << k.model << k.precision << k.memory_format << k.optimizer << k.graph_mode
      << k.kernel_fusion << static_cast<std::int64_t>(k.batch_size);
  if (training) {
    row << static_cast<std::int64_t>(k.accumulation_steps);
  } else {
    row << kNaN;
  }
  row << k.world_size;
}

void write_comparison_csv_rows(std::ostream& out, const Comparison& c) {
  for (const auto& r : c.rows) {
    CsvRow row;
    key_cells(row, r.key, true);
    row << r.gpu << r.software << r.path << r.is_baseline << r.median << r.ci95_half_width
        << r.windows << kNaN << kNaN << (r.has_baseline ? r.speedup : kNaN)
        << r.significance.p_value << (r.has_baseline && !r.is_baseline ? "Welch t-test" : "")
        << r.significance.verdict;
    row.end(out);
  }
}

void write_comparison_csv_rows(std::ostream& out, const InferenceComparison& c) {
  for (const auto& r : c.rows) {
    CsvRow row;
    key_cells(row, r.key, false);
    row << r.gpu << r.software << r.path << r.is_baseline << r.throughput << kNaN << std::size_t{0}
        << r.latency.p50 << r.latency.p99 << (r.has_baseline ? r.speedup : kNaN)
        << r.significance.p_value << r.significance.method << r.significance.verdict;
    row.end(out);
  }
}

void write_comparison(std::ostream& out, const Comparison& c, TableFormat format) {
  if (format == TableFormat::kCsv) {
    write_comparison_csv_header(out);
    write_comparison_csv_rows(out, c);
    return;
  }
  const std::vector<std::string> header = {"workload",           "GPU",     "software", "file",
                                           "samples/s (median)", "±95% CI", "windows",  "speedup",
                                           "p (Welch)",          "verdict"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows) {
    rows.push_back({r.key.label(), r.gpu, r.software, r.path, format_fixed_or(r.median, 1),
                    format_fixed_or(r.ci95_half_width, 1), std::to_string(r.windows),
                    r.has_baseline ? format_fixed_or(r.speedup, 3) + "x" : "n/a",
                    format_fixed_or(r.significance.p_value, 4), r.significance.verdict});
  }
  std::vector<bool> numeric(header.size(), false);
  for (std::size_t i = 4; i <= 8; ++i) numeric[i] = true;
  write_table(out, header, numeric, rows);
  out << "\n"
      << c.baseline_description
      << ". Verdict: Welch's t-test on window throughputs (two-sided, alpha " << c.alpha
      << "); faster/slower only when significant and the window means differ by at least "
      << c.min_change * 100 << "%.\n";
}

void write_comparison(std::ostream& out, const InferenceComparison& c, TableFormat format) {
  if (format == TableFormat::kCsv) {
    write_comparison_csv_header(out);
    write_comparison_csv_rows(out, c);
    return;
  }
  const std::vector<std::string> header = {
      "workload", "GPU", "software", "file",   "p50 ms", "p99 ms", "samples/s (batch/p50)",
      "speedup",  "p",   "test",     "verdict"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows) {
    rows.push_back(
        {r.key.label(), r.gpu, r.software, r.path, format_fixed_or(r.latency.p50 * 1e3, 3),
         format_fixed_or(r.latency.p99 * 1e3, 3), format_fixed_or(r.throughput, 1),
         r.has_baseline ? format_fixed_or(r.speedup, 3) + "x" : "n/a",
         format_fixed_or(r.significance.p_value, 4),
         r.significance.method.empty() ? "-" : r.significance.method, r.significance.verdict});
  }
  std::vector<bool> numeric(header.size(), false);
  for (std::size_t i = 4; i <= 8; ++i) numeric[i] = true;
  write_table(out, header, numeric, rows);
  out << "\n"
      << c.baseline_description
      << ". Speedup: baseline p50 / p50 (the throughput ratio at that batch size). Verdict per "
         "batch size: a Mann-Whitney U test on the stored per-call latencies where both files "
         "hold at least "
      << kMinRankTestSamples << " (two-sided, normal approximation, alpha " << c.alpha
      << "; consecutive calls are not independent draws, so p is optimistic), faster/slower only "
         "when significant and the p50s differ by at least "
      << c.min_change * 100
      << "%; without stored latencies, faster/slower only when one side's p90 is at or below "
         "the other's p50 and the p50s differ by at least "
      << c.min_change * 100 << "% (no p-value).\n";
}

void write_comparison(std::ostream& out, const ResultComparison& c, TableFormat format) {
  if (format == TableFormat::kCsv) {
    write_comparison_csv_header(out);
    write_comparison_csv_rows(out, c.training);
    write_comparison_csv_rows(out, c.inference);
    return;
  }
  if (!c.training.rows.empty()) write_comparison(out, c.training, format);
  if (!c.training.rows.empty() && !c.inference.rows.empty()) out << "\n";
  if (!c.inference.rows.empty()) write_comparison(out, c.inference, format);
}

}  // namespace gpuperf
