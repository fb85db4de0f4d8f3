// Microbenchmark rates against the datasheet (results/micro_datasheet.h).
#include "gpuperf/results/micro_datasheet.h"

#include <cmath>
#include <string>
#include <vector>

#include "gpuperf/base/format.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {

namespace {

// "measured / datasheet"; a datasheet 0 means the part has no such path at all.
std::string cell(double measured, double datasheet) {
  const std::string sheet = datasheet == 0 ? "n/a" : format_readable(datasheet, "-");
  return format_readable(measured, "-") + " / " + sheet;
}

}  // namespace

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
  std::vector<std::string> row = {report.label()};
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

}  // namespace gpuperf
