// HTML report: inline SVG bar charts and tables, no scripts and nothing fetched, so the page
// opens the same offline, in a mail attachment or in a CI artifact viewer.
#include "gpuperf/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "gpuperf/error.h"
#include "gpuperf/report/compare.h"

namespace gpuperf {
namespace {

std::string num(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << v;
  return out.str();
}

// Thousands separators make throughput columns readable at a glance.
std::string grouped(double v) {
  if (!std::isfinite(v)) return "n/a";
  std::string digits = num(std::abs(v), 0);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return (v < 0 ? "-" : "") + digits;
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
              : " · " + r.config.graph_mode);
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

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
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

std::string svg_bar_chart(const std::string& title, const std::string& unit,
                          const std::vector<ChartBar>& input) {
  std::vector<ChartBar> bars;
  for (const auto& b : input) {
    if (std::isfinite(b.value) && b.value >= 0) bars.push_back(b);
  }
  std::ostringstream s;
  const int width = 960, label_width = 380, value_width = 110, row = 24, top = 34;
  const int plot_width = width - label_width - value_width;
  if (bars.empty()) {
    s << "<p class=\"note\">" << html_escape(title) << ": no data.</p>\n";
    return s.str();
  }
  double max_value = 0;
  for (const auto& b : bars) {
    max_value = std::max(max_value, b.value + (std::isfinite(b.error) ? b.error : 0));
  }
  if (!(max_value > 0)) max_value = 1;
  bool has_published = false, has_measured = false;
  for (const auto& b : bars) (b.series == "published" ? has_published : has_measured) = true;
  const int height = top + row * static_cast<int>(bars.size()) + 30;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\""
    << html_escape(title) << "\">\n";
  s << "<text x=\"0\" y=\"18\" font-size=\"15\" font-weight=\"bold\">" << html_escape(title) << " ("
    << html_escape(unit) << ")</text>\n";
  // Legend, only for series present, so a chart of measured bars alone has no grey swatch.
  int lx = width - 260;
  for (const char* series : {"measured", "published"}) {
    if ((std::string(series) == "published" && !has_published) ||
        (std::string(series) == "measured" && !has_measured)) {
      continue;
    }
    s << "<rect x=\"" << lx << "\" y=\"6\" width=\"12\" height=\"12\" fill=\"" << colour(series)
      << "\"/><text x=\"" << lx + 16 << "\" y=\"17\" font-size=\"12\">" << series << "</text>\n";
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
      << num(std::max(w, 1.0), 1) << "\" height=\"" << row - 8 << "\" fill=\"" << colour(b.series)
      << "\"/>";
    if (b.error > 0 && std::isfinite(b.error)) {
      const double x0 = label_width + (b.value - b.error) / max_value * plot_width;
      const double x1 = label_width + (b.value + b.error) / max_value * plot_width;
      s << "<line x1=\"" << num(x0, 1) << "\" x2=\"" << num(x1, 1) << "\" y1=\"" << y + 12
        << "\" y2=\"" << y + 12 << "\" stroke=\"#000\" stroke-width=\"1.5\"/>";
    }
    const double text_value = b.value;
    s << "<text x=\"" << num(label_width + std::max(w, 1.0) + 6, 1) << "\" y=\"" << y + 16
      << "\" font-size=\"12\">"
      << (text_value >= 100 ? grouped(text_value) : num(text_value, text_value >= 10 ? 1 : 3))
      << "</text></g>\n";
  }
  const int axis_y = top + row * static_cast<int>(bars.size()) + 4;
  s << "<line x1=\"" << label_width << "\" x2=\"" << label_width + plot_width << "\" y1=\""
    << axis_y << "\" y2=\"" << axis_y << "\" stroke=\"#999\"/>";
  s << "<text x=\"" << label_width << "\" y=\"" << axis_y + 16 << "\" font-size=\"11\">0</text>";
  s << "<text x=\"" << label_width + plot_width << "\" y=\"" << axis_y + 16
    << "\" font-size=\"11\" text-anchor=\"end\">"
    << (max_value >= 100 ? grouped(max_value) : num(max_value, 2)) << "</text>\n";
  s << "</svg>\n";
  return s.str();
}

void write_html_report(std::ostream& out, const std::vector<LoadedRun>& runs,
                       const SpecDatabase* specs, const std::vector<PublishedResult>& published,
                       const HtmlReportOptions& options) {
  if (runs.empty() && published.empty()) {
    throw ConfigError("report: no result files and no published figures to show");
  }
  struct Row {
    const LoadedRun* run;
    const GpuSpec* spec;
    std::string match_reason;
    Efficiency eff;
  };
  std::vector<Row> rows;
  for (const auto& run : runs) {
    const RunRecord& r = run.record;
    SpecMatch m;
    if (specs != nullptr)
      m = specs->match_device(r.device.name, r.device.sm_count, r.device.memory_bytes);
    else
      m.reason = "no spec database loaded";
    rows.push_back({&run, m.spec, m.reason, compute_efficiency(r, m.spec, options.efficiency)});
  }
  // Charts group by model so that bars on one axis share a unit of work.
  std::map<std::string, std::vector<const Row*>> by_model;
  for (const auto& row : rows) by_model[row.run->record.config.model].push_back(&row);

  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
      << html_escape(options.title) << "</title>\n<style>" << kStyle << "</style></head><body>\n";
  out << "<h1>" << html_escape(options.title) << "</h1>\n";
  if (!options.subtitle.empty())
    out << "<p class=\"sub\">" << html_escape(options.subtitle) << "</p>\n";
  out << "<p class=\"note\">" << runs.size()
      << " result file(s). Peaks are dense datasheet figures "
      << "for the precision used (fp16/bf16: tensor cores with FP32 accumulation). Published "
         "figures "
      << "come from other software stacks and are labelled <span "
         "class=\"tag\">published</span>.</p>\n";

  for (const auto& [model, members] : by_model) {
    std::vector<ChartBar> throughput, fraction, per_joule;
    for (const Row* row : members) {
      const RunRecord& r = row->run->record;
      const std::string label = run_label(r);
      throughput.push_back({label, median_of(r), "measured",
                            label + ": median of " + std::to_string(r.window_throughput.size()) +
                                " windows, " + row->run->path,
                            r.throughput.count > 1 ? r.throughput.ci95_half_width() : 0});
      fraction.push_back({label + " (" + row->eff.peak_key + ")", row->eff.fraction_of_peak * 100,
                          "measured", label + " vs datasheet " + row->eff.peak_key + " peak", 0});
      per_joule.push_back({label + " (" + row->eff.power_basis + ")", row->eff.samples_per_joule,
                           "measured", label + ", power: " + row->eff.power_basis, 0});
    }
    out << "<h2>" << html_escape(model) << " ("
        << html_escape(members.front()->run->record.config.workload) << ")</h2>\n";
    out << svg_bar_chart("Throughput per GPU and precision", "samples/s, median window, ±95% CI",
                         throughput);
    out << svg_bar_chart("Fraction of datasheet dense peak", "% of peak", fraction);
    out << svg_bar_chart("Samples per joule", "samples/J; TDP-based where not measured", per_joule);
  }

  // Measured ResNet-50 training beside published figures: the comparison the GPU guides make.
  std::vector<ChartBar> beside;
  for (const auto& row : rows) {
    const RunRecord& r = row.run->record;
    if (r.config.model == "resnet50" && r.config.workload == "train") {
      beside.push_back({"measured: " + run_label(r), median_of(r), "measured", row.run->path, 0});
    }
  }
  for (const auto& p : published) {
    if (p.model != "resnet50") continue;
    std::string label = "published: " + p.gpu + " · " + p.precision;
    if (p.gpu_count > 1) label += " (per GPU of " + std::to_string(p.gpu_count) + ")";
    beside.push_back({label, p.per_gpu(), "published", p.setup + " — " + p.source, 0});
  }
  if (!beside.empty()) {
    out << "<h2>ResNet-50 training: measured beside published (per GPU)</h2>\n";
    out << svg_bar_chart("ResNet-50 v1.5 training throughput per GPU", "images/s", beside);
  }

  if (!rows.empty()) {
    out << "<h2>Runs</h2>\n<table><tr><th>file</th><th>GPU</th><th>datasheet</th><th>workload</th>"
           "<th>samples/s</th><th>±95% CI</th><th>TFLOP/s</th><th>% of peak</th><th>samples/J</th>"
           "<th>USD / M samples</th><th>90 epochs ImageNet</th><th>software</th></tr>\n";
    for (const auto& row : rows) {
      const RunRecord& r = row.run->record;
      const Efficiency& e = row.eff;
      out << "<tr><td>" << html_escape(row.run->path) << "</td><td>" << html_escape(r.device.name)
          << "</td><td>" << html_escape(row.spec != nullptr ? row.spec->name : "no datasheet entry")
          << "</td><td>" << html_escape(workload_key(r).label()) << "</td><td class=\"n\">"
          << grouped(median_of(r)) << "</td><td class=\"n\">"
          << (r.throughput.count > 1 ? num(r.throughput.ci95_half_width(), 1) : "n/a")
          << "</td><td class=\"n\">" << num(e.achieved_flops_per_second / 1e12, 1)
          << "</td><td class=\"n\">" << num(e.fraction_of_peak * 100, 1) << "</td><td class=\"n\">"
          << num(e.samples_per_joule, 2)
          << (e.power_basis.empty() ? "" : " (" + html_escape(e.power_basis) + ")")
          << "</td><td class=\"n\">" << num(e.cost_usd_per_million_samples, 3)
          << "</td><td class=\"n\">"
          << (std::isfinite(e.imagenet_90_epochs_seconds)
                  ? num(e.imagenet_90_epochs_seconds / 3600, 1) + " h"
                  : "n/a")
          << "</td><td>"
          << html_escape("LibTorch " + r.device.libtorch_version + ", CUDA " +
                         r.device.cuda_runtime_version + ", driver " + r.device.driver_version)
          << "</td></tr>\n";
    }
    out << "</table>\n<p class=\"note\">Cost basis: ";
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

  if (!published.empty()) {
    out << "<h2>Published figures <span "
           "class=\"tag\">published</span></h2>\n<table><tr><th>GPU</th>"
           "<th>precision</th><th>images/s (total)</th><th>per "
           "GPU</th><th>setup</th><th>source</th></tr>\n";
    for (const auto& p : published) {
      out << "<tr><td>" << html_escape(p.gpu) << "</td><td>" << html_escape(p.precision)
          << "</td><td class=\"n\">" << grouped(p.images_per_second_low)
          << (p.images_per_second_high > p.images_per_second_low
                  ? "–" + grouped(p.images_per_second_high)
                  : "")
          << "</td><td class=\"n\">" << grouped(p.per_gpu()) << "</td><td>" << html_escape(p.setup)
          << "</td><td>" << html_escape(p.source) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  out << "<p class=\"note\">Generated by gpuperf. Self-contained: no scripts, no external "
         "resources.</p>\n</body></html>\n";
}

}  // namespace gpuperf
