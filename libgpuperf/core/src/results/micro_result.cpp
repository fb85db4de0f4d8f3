// Microbenchmark arithmetic, datasheet comparison and reporters. Torch-free (compiled into
// gpuperf_base), so nlohmann-json stays away from the PyTorch wheel's headers.
#include "gpuperf/results/micro_result.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/base/format.h"
#include "gpuperf/specs/specs.h"
#include "base/json.h"

namespace gpuperf {
namespace {

using nlohmann::json;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string dtype_choices() {
  std::string out;
  for (GemmDtype d : all_gemm_dtypes()) out += (out.empty() ? "" : ", ") + to_string(d);
  return out;
}

// Strictly positive decimal integer; no sign, no trailing characters.
bool parse_positive(const std::string& text, std::int64_t& value) {
  if (text.empty() || text.size() > 12 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  value = std::stoll(text);
  return value > 0;
}

json number(double value) { return detail::json_number(value); }

json summary_json(const Summary& s) {
  return {{"count", s.count},
          {"median", number(s.median)},
          {"mean", number(s.mean)},
          {"stdev", number(s.stdev)},
          {"min", number(s.min)},
          {"max", number(s.max)},
          {"q1", number(s.q1)},
          {"q3", number(s.q3)},
          {"iqr", number(s.iqr)},
          {"ci95_low", number(s.ci95_low)},
          {"ci95_high", number(s.ci95_high)}};
}

// "measured / datasheet"; a datasheet 0 means the part has no such path at all.
std::string cell(double measured, double datasheet) {
  const std::string sheet = datasheet == 0 ? "n/a" : format_readable(datasheet, "-");
  return format_readable(measured, "-") + " / " + sheet;
}

std::string gpu_label(const MicroReport& r) {
  std::string label = r.device.name.empty() ? "unknown device" : printable(r.device.name);
  if (r.variant == "cpu") label += " (CPU variant)";
  return label;
}

json figures_json(const MicroResult& r) {
  json out = json::object();
  for (const auto& [key, value] : r.figures) out[key] = number(value);
  return out;
}

double figure(const MicroResult& r, const std::string& key) {
  for (const auto& [k, v] : r.figures) {
    if (k == key) return v;
  }
  return kNotAvailable;
}

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
        << format_readable(figure(r, "time_us"), "-") << " | "
        << format_readable(figure(r, "algbw_gb_s"), "-") << " | " << format_readable(r.value(), "-")
        << " | " << format_readable(r.datasheet, "-") << " | " << r.status << " |\n";
  }
}

}  // namespace

const std::vector<GemmDtype>& all_gemm_dtypes() {
  static const std::vector<GemmDtype> dtypes = {
      GemmDtype::kFp64, GemmDtype::kFp32, GemmDtype::kTf32, GemmDtype::kFp16,
      GemmDtype::kBf16, GemmDtype::kInt8, GemmDtype::kFp8};
  return dtypes;
}

std::string to_string(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp64:
      return "fp64";
    case GemmDtype::kFp32:
      return "fp32";
    case GemmDtype::kTf32:
      return "tf32";
    case GemmDtype::kFp16:
      return "fp16";
    case GemmDtype::kBf16:
      return "bf16";
    case GemmDtype::kInt8:
      return "int8";
    case GemmDtype::kFp8:
      return "fp8";
  }
  return "unknown";
}

GemmDtype parse_gemm_dtype(const std::string& text, const std::string& option) {
  const std::string key = lower(trim(text));
  for (GemmDtype d : all_gemm_dtypes()) {
    if (key == to_string(d)) return d;
  }
  throw ConfigError(option,
                    "unknown data type '" + text + "' (choose from " + dtype_choices() + ")");
}

std::vector<GemmDtype> parse_gemm_dtypes(const std::string& list, const std::string& option) {
  std::vector<GemmDtype> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (trim(item).empty()) {
      throw ConfigError(option,
                        "empty item in '" + list + "' (choose from " + dtype_choices() + ")");
    }
    const GemmDtype d = parse_gemm_dtype(item, option);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string GemmShape::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

GemmShape parse_gemm_shape(const std::string& text, const std::string& option) {
  const auto bad = [&] {
    return ConfigError(option, "must be N or MxNxK with positive integers, got '" + text + "'");
  };
  std::vector<std::int64_t> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = text.find_first_of("xX", start);
    std::int64_t value = 0;
    if (!parse_positive(text.substr(start, x == std::string::npos ? std::string::npos : x - start),
                        value)) {
      throw bad();
    }
    parts.push_back(value);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (parts.size() == 1) return {parts[0], parts[0], parts[0]};
  if (parts.size() != 3) throw bad();
  return {parts[0], parts[1], parts[2]};
}

double gemm_flops(const GemmShape& shape) {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
         static_cast<double>(shape.k);
}

int rotation_sets(double set_bytes, double cache_bytes, double cache_multiple, int min_sets) {
  if (!(set_bytes > 0))
    throw ConfigError("rotation_sets: set_bytes must be > 0, got " + std::to_string(set_bytes));
  if (min_sets < 1)
    throw ConfigError("rotation_sets: min_sets must be >= 1, got " + std::to_string(min_sets));
  const double needed = std::ceil(std::max(0.0, cache_bytes * cache_multiple) / set_bytes);
  return std::max(min_sets, static_cast<int>(std::min(needed, 1e6)));
}

std::string to_string(MemoryOp op) {
  switch (op) {
    case MemoryOp::kDeviceCopy:
      return "device-copy";
    case MemoryOp::kDeviceRead:
      return "device-read";
    case MemoryOp::kDeviceWrite:
      return "device-write";
    case MemoryOp::kHostToDevicePinned:
      return "h2d-pinned";
    case MemoryOp::kDeviceToHostPinned:
      return "d2h-pinned";
    case MemoryOp::kHostToDevicePageable:
      return "h2d-pageable";
    case MemoryOp::kDeviceToHostPageable:
      return "d2h-pageable";
    case MemoryOp::kHostCopy:
      return "host-copy";
    case MemoryOp::kHostRead:
      return "host-read";
    case MemoryOp::kHostWrite:
      return "host-write";
  }
  return "unknown";
}

double memory_bytes_per_call(MemoryOp op, double buffer_bytes) {
  const bool copy_within_one_memory = op == MemoryOp::kDeviceCopy || op == MemoryOp::kHostCopy;
  return copy_within_one_memory ? 2 * buffer_bytes : buffer_bytes;
}

double rate(double work_per_call, std::int64_t calls, double seconds, double unit_scale) {
  if (!(seconds > 0))
    throw ConfigError("rate: seconds must be > 0, got " + std::to_string(seconds));
  return work_per_call * static_cast<double>(calls) / seconds / unit_scale;
}

const MicroResult* MicroReport::find(const std::string& name) const {
  for (const auto& r : results) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

namespace {

// Link figures in bytes/s for a P2P or collective result: per direction (or the bidirectional
// total), over NVLink where a measured pair is on NVLink (or no pair says), else over PCIe.
void link_datasheet(const MicroReport& report, const GpuSpec& spec, const MicroResult& r,
                    std::string& key, double& base) {
  bool nvlink = report.peer_links.empty();
  for (const PeerLink& link : report.peer_links) {
    if (link.type.rfind("NVLink", 0) == 0 || link.type == "unknown") nvlink = true;
  }
  const bool total = r.category == "p2p" && r.variant == "bidirectional";
  if (nvlink && spec.link_bytes_per_s > 0) {
    key = total ? "link_total" : "link_per_direction";
    base = total ? spec.link_bytes_per_s : spec.link_bytes_per_s / 2;
  } else {
    key = total ? "pcie_total" : "pcie_per_direction";
    base = spec.pcie_bytes_per_s_per_direction() * (total ? 2 : 1);
  }
}

}  // namespace

void apply_datasheet(MicroReport& report, const GpuSpec* spec) {
  report.datasheet_id = spec ? spec->id : "";
  report.datasheet_name = spec ? spec->name : "";
  report.datasheet_link_gb_s = spec ? spec->link_bytes_per_s / 1e9 : kNotAvailable;
  for (MicroResult& r : report.results) {
    r.datasheet = kNotAvailable;
    r.percent_of_datasheet = kNotAvailable;
    r.datasheet_key.clear();
    if (spec == nullptr) continue;
    double base = kNotAvailable;  // FLOP/s or bytes/s
    if (r.category == "gemm") {
      r.datasheet_key = r.variant;
      if (r.variant == "fp64") {
        // cuBLAS runs fp64 GEMMs on the FP64 tensor cores (DMMA) where the chip has them.
        const double tensor = spec->peak("fp64_tensor");
        if (std::isfinite(tensor) && tensor > 0) r.datasheet_key = "fp64_tensor";
      }
      base = spec->peak(r.datasheet_key);
    } else if (r.variant.rfind("device-", 0) == 0) {
      r.datasheet_key = "memory_bandwidth";
      base = spec->memory_bandwidth_bytes_per_s;
    } else if (r.variant.rfind("h2d-", 0) == 0 || r.variant.rfind("d2h-", 0) == 0) {
      r.datasheet_key = "pcie_per_direction";
      base = spec->pcie_bytes_per_s_per_direction();
    } else if ((r.category == "p2p" && r.variant != "latency") || r.category == "collective") {
      link_datasheet(report, *spec, r, r.datasheet_key, base);
    }
    if (r.datasheet_key.empty()) continue;
    r.datasheet = std::isfinite(base) ? base / r.unit_scale : kNotAvailable;
    if (r.ok() && std::isfinite(r.datasheet) && r.datasheet > 0) {
      r.percent_of_datasheet = 100 * r.value() / r.datasheet;
    }
  }
}

const std::vector<std::string>& seeds_table_columns() {
  static const std::vector<std::string> columns = {
      "GPU", "FP32", "TF32", "FP16", "BF16", "INT8", "FP8", "memory GB/s", "link GB/s"};
  return columns;
}

std::vector<std::string> seeds_table_row(const MicroReport& report) {
  std::vector<std::string> row = {gpu_label(report)};
  for (const char* dtype : {"fp32", "tf32", "fp16", "bf16", "int8", "fp8"}) {
    const MicroResult* r = report.find(std::string("gemm/") + dtype);
    row.push_back(r ? cell(r->value(), r->datasheet) : "-");
  }
  // The CPU variant's memory figure is the host copy, counted the same way (read + write).
  const MicroResult* memory =
      report.find(report.variant == "cpu" ? "memory/host-copy" : "memory/device-copy");
  row.push_back(memory ? cell(memory->value(), memory->datasheet) : "-");
  // The fastest one-way P2P copy between any pair, against the link's per-direction figure.
  const MicroResult* fastest = nullptr;
  for (const auto& r : report.results) {
    if (r.category == "p2p" && r.variant == "copy" && r.ok() &&
        (fastest == nullptr || r.value() > fastest->value())) {
      fastest = &r;
    }
  }
  const double per_direction =
      std::isfinite(report.datasheet_link_gb_s) ? report.datasheet_link_gb_s / 2 : kNotAvailable;
  row.push_back(cell(fastest ? fastest->value() : kNotAvailable, per_direction));
  return row;
}

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
  out << "## " << gpu_label(report) << "\n\n";
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

std::string to_json(const MicroReport& report) {
  json results = json::array();
  for (const auto& r : report.results) {
    json windows = json::array();
    for (double w : r.windows) windows.push_back(number(w));
    results.push_back({{"name", r.name},
                       {"category", r.category},
                       {"variant", r.variant},
                       {"shape", r.shape},
                       {"buffer_bytes", number(r.buffer_bytes)},
                       {"work_per_call", number(r.work_per_call)},
                       {"unit", r.unit},
                       {"unit_scale", r.unit_scale},
                       {"median", number(r.value())},
                       {"summary", r.ok() ? summary_json(r.summary) : json(nullptr)},
                       {"windows", windows},
                       {"warmup_calls", r.warmup_calls},
                       {"calls_per_window", r.calls_per_window},
                       {"operand_sets", r.operand_sets},
                       {"datasheet_key", r.datasheet_key},
                       {"datasheet", number(r.datasheet)},
                       {"percent_of_datasheet", number(r.percent_of_datasheet)},
                       {"status", r.status},
                       {"note", r.note},
                       {"figures", figures_json(r)}});
  }
  json links = json::array();
  for (const PeerLink& l : report.peer_links) {
    links.push_back({{"src", l.src},
                     {"dst", l.dst},
                     {"p2p_access", l.p2p_access},
                     {"type", l.type},
                     {"nvlinks", l.nvlinks},
                     {"detail", l.detail}});
  }
  json table = json::array();
  const auto& columns = seeds_table_columns();
  const auto row = seeds_table_row(report);
  json table_row = json::object();
  for (std::size_t i = 0; i < columns.size(); ++i) table_row[columns[i]] = row[i];
  table.push_back(table_row);
  const json out = {{"schema", report.schema},
                    {"timestamp_utc", report.timestamp_utc},
                    {"command", report.command},
                    {"variant", report.variant},
                    {"timer", report.timer},
                    {"device", detail::device_json(report.device)},
                    {"datasheet",
                     {{"id", report.datasheet_id},
                      {"name", report.datasheet_name},
                      {"link_gb_s", number(report.datasheet_link_gb_s)}}},
                    {"seeds_table", table},
                    {"interconnect", report.interconnect},
                    {"peer_links", links},
                    {"results", results},
                    {"warnings", report.warnings}};
  // Invalid UTF-8 (a file name on the command line) is replaced: the result is never lost
  // to a byte in it.
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace gpuperf
