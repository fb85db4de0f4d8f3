// Microbenchmark reports as Markdown (report/micro_markdown.h).
#include "gpuperf/report/micro_markdown.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gpuperf/base/format.h"
#include "gpuperf/results/micro_datasheet.h"

namespace gpuperf {
namespace {

// The P2P matrix (one-way GB/s and the link of each ordered pair) and the collectives in
// nccl-tests' columns, where the report has them.
void write_interconnect_markdown(const MicroReport& report, std::ostream& out) {
  if (!report.peer_links.empty()) {
    out << "\n### P2P copies between GPUs\n\n"
           "| from | to | link | P2P access | one way GB/s | bidirectional GB/s | latency us |\n"
           "|---:|---:|---|---|---:|---:|---:|\n";
    for (const PeerLink& l : report.peer_links) {
      const std::string pair = std::to_string(l.src) + "->" + std::to_string(l.dst);
      const std::string both =
          std::to_string(std::min(l.src, l.dst)) + "<->" + std::to_string(std::max(l.src, l.dst));
      const auto value = [&](const std::string& name) {
        const MicroResult* r = report.find(name);
        return r ? format_readable(r->value(), "-") : std::string("-");
      };
      out << "| " << l.src << " | " << l.dst << " | " << (l.detail.empty() ? l.type : l.detail)
          << " | " << (l.p2p_access ? "on" : "off") << " | " << value("p2p/copy/" + pair) << " | "
          << value("p2p/bidirectional/" + both) << " | " << value("p2p/latency/" + pair) << " |\n";
    }
  }
  bool any_collective = false;
  for (const auto& r : report.results) {
    if (r.category != "collective") continue;
    if (!any_collective) {
      out << "\n### Collectives";
      if (!report.interconnect.empty()) out << " (" << report.interconnect << ")";
      out << "\n\nnccl-tests' definitions: algbw = S / t, busbw = algbw x factor (all-reduce "
             "2(n-1)/n, all-gather and reduce-scatter (n-1)/n); t = the slowest rank's mean time "
             "per call.\n\n"
             "| collective | size S | time us | algbw GB/s | busbw GB/s | datasheet | status |\n"
             "|---|---:|---:|---:|---:|---:|---|\n";
      any_collective = true;
    }
    out << "| " << r.variant << " | " << r.shape << " | "
        << format_readable(r.figure("time_us"), "-") << " | "
        << format_readable(r.figure("algbw_gb_s"), "-") << " | " << format_readable(r.value(), "-")
        << " | " << format_readable(r.datasheet, "-") << " | " << r.status << " |\n";
  }
}

}  // namespace

void write_seeds_table_markdown(std::ostream& out, const std::vector<MicroReport>& reports) {
  const auto& columns = seeds_table_columns();
  out << "|";
  for (const auto& c : columns) out << " " << c << " |";
  out << "\n|";
  for (std::size_t i = 0; i < columns.size(); ++i) out << (i == 0 ? "---|" : "---:|");
  out << "\n";
  for (const auto& report : reports) {
    out << "|";
    for (const auto& c : seeds_table_row(report)) out << " " << c << " |";
    out << "\n";
  }
}

void write_markdown(std::ostream& out, const MicroReport& report) {
  out << "## " << report.label() << "\n\n";
  out << "Measured / datasheet. TFLOP/s for FP32..FP8 (INT8: TOP/s), dense GEMM; memory: device "
         "copy, bytes read + written; link: fastest one-way P2P copy between two GPUs against "
         "the link's per-direction figure (half the quoted bidirectional total)"
      << (report.peer_links.empty() ? ", not measured in this run." : ".");
  if (!report.datasheet_name.empty()) out << " Datasheet: " << report.datasheet_name << ".";
  out << "\n\n";
  write_seeds_table_markdown(out, {report});
  out << "\n| measurement | shape | median | unit | spread (q1..q3) | datasheet | % of datasheet | "
         "note |\n"
         "|---|---|---:|---|---|---:|---:|---|\n";
  for (const auto& r : report.results) {
    out << "| " << r.name << " | " << r.shape << " | ";
    if (r.ok()) {
      out << format_readable(r.summary.median, "-") << " | " << r.unit << " | "
          << format_readable(r.summary.q1, "-") << ".." << format_readable(r.summary.q3, "-");
    } else {
      out << r.status << " | " << r.unit << " | -";
    }
    out << " | " << (r.datasheet == 0 ? std::string("n/a") : format_readable(r.datasheet, "-"))
        << " | "
        << (std::isfinite(r.percent_of_datasheet) ? format_fixed(r.percent_of_datasheet, 0) + "%"
                                                  : "-")
        << " | " << r.note << " |\n";
  }
  write_interconnect_markdown(report, out);
  if (!report.warnings.empty()) {
    out << "\n";
    for (const auto& w : report.warnings) out << "- warning: " << w << "\n";
  }
}

}  // namespace gpuperf
