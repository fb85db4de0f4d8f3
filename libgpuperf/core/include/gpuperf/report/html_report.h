#pragma once
// A self-contained HTML report (inline SVG, no scripts, no network) from result files: throughput
// per GPU and precision, fraction of datasheet peak, samples per joule, and measured figures
// beside published ones; for inference results, per-call latency per batch size, the
// throughput-versus-latency curve and, where simulated, the serving curve.
//
//   auto runs = gpuperf::load_result_files(paths);
//   auto db = gpuperf::SpecDatabase::load_default();
//   auto published = gpuperf::load_published_results(
//       gpuperf::find_data_file("published_results.json"));
//   std::ofstream html("report.html");
//   gpuperf::write_html_report(html, runs, &db, published);
//   gpuperf::write_results_report(html, gpuperf::load_results(paths), &db, published);

#include <ostream>
#include <limits>
#include <string>
#include <vector>

#include "gpuperf/report/result_files.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {

/// What the report shows.
struct HtmlReportOptions {
  std::string title = "gpuperf report";
  /// A line under the title, e.g. "Example data: published figures only, not measurements".
  std::string subtitle;
  /// Assumptions for cost and power columns.
  EfficiencyOptions efficiency;

  /// Throws ConfigError naming the first bad field (the efficiency assumptions:
  /// EfficiencyOptions::validate()).
  void validate() const;
};

/// One horizontal bar of a chart.
struct ChartBar {
  std::string label;
  double value = 0;
  std::string series;  ///< "measured" or "published": picks the colour and the legend entry
  std::string tooltip;
  /// A whisker from `low` to `high` (the same unit as `value`, e.g. a median's interquartile
  /// range); NaN for none. Drawn clamped to the axis, so that a wide interval never crosses
  /// the origin or the labels.
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};

/// Renders a horizontal bar chart as an inline <svg> element. Bars with non-finite or negative
/// values are left out; an empty chart says so instead of drawing axes.
[[nodiscard]] std::string svg_bar_chart(const std::string& title, const std::string& unit,
                                        const std::vector<ChartBar>& input);

/// One point of a line chart.
struct ChartPoint {
  double x = 0;
  double y = 0;
  std::string label;  ///< written beside the point, e.g. "bs 64"
};

/// One line of a line chart.
struct ChartSeries {
  std::string name;  ///< the legend entry
  std::vector<ChartPoint> points;
  /// A reference line (e.g. ideal linear scaling): drawn dashed, without point markers, in the
  /// colour of the series before it, so that it reads as that series' companion.
  bool dashed = false;
};

/// How an axis maps values.
enum class AxisScale {
  kLinear,  ///< from 0, ticks at 1, 2, 2.5 or 5 x 10^k
  kLog2,    ///< powers of two (batch sizes, latencies that double with them); values > 0 only
};

/// Tick values for an axis holding values up to `max` (> 0) from 0: four to six ticks at a
/// "nice" step (1, 2, 2.5 or 5 x 10^k), the last at or above `max`.
[[nodiscard]] std::vector<double> nice_ticks(double max);

/// Renders series as lines through their points (in x order), as an inline <svg> element with a
/// legend. Points that share an x are each drawn, and the line passes through their median. Linear
/// axes start at 0; a log2 axis spans the powers of two around its values. Points with non-finite
/// or negative coordinates (or not positive, on a log2 axis) are left out; an empty chart says so
/// instead of drawing axes. A point label that would overlap one already drawn is left to the
/// point's tooltip.
[[nodiscard]] std::string svg_line_chart(const std::string& title, const std::string& x_unit,
                                         const std::string& y_unit,
                                         const std::vector<ChartSeries>& input,
                                         AxisScale x_scale = AxisScale::kLinear);

/// Makes the bar labels distinct: a label shared by several bars gets the file name of its
/// `paths[i]` (one per bar, without folders; "" for none) appended, and any still equal a " #n"
/// suffix. Error when the counts differ.
void distinguish_labels(std::vector<ChartBar>& bars, const std::vector<std::string>& paths);

/// Escapes &, <, >, " and ' for HTML text and attributes, and shows control characters other
/// than line breaks and tabs, and invisible Unicode controls (U+202E ...), as printable() does.
[[nodiscard]] std::string html_escape(const std::string& text);

/// Writes the whole page. `specs` may be null (no peaks); `published` may be empty. Runs may be
/// empty only when published figures are given (a page of published figures alone).
/// ConfigError when both are empty or `options` is invalid.
void write_html_report(std::ostream& out, const std::vector<LoadedRun>& runs,
                       const SpecDatabase* specs, const std::vector<PublishedResult>& published,
                       const HtmlReportOptions& options = {});

/// The same page from result files of both kinds: training sections as write_html_report(), a
/// "Data-parallel scaling" section when a training record ran on more than one rank (global
/// samples/s against the GPU count, single-process records of the same workload as the 1-GPU
/// point, and a table of scaling efficiency, interconnect and all-reduce bandwidth), then
/// per model an inference section (throughput-versus-latency chart, batch-1 latency, a latency
/// table per batch size, the simulated serving curve where there is one, labelled SIMULATED).
/// ConfigError when there are no results and no published figures, or `options` is invalid.
void write_results_report(std::ostream& out, const LoadedResults& results,
                          const SpecDatabase* specs, const std::vector<PublishedResult>& published,
                          const HtmlReportOptions& options = {});

}  // namespace gpuperf
