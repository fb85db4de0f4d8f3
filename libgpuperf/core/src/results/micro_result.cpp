// Microbenchmark results: names of their enums, the report's lookup, and JSON. Torch-free
// (compiled into gpuperf_core), so nlohmann-json stays away from the PyTorch wheel's headers.
#include "gpuperf/results/micro_result.h"

#include <nlohmann/json.hpp>

#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/base/format.h"
#include "gpuperf/results/micro_datasheet.h"
#include "base/json.h"

namespace gpuperf {
namespace {

using nlohmann::json;

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

json figures_json(const MicroResult& r) {
  json out = json::object();
  for (const auto& [key, value] : r.figures) out[key] = number(value);
  return out;
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

std::string GemmShape::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
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

double MicroResult::figure(const std::string& key) const {
  for (const auto& [k, v] : figures) {
    if (k == key) return v;
  }
  return kNotAvailable;
}

std::string MicroReport::label() const {
  std::string text = device.name.empty() ? "unknown device" : printable(device.name);
  if (variant == "cpu") text += " (CPU variant)";
  return text;
}

const MicroResult* MicroReport::find(const std::string& name) const {
  for (const auto& r : results) {
    if (r.name == name) return &r;
  }
  return nullptr;
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
