// Snapshots of every reading, and the printers gpu_info uses: table, JSON, watch rows.
#include "gpuperf/telemetry/snapshot.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <exception>
#include <iomanip>
#include <sstream>

#include "gpuperf/base/format.h"
#include "gpuperf/base/not_available.h"
#include "gpuperf/base/timestamp.h"
#include "gpuperf/telemetry/clock_events.h"

namespace gpuperf {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;

// Runs one reading for a snapshot; a failure is recorded and leaves the field empty.
template <typename Read>
auto guarded(Read&& read, std::vector<std::string>& errors) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception& e) {
    errors.emplace_back(e.what());
    return {};
  }
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  if (!value) return nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*value)) return nullptr;
  }
  return json(*value);
}

// A reading with `precision` decimals, or "n/a" when the device did not give it.
std::string fixed(const std::optional<double>& value, int precision) {
  return value ? format_fixed_or(*value, precision) : "n/a";
}

// Whole MiB, as nvidia-smi shows a device's memory.
std::string mib(double bytes) { return format_fixed(std::floor(bytes / kMiB), 0); }

void line(std::ostream& out, const char* label, const std::string& text) {
  out << "  " << std::left << std::setw(16) << label << std::right << text << "\n";
}

std::string clock_text(const std::optional<double>& now, const std::optional<double>& max) {
  return fixed(now, 0) + " / " + fixed(max, 0) + " MHz max";
}

}  // namespace

DeviceSnapshot take_device_snapshot(const TelemetryDevice& device, bool include_processes) {
  DeviceSnapshot s;
  std::vector<std::string>& e = s.errors;
  s.index = device.index();
  s.name = guarded([&] { return device.name(); }, e);
  s.uuid = guarded([&] { return device.uuid(); }, e);
  s.pci_bus_id = guarded([&] { return device.pci_bus_id(); }, e);
  s.memory = guarded([&] { return device.memory(); }, e);
  s.utilization = guarded([&] { return device.utilization(); }, e);
  s.temperature_celsius = guarded([&] { return device.temperature_celsius(); }, e);
  s.power_watts = guarded([&] { return device.power_watts(); }, e);
  s.power_limit_watts = guarded([&] { return device.power_limit_watts(); }, e);
  s.sm_clock_mhz = guarded([&] { return device.clock_mhz(ClockDomain::kSm); }, e);
  s.sm_clock_max_mhz = guarded([&] { return device.max_clock_mhz(ClockDomain::kSm); }, e);
  s.memory_clock_mhz = guarded([&] { return device.clock_mhz(ClockDomain::kMemory); }, e);
  s.memory_clock_max_mhz = guarded([&] { return device.max_clock_mhz(ClockDomain::kMemory); }, e);
  s.clock_event_reasons = guarded([&] { return device.clock_event_reasons(); }, e);
  s.total_energy_millijoules = guarded([&] { return device.total_energy_millijoules(); }, e);
  s.ecc_enabled = guarded([&] { return device.ecc_enabled(); }, e);
  s.pcie = guarded([&] { return device.pcie_link(); }, e);
  s.nvlink_links_up = guarded([&] { return device.nvlink_links_up(); }, e);
  s.compute_capability = guarded([&] { return device.compute_capability(); }, e);
  if (include_processes) s.processes = guarded([&] { return device.processes(); }, e);
  return s;
}

SystemSnapshot take_snapshot(TelemetrySystem& system, bool include_processes) {
  SystemSnapshot snapshot;
  snapshot.timestamp_utc = utc_timestamp();
  std::vector<std::string> errors;
  snapshot.driver_version = guarded([&] { return system.driver_version(); }, errors);
  snapshot.cuda_driver_version = guarded([&] { return system.cuda_driver_version(); }, errors);
  for (std::size_t i = 0; i < system.device_count(); ++i) {
    snapshot.devices.push_back(take_device_snapshot(system.device(i), include_processes));
  }
  // System-level failures have no device of their own; show them with the first one.
  if (!errors.empty() && !snapshot.devices.empty()) {
    auto& first = snapshot.devices.front().errors;
    first.insert(first.begin(), errors.begin(), errors.end());
  }
  return snapshot;
}

void write_snapshot_table(std::ostream& out, const SystemSnapshot& snapshot) {
  out << "driver " << snapshot.driver_version.value_or("n/a") << "   CUDA "
      << snapshot.cuda_driver_version.value_or("n/a") << "   " << snapshot.devices.size()
      << (snapshot.devices.size() == 1 ? " GPU" : " GPUs");
  if (!snapshot.timestamp_utc.empty()) out << "   " << snapshot.timestamp_utc;
  out << "\n";
  for (const DeviceSnapshot& d : snapshot.devices) {
    out << "\nGPU " << d.index << "  " << d.name.value_or("(unknown)");
    if (d.uuid || d.pci_bus_id) {
      out << "  (" << d.uuid.value_or("n/a") << ", " << d.pci_bus_id.value_or("n/a") << ")";
    }
    out << "\n";
    if (d.memory) {
      std::string text =
          mib(d.memory->used_bytes) + " / " + mib(d.memory->total_bytes) + " MiB used";
      if (d.memory->reserved_bytes) text += " (" + mib(*d.memory->reserved_bytes) + " reserved)";
      line(out, "memory", text);
    } else {
      line(out, "memory", "n/a");
    }
    line(out, "utilization",
         d.utilization ? "gpu " + fixed(d.utilization->gpu_percent, 0) + " %, memory " +
                             fixed(d.utilization->memory_percent, 0) + " %"
                       : "n/a");
    line(out, "temperature", fixed(d.temperature_celsius, 0) + " C");
    line(out, "power",
         fixed(d.power_watts, 1) + " W of " + fixed(d.power_limit_watts, 1) + " W limit");
    line(out, "SM clock", clock_text(d.sm_clock_mhz, d.sm_clock_max_mhz));
    line(out, "memory clock", clock_text(d.memory_clock_mhz, d.memory_clock_max_mhz));
    line(out, "clock events",
         d.clock_event_reasons ? describe_clock_event_reasons(*d.clock_event_reasons, ", ") +
                                     (is_throttling(*d.clock_event_reasons) ? "  (throttling)" : "")
                               : "n/a");
    line(out, "energy counter",
         d.total_energy_millijoules
             ? fixed(static_cast<double>(*d.total_energy_millijoules) / 1000.0, 3) +
                   " J since driver load"
             : "n/a");
    line(out, "ECC", d.ecc_enabled ? (*d.ecc_enabled ? "on" : "off") : "n/a");
    if (d.pcie) {
      std::string text =
          "gen " + std::to_string(d.pcie->generation) + " x" + std::to_string(d.pcie->width);
      if (d.pcie->max_generation && d.pcie->max_width) {
        text += " (max gen " + std::to_string(*d.pcie->max_generation) + " x" +
                std::to_string(*d.pcie->max_width) + ")";
      }
      line(out, "PCIe", text);
    } else {
      line(out, "PCIe", "n/a");
    }
    line(out, "NVLink",
         d.nvlink_links_up ? std::to_string(*d.nvlink_links_up) + " links up" : "n/a");
    line(out, "compute cap.", d.compute_capability.value_or("n/a"));
    if (!d.processes) {
      line(out, "processes", "n/a");
    } else if (d.processes->empty()) {
      line(out, "processes", "none");
    } else {
      for (std::size_t i = 0; i < d.processes->size(); ++i) {
        const GpuProcess& p = (*d.processes)[i];
        std::string text = "pid " + std::to_string(p.pid) + " " +
                           (p.name.empty() ? "(name hidden)" : p.name) + " [" + p.kind + "] " +
                           (p.used_memory_bytes ? mib(*p.used_memory_bytes) + " MiB" : "n/a");
        line(out, i == 0 ? "processes" : "", text);
      }
    }
    for (const std::string& error : d.errors) line(out, "error", error);
  }
}

std::string snapshot_to_json(const SystemSnapshot& snapshot, int indent) {
  json devices = json::array();
  for (const DeviceSnapshot& d : snapshot.devices) {
    json processes = nullptr;
    if (d.processes) {
      processes = json::array();
      for (const GpuProcess& p : *d.processes) {
        processes.push_back({{"pid", p.pid},
                             {"name", p.name},
                             {"kind", p.kind},
                             {"used_memory_bytes", optional_json(p.used_memory_bytes)}});
      }
    }
    json reason_names = nullptr;
    json throttling = nullptr;
    if (d.clock_event_reasons) {
      reason_names = clock_event_reason_names(*d.clock_event_reasons);
      throttling = is_throttling(*d.clock_event_reasons);
    }
    devices.push_back({
        {"index", d.index},
        {"name", optional_json(d.name)},
        {"uuid", optional_json(d.uuid)},
        {"pci_bus_id", optional_json(d.pci_bus_id)},
        {"memory_used_bytes", d.memory ? json(d.memory->used_bytes) : json(nullptr)},
        {"memory_total_bytes", d.memory ? json(d.memory->total_bytes) : json(nullptr)},
        {"memory_reserved_bytes",
         d.memory ? optional_json(d.memory->reserved_bytes) : json(nullptr)},
        {"utilization_gpu_percent", d.utilization ? json(d.utilization->gpu_percent) : json()},
        {"utilization_memory_percent",
         d.utilization ? json(d.utilization->memory_percent) : json()},
        {"temperature_celsius", optional_json(d.temperature_celsius)},
        {"power_draw_watts", optional_json(d.power_watts)},
        {"power_limit_watts", optional_json(d.power_limit_watts)},
        {"sm_clock_mhz", optional_json(d.sm_clock_mhz)},
        {"sm_clock_max_mhz", optional_json(d.sm_clock_max_mhz)},
        {"memory_clock_mhz", optional_json(d.memory_clock_mhz)},
        {"memory_clock_max_mhz", optional_json(d.memory_clock_max_mhz)},
        {"clock_event_reasons", optional_json(d.clock_event_reasons)},
        {"clock_event_reason_names", reason_names},
        {"throttling", throttling},
        {"total_energy_millijoules", optional_json(d.total_energy_millijoules)},
        {"ecc_enabled", optional_json(d.ecc_enabled)},
        {"pcie_link_generation", d.pcie ? json(d.pcie->generation) : json()},
        {"pcie_link_width", d.pcie ? json(d.pcie->width) : json()},
        {"pcie_link_max_generation", d.pcie ? optional_json(d.pcie->max_generation) : json()},
        {"pcie_link_max_width", d.pcie ? optional_json(d.pcie->max_width) : json()},
        {"nvlink_links_up", optional_json(d.nvlink_links_up)},
        {"compute_capability", optional_json(d.compute_capability)},
        {"processes", processes},
        {"errors", d.errors},
    });
  }
  const json out = {{"available", true},
                    {"timestamp_utc", snapshot.timestamp_utc},
                    {"driver_version", optional_json(snapshot.driver_version)},
                    {"cuda_driver_version", optional_json(snapshot.cuda_driver_version)},
                    {"devices", devices}};
  return out.dump(indent);
}

namespace {

// Watch-mode columns: name, unit, width. Names, units and order follow nvidia-smi dmon (sm and
// mem are utilization %, pclk and mclk the SM and memory clocks), with gpuperf's extra columns
// (limit, energy, reasons) where dmon has none. Absent readings print "-", as dmon does.
struct Column {
  const char* name;
  const char* unit;
  int width;
};
constexpr Column kWatchColumns[] = {
    {"time", "HH:MM:SS", 8}, {"gpu", "Idx", 3}, {"pwr", "W", 6},     {"limit", "W", 6},
    {"gtemp", "C", 5},       {"sm", "%", 4},    {"mem", "%", 4},     {"mclk", "MHz", 5},
    {"pclk", "MHz", 5},      {"fb", "MB", 7},   {"energy", "J", 10}, {"reasons", "", 0},
};

void cell(std::ostream& out, const std::string& text, int width, bool first) {
  if (!first) out << "  ";
  if (width > 0) {
    out << std::setw(width) << text;
  } else {
    out << text;
  }
}

std::string dash(const std::optional<double>& value, int precision) {
  return value && std::isfinite(*value) ? fixed(value, precision) : "-";
}

}  // namespace

void write_watch_header(std::ostream& out) {
  for (const bool units : {false, true}) {
    std::ostringstream text;
    text << "#";
    bool first = true;
    for (const Column& c : kWatchColumns) {
      cell(text, units ? c.unit : c.name, c.width, first);
      first = false;
    }
    // The last column has no unit; leave no trailing blanks.
    std::string line = text.str();
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

void write_watch_rows(std::ostream& out, const SystemSnapshot& snapshot,
                      std::string_view time_label) {
  for (const DeviceSnapshot& d : snapshot.devices) {
    const auto u = d.utilization;
    const std::optional<double> energy =
        d.total_energy_millijoules
            ? std::optional<double>(static_cast<double>(*d.total_energy_millijoules) / 1000.0)
            : std::nullopt;
    const std::optional<double> used =
        d.memory ? std::optional<double>(std::floor(d.memory->used_bytes / kMiB)) : std::nullopt;
    const std::string values[] = {
        std::string(time_label),
        std::to_string(d.index),
        dash(d.power_watts, 1),
        dash(d.power_limit_watts, 1),
        dash(d.temperature_celsius, 0),
        dash(u ? std::optional<double>(u->gpu_percent) : std::nullopt, 0),
        dash(u ? std::optional<double>(u->memory_percent) : std::nullopt, 0),
        dash(d.memory_clock_mhz, 0),
        dash(d.sm_clock_mhz, 0),
        dash(used, 0),  // MiB, which dmon labels MB
        dash(energy, 1),
        d.clock_event_reasons ? describe_clock_event_reasons(*d.clock_event_reasons) : "-",
    };
    out << " ";
    for (std::size_t i = 0; i < std::size(kWatchColumns); ++i) {
      cell(out, values[i], kWatchColumns[i].width, i == 0);
    }
    out << "\n";
  }
}

void write_telemetry_summary(std::ostream& out, const TelemetrySummary& summary,
                             std::string_view indent) {
  if (!summary.available) {
    out << indent << "telemetry unavailable: " << summary.unavailable_reason << "\n";
    return;
  }
  const auto row = [&](const char* label, const std::string& text) {
    out << indent << std::left << std::setw(22) << label << std::right << text << "\n";
  };
  const auto num = [](double v, int p) { return format_fixed_or(v, p); };
  row("samples",
      std::to_string(summary.sample_count) + " over " + num(summary.duration_seconds, 2) + " s");
  row("power mean / max",
      num(summary.power_mean_watts, 1) + " / " + num(summary.power_max_watts, 1) + " W");
  row("energy", num(summary.energy_joules, 3) + " J" +
                    (summary.energy_source.empty() ? "" : " (" + summary.energy_source + ")"));
  if (std::isfinite(summary.processed_samples)) {
    row("processed samples", num(summary.processed_samples, 0));
    row("energy per sample", num(summary.energy_per_sample_joules, 6) + " J");
    row("samples per joule", num(summary.samples_per_joule, 3));
  }
  row("SM clock mean / min", num(summary.sm_clock_mean_hz / 1e6, 0) + " / " +
                                 num(summary.sm_clock_min_hz / 1e6, 0) + " MHz");
  row("temperature max", num(summary.temperature_max_celsius, 0) + " C");
  row("GPU utilization mean", num(summary.gpu_utilization_mean_percent, 1) + " %");
  row("clock events seen", describe_clock_event_reasons(summary.clock_event_reasons, ", "));
  for (const std::string& w : summary.warnings) row("warning", w);
}

}  // namespace gpuperf
