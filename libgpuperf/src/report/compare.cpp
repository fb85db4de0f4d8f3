// Cross-run comparison with a Welch t-test verdict.
#include "gpuperf/report/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "gpuperf/error.h"
#include "gpuperf/specs/specs.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << v;
  return out.str();
}

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

// Whether a run was measured on the GPU the user named as baseline.
bool run_on_gpu(const RunRecord& r, const std::string& name, const GpuSpec* wanted,
                const SpecDatabase* specs) {
  if (wanted != nullptr && specs != nullptr) {
    const SpecMatch m =
        specs->match_device(r.device.name, r.device.sm_count, r.device.memory_bytes);
    if (m.spec != nullptr) return m.spec->id == wanted->id;
  }
  return lower(r.device.name).find(lower(name)) != std::string::npos;
}

}  // namespace

TableFormat parse_table_format(const std::string& text, const std::string& option) {
  if (text == "md" || text == "markdown") return TableFormat::kMarkdown;
  if (text == "csv") return TableFormat::kCsv;
  throw ConfigError(option + ": unknown format '" + text + "' (expected md or csv)");
}

void CompareOptions::validate() const {
  if (!(alpha > 0 && alpha < 1)) {
    throw ConfigError("compare option alpha must be in (0, 1), got " + fixed(alpha, 4));
  }
  if (!(min_change >= 0 && min_change < 1)) {
    throw ConfigError("compare option min_change must be in [0, 1), got " + fixed(min_change, 4));
  }
}

std::string WorkloadKey::label() const {
  return workload + " " + model + " bs" + std::to_string(batch_size) + " " + precision + " " +
         memory_format + " " + optimizer + " " + graph_mode;
}

bool WorkloadKey::operator<(const WorkloadKey& o) const {
  return std::tie(workload, model, batch_size, precision, memory_format, optimizer, graph_mode) <
         std::tie(o.workload, o.model, o.batch_size, o.precision, o.memory_format, o.optimizer,
                  o.graph_mode);
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
          static_cast<long long>(c.batch_size)};
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
    bool any = false;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].path == options.baseline) is_base[i] = any = true;
    }
    if (any) {
      out.baseline_description = "baseline: " + options.baseline;
    } else {
      const GpuSpec* wanted = nullptr;
      if (specs != nullptr) {
        try {
          wanted = &specs->resolve(options.baseline, "--baseline");
        } catch (const ConfigError&) {
          wanted = nullptr;  // not in the database: fall back to the device-name substring
        }
      }
      for (std::size_t i = 0; i < runs.size(); ++i) {
        if (run_on_gpu(runs[i].record, options.baseline, wanted, specs)) is_base[i] = any = true;
      }
      if (!any) {
        throw ConfigError("--baseline: '" + options.baseline +
                          "' is neither one of the result files nor the GPU of any of them");
      }
      out.baseline_description =
          "baseline: runs on " + (wanted != nullptr ? wanted->name : options.baseline);
    }
  }

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
      out.rows.push_back(row);
    }
  }
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void write_comparison(std::ostream& out, const Comparison& c, TableFormat format) {
  const std::vector<std::string> header = {"workload",           "GPU",     "software", "file",
                                           "samples/s (median)", "±95% CI", "windows",  "speedup",
                                           "p (Welch)",          "verdict"};
  auto cells = [](const ComparisonRow& r) {
    return std::vector<std::string>{r.key.label(),
                                    r.gpu,
                                    r.software,
                                    r.path,
                                    fixed(r.median, 1),
                                    fixed(r.ci95_half_width, 1),
                                    std::to_string(r.windows),
                                    r.has_baseline ? fixed(r.speedup, 3) + "x" : "n/a",
                                    fixed(r.significance.p_value, 4),
                                    r.significance.verdict};
  };
  if (format == TableFormat::kCsv) {
    for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << csv_field(header[i]);
    out << "\n";
    for (const auto& row : c.rows) {
      const auto v = cells(row);
      for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << csv_field(v[i]);
      out << "\n";
    }
    return;
  }
  auto md = [](std::string s) {
    // A pipe would end the cell early.
    std::string escaped;
    for (char ch : s) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return escaped;
  };
  out << "|";
  for (const auto& h : header) out << " " << h << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << (i >= 4 && i <= 8 ? "---:|" : "---|");
  out << "\n";
  for (const auto& row : c.rows) {
    out << "|";
    for (const auto& v : cells(row)) out << " " << md(v) << " |";
    out << "\n";
  }
  out << "\n"
      << c.baseline_description
      << ". Verdict: Welch's t-test on window throughputs (two-sided, alpha " << c.alpha
      << "); faster/slower only when significant and the window means differ by at least "
      << c.min_change * 100 << "%.\n";
}

}  // namespace gpuperf
