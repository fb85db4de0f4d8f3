// HTML report: inline SVG bar charts and tables, no scripts and nothing fetched, so the page
// opens the same offline, in a mail attachment or in a CI artifact viewer.
#include "gpuperf/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/report/compare.h"
#include "gpuperf/results/run_record.h"
#include "gpuperf/specs/efficiency.h"

namespace gpuperf {
namespace {

// "LibTorch 2.11.0, CUDA 13.0, driver 580.159.04", leaving out what the record does not have (a
// CPU run has no CUDA and no driver).
std::string software_text(const DeviceFingerprint& d) {
  std::string text = "LibTorch " + (d.libtorch_version.empty() ? "?" : d.libtorch_version);
  if (!d.cuda_runtime_version.empty()) text += ", CUDA " + d.cuda_runtime_version;
  if (!d.driver_version.empty()) text += ", driver " + d.driver_version;
  return text;
}

// A tick label: grouped thousands from 100, else up to three significant digits without
// trailing zeros ("0.25", "2.5", "40").
std::string tick(double v) {
  if (v >= 100) return format_grouped(v);
  std::string text = format_fixed_or(v, v >= 10 ? 1 : v >= 1 ? 2 : 3);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

const char* colour(const std::string& series) {
  return series == "published" ? "#9e9e9e" : "#1565c0";
}

std::string run_label(const RunRecord& r) {
  return r.device.name + " · " + r.config.precision + " · bs " +
         std::to_string(r.config.batch_size) +
         (r.config.memory_format.empty() ? "" : " · " + r.config.memory_format) +
         (r.config.graph_mode == "eager" || r.config.graph_mode.empty()
              ? ""
              : " · " + r.config.graph_mode) +
         // A data-parallel record's throughput is rank 0's: say so beside single-GPU bars.
         (r.distributed.world_size > 1 ? " · rank 0 of " + std::to_string(r.distributed.world_size)
                                       : "");
}

double median_of(const RunRecord& r) {
  return r.throughput.count > 0 ? r.throughput.median : r.overall_throughput;
}

const char* kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#212121;max-width:1000px}
h1{font-size:1.6em;margin-bottom:0}h2{margin-top:1.6em;border-bottom:1px solid #ddd}.sub{color:#555;margin-top:4px}
table{border-collapse:collapse;font-size:.85em;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left}
td.n{text-align:right}th{background:#f5f5f5}.note{color:#555;font-size:.85em}svg{display:block;margin:8px 0}
.tag{background:#eee;border-radius:3px;padding:0 4px;font-size:.8em})";

const char* const kPalette[] = {"#1565c0", "#c62828", "#2e7d32", "#ef6c00",
                                "#6a1b9a", "#00838f", "#5d4037", "#37474f"};

// "NVIDIA H200 · fp16 · channels_last · cuda-graph"
std::string inference_label(const InferenceResult& r) {
  return r.fingerprint.name + " · " + r.precision + " · " + r.memory_format + " · " +
         graph_mode_name(r) + (r.kernel_fusion == "none" ? "" : " · fused " + r.kernel_fusion);
}

// One batch size of an inference result as a run record, so that the efficiency figures
// (forward FLOPs, % of peak, samples per joule at TDP) are computed by the training code's rules.
RunRecord as_run_record(const InferenceResult& r, const BatchSizeResult& b) {
  RunRecord record;
  record.device = r.fingerprint;
  record.config.workload = "inference";
  record.config.model = r.model;
  record.config.batch_size = b.batch_size;
  record.config.precision = r.precision;
  record.config.memory_format = r.memory_format;
  record.config.graph_mode = graph_mode_name(r);
  record.config.kernel_fusion = r.kernel_fusion;
  record.overall_throughput = b.throughput_median;  // no windows: efficiency reads this
  record.peak_memory_bytes = b.peak_memory_bytes;
  return record;
}

const GpuSpec* spec_of(const InferenceResult& r, const SpecDatabase* specs, std::string* reason) {
  if (specs == nullptr) {
    if (reason != nullptr) *reason = "no spec database loaded";
    return nullptr;
  }
  const DeviceFingerprint& d = r.fingerprint;
  const SpecMatch m = specs->match_device(d.name, d.sm_count, d.memory_bytes);
  if (reason != nullptr) *reason = m.reason;
  return m.spec;
}

// The charts of one model's inference results: throughput against latency per batch size,
// batch-1 latency, and any serving curve.
void write_inference_charts(std::ostream& out, const std::vector<const LoadedInference*>& files) {
  std::vector<ChartSeries> curve;
  std::vector<ChartSeries> by_batch;
  std::vector<ChartSeries> serving;
  std::vector<ChartBar> batch1;
  std::vector<std::string> batch1_paths;
  for (const LoadedInference* file : files) {
    const InferenceResult& r = file->result;
    const std::string label = inference_label(r) + " (" + file->path + ")";
    ChartSeries series{label, {}};
    ChartSeries latency{label, {}};
    for (const auto& b : r.batches) {
      series.points.push_back(
          {b.latency.p50 * 1e3, b.throughput_median, "bs " + std::to_string(b.batch_size)});
      latency.points.push_back({static_cast<double>(b.batch_size), b.latency.p50 * 1e3, ""});
      if (b.batch_size == 1) {
        batch1_paths.push_back(file->path);
        batch1.push_back({inference_label(r), b.latency.p50 * 1e3, "measured",
                          label + ": p50 " + format_fixed_or(b.latency.p50 * 1e3, 3) + " ms, p99 " +
                              format_fixed_or(b.latency.p99 * 1e3, 3) + " ms over " +
                              std::to_string(b.latency.count) + " calls"});
      }
    }
    curve.push_back(series);
    by_batch.push_back(latency);
    if (!r.serving.points.empty()) {
      ChartSeries sim{label + (r.serving_measured ? " [measured]" : " [simulated]"), {}};
      for (const auto& p : r.serving.points) {
        sim.points.push_back(
            {p.achieved_rate, p.latency.p99 * 1e3,
             format_fixed_or(p.offered_rate, 0) + " req/s" + (p.saturated ? " (sat.)" : "")});
      }
      serving.push_back(sim);
    }
  }
  // Latency roughly doubles with the batch size: log2 axes spread the batch sizes evenly.
  out << svg_line_chart("Throughput against per-call latency, one point per batch size",
                        "p50 latency per call, ms (log2 axis)", "samples/s (batch / p50)", curve,
                        AxisScale::kLog2);
  out << svg_line_chart("Per-call latency against batch size", "batch size (log2 axis)",
                        "p50 latency per call, ms", by_batch, AxisScale::kLog2);
  distinguish_labels(batch1, batch1_paths);
  out << svg_bar_chart("Batch-1 latency per call", "p50, ms (p99 in the tooltip)", batch1);
  if (!serving.empty()) {
    out << svg_line_chart("Serving: p99 end-to-end latency against achieved rate",
                          "achieved requests/s", "p99 latency, ms", serving);
    out << "<p class=\"note\">[simulated]: a single-server FIFO model with dynamic batching "
           "and Poisson arrivals, driven by the measured median call time per batch size; not "
           "a real concurrent server. [measured]: the same policy run in real time, every "
           "batch executed on the device (docs/inference.md).</p>\n";
  }
}

// One model's latency percentiles and efficiency, a row per batch size of each file.
void write_inference_latency_table(std::ostream& out,
                                   const std::vector<const LoadedInference*>& files,
                                   const SpecDatabase* specs, const HtmlReportOptions& options) {
  out << "<table><tr><th>batch</th><th>p50 ms</th><th>p90 ms</th><th>p95 ms</th><th>p99 "
         "ms</th><th>max ms</th><th>p99/p50</th><th>samples/s (batch/p50)</th><th>samples/s "
         "(total)</th><th>peak memory MiB</th><th>% of peak</th><th>samples/J</th></tr>\n";
  for (const LoadedInference* file : files) {
    const InferenceResult& r = file->result;
    const GpuSpec* spec = spec_of(r, specs, nullptr);
    out << "<tr><th colspan=\"12\">" << html_escape(inference_label(r)) << " — "
        << html_escape(file->path) << "</th></tr>\n";
    for (const auto& b : r.batches) {
      const Efficiency e = compute_efficiency(as_run_record(r, b), spec, options.efficiency);
      const LatencySummary& l = b.latency;
      out << "<tr><td class=\"n\">" << b.batch_size;
      for (double v : {l.p50, l.p90, l.p95, l.p99, l.max}) {
        out << "</td><td class=\"n\">" << format_fixed_or(v * 1e3, 3);
      }
      out << "</td><td class=\"n\">" << format_fixed_or(l.tail_ratio(), 3)
          << "</td><td class=\"n\">" << format_grouped(b.throughput_median)
          << "</td><td class=\"n\">" << format_grouped(b.throughput_overall)
          << "</td><td class=\"n\">" << format_fixed_or(b.peak_memory_bytes / (1024.0 * 1024.0), 1)
          << "</td><td class=\"n\">" << format_fixed_or(e.fraction_of_peak * 100, 1)
          << "</td><td class=\"n\">" << format_fixed_or(e.samples_per_joule, 2)
          << (e.power_basis.empty() ? "" : " (" + html_escape(e.power_basis) + ")")
          << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

// Where each inference result came from: the file, the GPU and its datasheet entry, the
// settings, the software and the command.
void write_inference_files_table(std::ostream& out, const std::vector<LoadedInference>& inference,
                                 const SpecDatabase* specs) {
  out << "<h2>Inference results</h2>\n<table><tr><th>file</th><th>GPU</th><th>datasheet</th>"
         "<th>setting</th><th>per batch size</th><th>software</th><th>command</th></tr>\n";
  for (const auto& file : inference) {
    const InferenceResult& r = file.result;
    std::string reason;
    const GpuSpec* spec = spec_of(r, specs, &reason);
    const DeviceFingerprint& d = r.fingerprint;
    out << "<tr><td>" << html_escape(file.path) << "</td><td>" << html_escape(d.name) << "</td><td>"
        << html_escape(spec != nullptr ? spec->name : reason) << "</td><td>"
        << html_escape(inference_label(r)) << "</td><td>" << r.warmup << " warm-up + "
        << r.iterations << " timed calls (" << html_escape(r.timer) << ")"
        << (r.out_of_memory ? "; " + html_escape(r.stop_reason) : "") << "</td><td>"
        << html_escape(d.libtorch_version.empty()
                           ? std::string("not recorded (file predates device fingerprints)")
                           : software_text(d))
        << "</td><td><code>" << html_escape(r.command) << "</code></td></tr>\n";
  }
  out << "</table>\n<p class=\"note\">Inference: per-call latency between two device events "
         "after warm-up; throughput = batch / p50; peak memory: the most LibTorch's allocator held "
         "during the batch size's calls (model, input and activations; n/a on the CPU); % of peak "
         "counts forward FLOPs against the "
         "dense datasheet peak of the precision used; samples/J uses the TDP (no telemetry during "
         "inference runs), a lower bound.</p>\n";
}

void write_inference_sections(std::ostream& out, const std::vector<LoadedInference>& inference,
                              const SpecDatabase* specs, const HtmlReportOptions& options) {
  std::map<std::string, std::vector<const LoadedInference*>> by_model;
  for (const auto& file : inference) by_model[file.result.model].push_back(&file);
  for (const auto& [model, files] : by_model) {
    out << "<h2>" << html_escape(model) << " (inference)</h2>\n";
    write_inference_charts(out, files);
    write_inference_latency_table(out, files, specs, options);
  }
  if (inference.empty()) return;
  write_inference_files_table(out, inference, specs);
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    unsigned code_point = 0;
    // A NUL, a terminal escape or a bidirectional override in a file name or device name must
    // not reach the page as itself: shown as text instead (line breaks and tabs stay).
    if ((byte < 0x20 && c != '\n' && c != '\t' && c != '\r') || byte == 0x7f) {
      out += printable(std::string(1, c));
      continue;
    }
    if (const std::size_t n = invisible_control_at(text, i, &code_point); n > 0) {
      out += printable(text.substr(i, n));
      i += n - 1;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void distinguish_labels(std::vector<ChartBar>& bars, const std::vector<std::string>& paths) {
  if (paths.size() != bars.size()) {
    throw Error("distinguish_labels: " + std::to_string(paths.size()) + " paths for " +
                std::to_string(bars.size()) + " bars");
  }
  auto repeated = [&](std::size_t i) {
    return std::count_if(bars.begin(), bars.end(),
                         [&](const ChartBar& b) { return b.label == bars[i].label; }) > 1;
  };
  std::vector<bool> shared(bars.size());
  for (std::size_t i = 0; i < bars.size(); ++i) shared[i] = repeated(i);
  // The file's name without its folders keeps the label short enough for the label column.
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const std::string name = std::filesystem::path(paths[i]).filename().string();
    if (shared[i] && !name.empty()) bars[i].label += " (" + name + ")";
  }
  // Two bars of one file with one label (or two files of one name): number them.
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    if (repeated(i) && ++seen[bars[i].label] > 1) {
      bars[i].label += " #" + std::to_string(seen[bars[i].label]);
    }
  }
}

std::string svg_bar_chart(const std::string& title, const std::string& unit,
                          const std::vector<ChartBar>& input) {
  std::vector<ChartBar> bars;
  for (const auto& b : input) {
    if (std::isfinite(b.value) && b.value >= 0) bars.push_back(b);
  }
  std::ostringstream s;
  // The label column fits the longest label (about 7 px per character at font-size 12; UTF-8
  // continuation bytes take no width), within 160..640 px; the plot keeps its width.
  std::size_t longest = 0;
  for (const auto& b : bars) {
    longest =
        std::max<std::size_t>(longest, std::count_if(b.label.begin(), b.label.end(), [](char c) {
                                return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
                              }));
  }
  const int label_width = std::clamp(static_cast<int>(longest) * 7 + 12, 160, 640);
  const int value_width = 110;
  const int row = 24;
  const int top = 48;
  const int plot_width = 470;
  const int width = label_width + plot_width + value_width;
  if (bars.empty()) {
    s << "<p class=\"note\">" << html_escape(title) << ": no data.</p>\n";
    return s.str();
  }
  double max_value = 0;
  for (const auto& b : bars) {
    max_value = std::max(max_value, b.value);
    if (std::isfinite(b.high)) max_value = std::max(max_value, b.high);
  }
  // The axis ends on a nice tick at or above the longest bar.
  const std::vector<double> ticks = nice_ticks(max_value);
  max_value = ticks.back();
  bool has_published = false;
  bool has_measured = false;
  for (const auto& b : bars) (b.series == "published" ? has_published : has_measured) = true;
  const int height = top + row * static_cast<int>(bars.size()) + 30;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\""
    << html_escape(title) << "\">\n";
  s << "<text x=\"0\" y=\"18\" font-size=\"15\" font-weight=\"bold\">" << html_escape(title) << " ("
    << html_escape(unit) << ")</text>\n";
  // Legend on its own line under the title (beside it, a long title would run into it), only
  // for series present, so a chart of measured bars alone has no grey swatch.
  int lx = 0;
  for (const char* series : {"measured", "published"}) {
    if ((std::string(series) == "published" && !has_published) ||
        (std::string(series) == "measured" && !has_measured)) {
      continue;
    }
    s << "<rect x=\"" << lx << "\" y=\"26\" width=\"12\" height=\"12\" fill=\"" << colour(series)
      << "\"/><text x=\"" << lx + 16 << "\" y=\"37\" font-size=\"12\">" << series << "</text>\n";
    lx += 110;
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const int y = top + row * static_cast<int>(i);
    const double w = b.value / max_value * plot_width;
    s << "<g><title>" << html_escape(b.tooltip.empty() ? b.label : b.tooltip) << "</title>";
    s << "<text x=\"" << label_width - 6 << "\" y=\"" << y + 16
      << "\" font-size=\"12\" text-anchor=\"end\">" << html_escape(b.label) << "</text>";
    s << "<rect class=\"bar\" x=\"" << label_width << "\" y=\"" << y + 4 << "\" width=\""
      << format_fixed_or(std::max(w, 1.0), 1) << "\" height=\"" << row - 8 << "\" fill=\""
      << colour(b.series) << "\"/>";
    // The value's label starts past the bar and past its whisker, never under either.
    double label_x = label_width + std::max(w, 1.0);
    if (std::isfinite(b.low) && std::isfinite(b.high) && b.high > b.low) {
      const double x0 = label_width + std::clamp(b.low, 0.0, max_value) / max_value * plot_width;
      const double x1 = label_width + std::clamp(b.high, 0.0, max_value) / max_value * plot_width;
      s << "<line class=\"whisker\" x1=\"" << format_fixed_or(x0, 1) << "\" x2=\""
        << format_fixed_or(x1, 1) << "\" y1=\"" << y + 12 << "\" y2=\"" << y + 12
        << "\" stroke=\"#000\" stroke-width=\"1.5\"/>";
      label_x = std::max(label_x, x1);
    }
    s << "<text x=\"" << format_fixed_or(label_x + 6, 1) << "\" y=\"" << y + 16
      << "\" font-size=\"12\">" << format_readable(b.value) << "</text></g>\n";
  }
  const int axis_y = top + row * static_cast<int>(bars.size()) + 4;
  s << "<line x1=\"" << label_width << "\" x2=\"" << label_width + plot_width << "\" y1=\""
    << axis_y << "\" y2=\"" << axis_y << "\" stroke=\"#999\"/>";
  for (const double t : ticks) {
    const double x = label_width + t / max_value * plot_width;
    s << "<line x1=\"" << format_fixed_or(x, 1) << "\" x2=\"" << format_fixed_or(x, 1) << "\" y1=\""
      << axis_y << "\" y2=\"" << axis_y + 4 << "\" stroke=\"#999\"/><text x=\""
      << format_fixed_or(x, 1) << "\" y=\"" << axis_y + 16
      << "\" font-size=\"11\" text-anchor=\"middle\">" << tick(t) << "</text>";
  }
  s << "\n</svg>\n";
  return s.str();
}

namespace {

// Where a line chart's plot area lies, and how values map onto it.
struct LineChartFrame {
  int width = 960, left = 80, right = 20, top = 34, plot_height = 300;
  int plot_width = width - left - right;
  int legend_top = top + plot_height + 44, legend_row = 18;
  double min_x = 0, max_x = 1, max_y = 1;
  AxisScale x_scale = AxisScale::kLinear;

  [[nodiscard]] double px(double x) const {
    const double fraction =
        x_scale == AxisScale::kLog2 ? std::log2(x / min_x) / std::log2(max_x / min_x) : x / max_x;
    return left + fraction * plot_width;
  }
  [[nodiscard]] double py(double y) const { return top + plot_height - y / max_y * plot_height; }
};

// Powers of two from the one at or below `min` to the one at or above `max` (both > 0).
std::vector<double> log2_ticks(double min, double max) {
  std::vector<double> ticks;
  for (int e = static_cast<int>(std::floor(std::log2(min))); std::exp2(e) <= max * (1 + 1e-9);
       ++e) {
    ticks.push_back(std::exp2(e));
  }
  if (ticks.back() < max) ticks.push_back(ticks.back() * 2);
  if (ticks.size() < 2) ticks.push_back(ticks.back() * 2);
  return ticks;
}

// A text's box on the chart, estimated from its length (font-size 10: ~6 px per character).
struct LabelBox {
  double x0, y0, x1, y1;
  [[nodiscard]] bool overlaps(const LabelBox& o) const {
    return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1;
  }
};

// The series with only their plottable points (finite, >= 0), each in x order; a series left
// with none is dropped. `max_x` and `max_y` receive the largest coordinates kept.
std::vector<ChartSeries> plottable_series(const std::vector<ChartSeries>& input, AxisScale x_scale,
                                          double& min_x, double& max_x, double& max_y) {
  std::vector<ChartSeries> series;
  min_x = std::numeric_limits<double>::infinity();
  for (const auto& line : input) {
    ChartSeries kept{line.name, {}, line.dashed};
    for (const auto& p : line.points) {
      const bool x_ok = x_scale == AxisScale::kLog2 ? p.x > 0 : p.x >= 0;
      if (std::isfinite(p.x) && std::isfinite(p.y) && x_ok && p.y >= 0) {
        kept.points.push_back(p);
        min_x = std::min(min_x, p.x);
        max_x = std::max(max_x, p.x);
        max_y = std::max(max_y, p.y);
      }
    }
    std::sort(kept.points.begin(), kept.points.end(),
              [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
    if (!kept.points.empty()) series.push_back(kept);
  }
  return series;
}

// The grid at the axes' ticks, the frame and the axis titles.
void write_line_chart_axes(std::ostream& s, const LineChartFrame& f,
                           const std::vector<double>& x_ticks, const std::vector<double>& y_ticks,
                           const std::string& x_unit, const std::string& y_unit) {
  const int top = f.top;
  const int left = f.left;
  const int plot_width = f.plot_width;
  const int plot_height = f.plot_height;
  for (const double fx : x_ticks) {
    s << "<line x1=\"" << format_fixed_or(f.px(fx), 1) << "\" x2=\"" << format_fixed_or(f.px(fx), 1)
      << "\" y1=\"" << top << "\" y2=\"" << top + plot_height << "\" stroke=\"#eee\"/>";
    s << "<text x=\"" << format_fixed_or(f.px(fx), 1) << "\" y=\"" << top + plot_height + 16
      << "\" font-size=\"11\" text-anchor=\"middle\">" << tick(fx) << "</text>";
  }
  for (const double fy : y_ticks) {
    s << "<line x1=\"" << left << "\" x2=\"" << left + plot_width << "\" y1=\""
      << format_fixed_or(f.py(fy), 1) << "\" y2=\"" << format_fixed_or(f.py(fy), 1)
      << "\" stroke=\"#eee\"/>";
    s << "<text x=\"" << left - 6 << "\" y=\"" << format_fixed_or(f.py(fy) + 4, 1)
      << "\" font-size=\"11\" text-anchor=\"end\">" << tick(fy) << "</text>\n";
  }
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_width << "\" height=\""
    << plot_height << "\" fill=\"none\" stroke=\"#999\"/>\n";
  s << "<text x=\"" << left + plot_width / 2 << "\" y=\"" << top + plot_height + 34
    << "\" font-size=\"12\" text-anchor=\"middle\">" << html_escape(x_unit) << "</text>\n";
  s << "<text x=\"14\" y=\"" << top + plot_height / 2 << "\" font-size=\"12\" "
    << "text-anchor=\"middle\" transform=\"rotate(-90 14 " << top + plot_height / 2 << ")\">"
    << html_escape(y_unit) << "</text>\n";
}

// The vertices of a series' line: one per distinct x (points are in x order), at the median y of
// the points there. Records that share an x (two 2-rank runs) are repeats, not a change along
// the axis: joining them would draw a vertical stroke that reads as a jump, so they stay points
// on either side of a line that passes through their middle.
std::vector<ChartPoint> line_vertices(const std::vector<ChartPoint>& points) {
  std::vector<ChartPoint> vertices;
  for (std::size_t begin = 0; begin < points.size();) {
    std::size_t end = begin;
    std::vector<double> ys;
    for (; end < points.size() && points[end].x == points[begin].x; ++end) {
      ys.push_back(points[end].y);
    }
    std::sort(ys.begin(), ys.end());
    const std::size_t n = ys.size();
    vertices.push_back(
        {points[begin].x, n % 2 == 1 ? ys[n / 2] : (ys[n / 2 - 1] + ys[n / 2]) / 2, ""});
    begin = end;
  }
  return vertices;
}

// Series `index` in colour `colour_index`: its line, its points with their labels and tooltips
// (a dashed reference line has none), and its legend entry.
void write_line_chart_series(std::ostream& s, const LineChartFrame& f, const ChartSeries& line,
                             std::size_t index, std::size_t colour_index, const std::string& x_unit,
                             const std::string& y_unit, std::vector<LabelBox>& labels) {
  const char* colour = kPalette[colour_index % (sizeof kPalette / sizeof kPalette[0])];
  s << "<g><title>" << html_escape(line.name) << "</title><polyline class=\"line\" fill=\"none\" "
    << "stroke=\"" << colour << "\" stroke-width=\"2\" "
    << (line.dashed ? "stroke-dasharray=\"6 4\" " : "") << "points=\"";
  for (const auto& p : line_vertices(line.points)) {
    s << format_fixed_or(f.px(p.x), 1) << "," << format_fixed_or(f.py(p.y), 1) << " ";
  }
  s << "\"/>";
  for (const auto& p : line.points) {
    if (line.dashed) break;
    s << "<circle cx=\"" << format_fixed_or(f.px(p.x), 1) << "\" cy=\""
      << format_fixed_or(f.py(p.y), 1) << "\" r=\"3.5\" fill=\"" << colour << "\"><title>"
      << html_escape(line.name) << ": " << html_escape(p.label) << ", " << tick(p.x) << " "
      << html_escape(x_unit) << ", " << tick(p.y) << " " << html_escape(y_unit)
      << "</title></circle>";
    if (p.label.empty()) continue;
    const LabelBox box{f.px(p.x) + 5, f.py(p.y) - 14,
                       f.px(p.x) + 5 + 6.0 * static_cast<double>(p.label.size()), f.py(p.y) - 3};
    if (std::any_of(labels.begin(), labels.end(),
                    [&](const LabelBox& other) { return box.overlaps(other); })) {
      continue;  // the tooltip still names the point
    }
    labels.push_back(box);
    s << "<text x=\"" << format_fixed_or(box.x0, 1) << "\" y=\""
      << format_fixed_or(f.py(p.y) - 5, 1) << "\" font-size=\"10\" fill=\"" << colour << "\">"
      << html_escape(p.label) << "</text>";
  }
  s << "</g>\n";
  const int ly = f.legend_top + f.legend_row * static_cast<int>(index);
  if (line.dashed) {
    s << "<line x1=\"" << f.left << "\" x2=\"" << f.left + 12 << "\" y1=\"" << ly + 6 << "\" y2=\""
      << ly + 6 << "\" stroke=\"" << colour << "\" stroke-width=\"2\" stroke-dasharray=\"3 2\"/>";
  } else {
    s << "<rect x=\"" << f.left << "\" y=\"" << ly << "\" width=\"12\" height=\"12\" fill=\""
      << colour << "\"/>";
  }
  s << "<text x=\"" << f.left + 16 << "\" y=\"" << ly + 11 << "\" font-size=\"12\">"
    << html_escape(line.name) << "</text>\n";
}

}  // namespace

std::vector<double> nice_ticks(double max) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  // The smallest step of 1, 2, 2.5 or 5 x 10^k that covers `max` in at most five steps.
  const double magnitude = std::pow(10.0, std::floor(std::log10(max / 5)));
  double step = 10 * magnitude;
  for (const double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude * 5 >= max) {
      step = m * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  for (int i = 0; ticks.empty() || ticks.back() < max * (1 - 1e-12); ++i) ticks.push_back(i * step);
  return ticks;
}

std::string svg_line_chart(const std::string& title, const std::string& x_unit,
                           const std::string& y_unit, const std::vector<ChartSeries>& input,
                           AxisScale x_scale) {
  double min_x = 0;
  double max_x = 0;
  double max_y = 0;
  const std::vector<ChartSeries> series = plottable_series(input, x_scale, min_x, max_x, max_y);
  std::ostringstream s;
  if (series.empty()) {
    s << "<p class=\"note\">" << html_escape(title) << ": no data.</p>\n";
    return s.str();
  }
  LineChartFrame f;
  f.x_scale = x_scale;
  // Room for the point labels beyond the last point, then axes that end on a tick.
  const std::vector<double> x_ticks =
      x_scale == AxisScale::kLog2 ? log2_ticks(min_x, max_x * 1.25) : nice_ticks(max_x * 1.08);
  const std::vector<double> y_ticks = nice_ticks(max_y * 1.05);
  f.min_x = x_ticks.front();
  f.max_x = x_ticks.back();
  f.max_y = y_ticks.back();
  const int width = f.width;
  const int height = f.legend_top + f.legend_row * static_cast<int>(series.size()) + 8;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\""
    << html_escape(title) << "\">\n";
  s << "<text x=\"0\" y=\"18\" font-size=\"15\" font-weight=\"bold\">" << html_escape(title)
    << "</text>\n";
  write_line_chart_axes(s, f, x_ticks, y_ticks, x_unit, y_unit);
  // A dashed line takes the colour of the series before it; every other line the next colour.
  std::size_t colour_index = 0;
  std::vector<LabelBox> labels;
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (i > 0 && !series[i].dashed) ++colour_index;
    write_line_chart_series(s, f, series[i], i, colour_index, x_unit, y_unit, labels);
  }
  s << "</svg>\n";
  return s.str();
}

void HtmlReportOptions::validate() const { efficiency.validate(); }

void write_html_report(std::ostream& out, const std::vector<LoadedRun>& runs,
                       const SpecDatabase* specs, const std::vector<PublishedResult>& published,
                       const HtmlReportOptions& options) {
  write_results_report(out, LoadedResults{runs, {}}, specs, published, options);
}

namespace {

// A training run with its datasheet entry and the efficiency figures computed from both.
struct RunRow {
  const LoadedRun* run;
  const GpuSpec* spec;
  std::string match_reason;
  Efficiency eff;
};

std::vector<RunRow> run_rows(const std::vector<LoadedRun>& runs, const SpecDatabase* specs,
                             const HtmlReportOptions& options) {
  std::vector<RunRow> rows;
  for (const auto& run : runs) {
    const RunRecord& r = run.record;
    SpecMatch m;
    if (specs != nullptr)
      m = specs->match_device(r.device.name, r.device.sm_count, r.device.memory_bytes);
    else
      m.reason = "no spec database loaded";
    rows.push_back({&run, m.spec, m.reason, compute_efficiency(r, m.spec, options.efficiency)});
  }
  return rows;
}

void write_page_head(std::ostream& out, const HtmlReportOptions& options, std::size_t files) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
      << html_escape(options.title) << "</title>\n<style>" << kStyle << "</style></head><body>\n";
  out << "<h1>" << html_escape(options.title) << "</h1>\n";
  if (!options.subtitle.empty())
    out << "<p class=\"sub\">" << html_escape(options.subtitle) << "</p>\n";
  out << "<p class=\"note\">" << files << " result file(s). Peaks are dense datasheet figures "
      << "for the precision used (fp16/bf16: tensor cores with FP32 accumulation). Published "
         "figures "
      << "come from other software stacks and are labelled <span "
         "class=\"tag\">published</span>.</p>\n";
}

// Throughput, fraction of peak and samples per joule of the training runs. Charts group by
// model so that bars on one axis share a unit of work.
void write_training_charts(std::ostream& out, const std::vector<RunRow>& rows) {
  std::map<std::string, std::vector<const RunRow*>> by_model;
  for (const auto& row : rows) by_model[row.run->record.config.model].push_back(&row);
  for (const auto& [model, members] : by_model) {
    std::vector<ChartBar> throughput;
    std::vector<ChartBar> fraction;
    std::vector<ChartBar> per_joule;
    std::vector<std::string> paths;
    for (const RunRow* row : members) {
      paths.push_back(row->run->path);
      const RunRecord& r = row->run->record;
      const std::string label = run_label(r);
      throughput.push_back({label, median_of(r), "measured",
                            label + ": median of " + std::to_string(r.window_throughput.size()) +
                                " windows (IQR " + format_grouped(r.throughput.q1) + "-" +
                                format_grouped(r.throughput.q3) + "), " + row->run->path});
      // The whisker is the windows' interquartile range, around the median the bar shows.
      if (r.throughput.count > 1) {
        throughput.back().low = r.throughput.q1;
        throughput.back().high = r.throughput.q3;
      }
      fraction.push_back({label + " (" + row->eff.peak_key + ")", row->eff.fraction_of_peak * 100,
                          "measured", label + " vs datasheet " + row->eff.peak_key + " peak"});
      per_joule.push_back({label + " (" + row->eff.power_basis + ")", row->eff.samples_per_joule,
                           "measured", label + ", power: " + row->eff.power_basis});
    }
    for (auto* bars : {&throughput, &fraction, &per_joule}) distinguish_labels(*bars, paths);
    out << "<h2>" << html_escape(model) << " ("
        << html_escape(members.front()->run->record.config.workload) << ")</h2>\n";
    out << svg_bar_chart("Throughput per device and precision",
                         "samples/s, median window, whisker: interquartile range", throughput);
    out << svg_bar_chart("Fraction of datasheet dense peak", "% of peak", fraction);
    out << svg_bar_chart("Samples per joule", "samples/J; TDP-based where not measured", per_joule);
  }
}

// Measured ResNet-50 training beside published figures: the comparison the GPU guides make.
void write_resnet50_beside_published(std::ostream& out, const std::vector<RunRow>& rows,
                                     const std::vector<PublishedResult>& published) {
  std::vector<ChartBar> beside;
  std::vector<std::string> paths;
  for (const auto& row : rows) {
    const RunRecord& r = row.run->record;
    if (r.config.model == "resnet50" && r.config.workload == "train") {
      beside.push_back({"measured: " + run_label(r), median_of(r), "measured", row.run->path});
      paths.push_back(row.run->path);
    }
  }
  for (const auto& p : published) {
    if (p.model != "resnet50") continue;
    std::string label = "published: " + p.gpu + " · " + p.precision;
    if (p.gpu_count > 1) label += " (per GPU of " + std::to_string(p.gpu_count) + ")";
    beside.push_back({label, p.per_gpu(), "published", p.setup + " — " + p.source});
    paths.emplace_back();  // published figures of one GPU and precision are numbered
  }
  distinguish_labels(beside, paths);
  if (beside.empty()) return;
  out << "<h2>ResNet-50 training: measured beside published (per GPU)</h2>\n";
  out << svg_bar_chart("ResNet-50 v1.5 training throughput per GPU", "images/s", beside);
}

bool data_parallel(const RunRecord& r) { return r.distributed.world_size > 1; }

// What a data-parallel record ran, with the ranks taken out: its GPU and single-process key, so
// that it reads the same on the 1-GPU row and on the rows of every GPU count.
std::string scaling_workload(const RunRecord& r) {
  WorkloadKey key = workload_key(r);
  key.world_size = 1;
  key.interconnect.clear();
  return r.device.name + " · " + key.label();
}

// A chart series: the workload that only the GPU count and what carries the all-reduce change.
std::string scaling_series(const RunRecord& r) {
  return r.config.model + " · " + r.config.precision + " · " + r.device.name + " · " +
         r.distributed.interconnect;
}

// The first single-process record of the workload of `dp` on a GPU of the same name, or null:
// its median window throughput is what "one GPU" means for the scaling efficiency.
const RunRow* single_process_baseline(const RunRow& dp, const std::vector<RunRow>& rows) {
  WorkloadKey want = workload_key(dp.run->record);
  want.world_size = 1;
  want.interconnect.clear();
  for (const auto& row : rows) {
    const RunRecord& r = row.run->record;
    if (!data_parallel(r) && r.device.name == dp.run->record.device.name &&
        workload_key(r) == want && median_of(r) > 0) {
      return &row;
    }
  }
  return nullptr;
}

// A data-parallel record with its efficiency: the record's own (judged against its baseline),
// else global / (ranks x the same workload's single-process throughput in this report).
struct ScalingRow {
  const RunRow* row = nullptr;
  const RunRow* baseline = nullptr;
  double efficiency = kNotAvailable;
  std::string basis;  // where the efficiency comes from, for the table
};

ScalingRow scaling_row(const RunRow& row, const std::vector<RunRow>& rows) {
  const DistributedSummary& d = row.run->record.distributed;
  ScalingRow s;
  s.row = &row;
  s.baseline = single_process_baseline(row, rows);
  if (std::isfinite(d.scaling_efficiency)) {
    s.efficiency = d.scaling_efficiency;
    s.basis = std::isfinite(d.baseline_throughput)
                  ? "recorded, vs " + format_grouped(d.baseline_throughput) + " samples/s"
                  : std::string("recorded");
  } else if (s.baseline != nullptr && std::isfinite(d.global_throughput)) {
    s.efficiency = d.global_throughput / (d.world_size * median_of(s.baseline->run->record));
    s.basis = "vs " + s.baseline->run->path;
  }
  return s;
}

// One series per workload: its data-parallel records by GPU count, the 1-GPU point of the first
// of them that has a single-process baseline, and a dashed ideal line from that point.
std::vector<ChartSeries> scaling_chart_series(
    const std::map<std::string, std::vector<ScalingRow>>& by_series) {
  std::vector<ChartSeries> series;
  for (const auto& [name, members] : by_series) {
    ChartSeries line{name, {}};
    const RunRow* base = nullptr;
    int most_ranks = 1;
    for (const ScalingRow& s : members) {
      const DistributedSummary& d = s.row->run->record.distributed;
      line.points.push_back(
          {static_cast<double>(d.world_size), d.global_throughput,
           std::isfinite(s.efficiency) ? format_fixed_or(s.efficiency * 100, 1) + "%" : ""});
      if (base == nullptr) base = s.baseline;
      most_ranks = std::max(most_ranks, d.world_size);
    }
    if (base == nullptr) {
      series.push_back(line);
      continue;
    }
    const double one = median_of(base->run->record);
    line.points.push_back({1, one, "1 GPU"});
    series.push_back(line);
    const double n = static_cast<double>(most_ranks);
    series.push_back({"ideal linear: " + name, {{1, one, ""}, {n, n * one, ""}}, true});
  }
  return series;
}

// The table: per workload its 1-GPU row (when in the set), then a row per data-parallel record.
void write_scaling_table(std::ostream& out,
                         const std::map<std::string, std::vector<ScalingRow>>& by_series) {
  out << "<table><tr><th>workload</th><th>GPUs</th><th>global samples/s</th><th>per GPU</th>"
         "<th>scaling efficiency</th><th>interconnect</th><th>all-reduce bus GB/s</th>"
         "<th>parameters identical</th><th>file</th></tr>\n";
  for (const auto& [name, members] : by_series) {
    const RunRow* shown_base = nullptr;
    for (const ScalingRow& s : members) {
      if (s.baseline != nullptr && s.baseline != shown_base) {
        shown_base = s.baseline;
        const RunRecord& b = s.baseline->run->record;
        out << "<tr><td>" << html_escape(scaling_workload(b)) << "</td><td class=\"n\">1</td>"
            << "<td class=\"n\">" << format_grouped(median_of(b)) << "</td><td class=\"n\">"
            << format_grouped(median_of(b)) << "</td><td>1-GPU baseline</td><td>one process</td>"
            << "<td class=\"n\">—</td><td>—</td><td>" << html_escape(s.baseline->run->path)
            << "</td></tr>\n";
      }
      const RunRecord& r = s.row->run->record;
      const DistributedSummary& d = r.distributed;
      out << "<tr><td>" << html_escape(scaling_workload(r)) << "</td><td class=\"n\">"
          << d.world_size << "</td><td class=\"n\">" << format_grouped(d.global_throughput)
          << "</td><td class=\"n\">" << format_grouped(median_of(r)) << "</td><td class=\"n\">"
          << (std::isfinite(s.efficiency)
                  ? format_fixed_or(s.efficiency * 100, 1) + "% (" + html_escape(s.basis) + ")"
                  : std::string("n/a"))
          << "</td><td>" << html_escape(d.interconnect.empty() ? "n/a" : d.interconnect)
          << "</td><td class=\"n\">" << format_fixed_or(d.allreduce_bus_gbps, 1)
          << (std::isfinite(d.allreduce_share_of_step)
                  ? " (" + format_fixed_or(d.allreduce_share_of_step * 100, 0) + "% of a step)"
                  : "")
          << "</td><td>" << (d.parameters_identical ? "yes" : "no") << "</td><td>"
          << html_escape(s.row->run->path) << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

// Data-parallel training records: global throughput against the GPU count beside ideal linear
// scaling, and their table. Nothing at all without such a record, so that reports of
// single-process files are unchanged.
void write_scaling_section(std::ostream& out, const std::vector<RunRow>& rows) {
  std::map<std::string, std::vector<ScalingRow>> by_series;
  for (const auto& row : rows) {
    if (data_parallel(row.run->record)) {
      by_series[scaling_series(row.run->record)].push_back(scaling_row(row, rows));
    }
  }
  if (by_series.empty()) return;
  for (auto& [name, members] : by_series) {
    std::stable_sort(members.begin(), members.end(), [](const ScalingRow& a, const ScalingRow& b) {
      return a.row->run->record.distributed.world_size < b.row->run->record.distributed.world_size;
    });
  }
  out << "<h2>Data-parallel scaling</h2>\n";
  out << svg_line_chart("Global training throughput against the number of GPUs",
                        "GPUs (data-parallel ranks)", "global samples/s",
                        scaling_chart_series(by_series));
  write_scaling_table(out, by_series);
  out << "<p class=\"note\">Global: samples/s of all ranks together (median over windows of the "
         "per-window sums); per GPU: rank 0's median window. Scaling efficiency = global / "
         "(GPUs x 1-GPU samples/s): the record's own where it has a baseline, else against the "
         "same workload's single-process record in this report. Dashed: ideal linear scaling "
         "from the 1-GPU point. All-reduce bus GB/s: the gradient buckets' all-reduce timed "
         "alone after the run (docs/distributed.md).</p>\n";
}

void write_runs_table(std::ostream& out, const std::vector<RunRow>& rows) {
  out << "<h2>Runs</h2>\n<table><tr><th>file</th><th>GPU</th><th>datasheet</th><th>workload</th>"
         "<th>samples/s</th><th>±95% CI</th><th>TFLOP/s</th><th>% of peak</th><th>samples/J</th>"
         "<th>USD / M samples</th><th>90 epochs ImageNet</th><th>software</th></tr>\n";
  for (const auto& row : rows) {
    const RunRecord& r = row.run->record;
    const Efficiency& e = row.eff;
    const double projected = imagenet_projection_seconds(r);  // as the console shows it
    out << "<tr><td>" << html_escape(row.run->path) << "</td><td>" << html_escape(r.device.name)
        << "</td><td>" << html_escape(row.spec != nullptr ? row.spec->name : "no datasheet entry")
        << "</td><td>" << html_escape(workload_key(r).label()) << "</td><td class=\"n\">"
        << format_grouped(median_of(r)) << "</td><td class=\"n\">"
        << (r.throughput.count > 1 ? format_fixed_or(r.throughput.ci95_half_width(), 1) : "n/a")
        << "</td><td class=\"n\">" << format_fixed_or(e.achieved_flops_per_second / 1e12, 1)
        << "</td><td class=\"n\">" << format_fixed_or(e.fraction_of_peak * 100, 1)
        << "</td><td class=\"n\">" << format_fixed_or(e.samples_per_joule, 2)
        << (e.power_basis.empty() ? "" : " (" + html_escape(e.power_basis) + ")")
        << "</td><td class=\"n\">" << format_fixed_or(e.cost_usd_per_million_samples, 3)
        << "</td><td class=\"n\">"
        << (std::isfinite(projected) ? format_fixed_or(projected / 3600, 1) + " h" : "n/a")
        << "</td><td>" << html_escape(software_text(r.device)) << "</td></tr>\n";
  }
  out << "</table>\n";
}

// The cost basis (the last run's that has one), then per run how its datasheet entry was
// matched, the efficiency notes and the run's own warnings.
void write_run_notes(std::ostream& out, const std::vector<RunRow>& rows) {
  out << "<p class=\"note\">Cost basis: ";
  std::string basis;
  for (const auto& row : rows) {
    if (!row.eff.cost_basis.empty()) basis = row.eff.cost_basis;
  }
  out << html_escape(basis.empty() ? "no price known" : basis)
      << ". Notes:</p><ul class=\"note\">\n";
  for (const auto& row : rows) {
    out << "<li>" << html_escape(row.run->path) << ": " << html_escape(row.match_reason);
    for (const auto& n : row.eff.notes) out << "; " << html_escape(n);
    for (const auto& w : row.run->record.warnings) out << "; warning: " << html_escape(w);
    out << "</li>\n";
  }
  out << "</ul>\n";
}

void write_published_table(std::ostream& out, const std::vector<PublishedResult>& published) {
  out << "<h2>Published figures <span "
         "class=\"tag\">published</span></h2>\n<table><tr><th>GPU</th>"
         "<th>precision</th><th>images/s (total)</th><th>per "
         "GPU</th><th>setup</th><th>source</th></tr>\n";
  for (const auto& p : published) {
    out << "<tr><td>" << html_escape(p.gpu) << "</td><td>" << html_escape(p.precision)
        << "</td><td class=\"n\">" << format_grouped(p.images_per_second_low)
        << (p.images_per_second_high > p.images_per_second_low
                ? "–" + format_grouped(p.images_per_second_high)
                : "")
        << "</td><td class=\"n\">" << format_grouped(p.per_gpu()) << "</td><td>"
        << html_escape(p.setup) << "</td><td>" << html_escape(p.source) << "</td></tr>\n";
  }
  out << "</table>\n";
}

}  // namespace

void write_results_report(std::ostream& out, const LoadedResults& results,
                          const SpecDatabase* specs, const std::vector<PublishedResult>& published,
                          const HtmlReportOptions& options) {
  options.validate();
  if (results.empty() && published.empty()) {
    throw ConfigError("report: no result files and no published figures to show");
  }
  const std::vector<RunRow> rows = run_rows(results.runs, specs, options);
  write_page_head(out, options, results.runs.size() + results.inference.size());
  write_training_charts(out, rows);
  write_resnet50_beside_published(out, rows, published);
  write_scaling_section(out, rows);
  write_inference_sections(out, results.inference, specs, options);
  if (!rows.empty()) {
    write_runs_table(out, rows);
    write_run_notes(out, rows);
  }
  if (!published.empty()) write_published_table(out, published);
  out << "<p class=\"note\">Generated by gpuperf. Self-contained: no scripts, no external "
         "resources.</p>\n</body></html>\n";
}

}  // namespace gpuperf
