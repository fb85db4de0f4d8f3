#pragma once
// Everything telemetry can say about the machine's GPUs at one moment, and the ways gpu_info
// prints it: a table for people, JSON for machines, and one line per GPU for watch mode
// (like `nvidia-smi dmon`). Printers write to an injected std::ostream so tests can read them.
//
//   auto telemetry = gpuperf::open_nvml_telemetry();
//   if (telemetry) gpuperf::write_snapshot_table(std::cout,
//   gpuperf::take_snapshot(*telemetry.system));

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/telemetry/telemetry.h"
#include "gpuperf/telemetry/telemetry_summary.h"

namespace gpuperf {

/// One GPU's readings at one moment; absent readings stay empty.
struct DeviceSnapshot {
  unsigned index = 0;  ///< NVML index
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<MemoryInfo> memory;
  std::optional<Utilization> utilization;
  std::optional<double> temperature_celsius;
  std::optional<double> power_watts;
  std::optional<double> power_limit_watts;
  std::optional<double> sm_clock_mhz;
  std::optional<double> sm_clock_max_mhz;
  std::optional<double> memory_clock_mhz;
  std::optional<double> memory_clock_max_mhz;
  std::optional<std::uint64_t> clock_event_reasons;
  std::optional<std::uint64_t> total_energy_millijoules;
  std::optional<bool> ecc_enabled;
  std::optional<PcieLink> pcie;
  std::optional<int> nvlink_links_up;
  std::optional<std::string> compute_capability;
  std::optional<std::vector<GpuProcess>> processes;
  std::vector<std::string> errors;  ///< readings that failed (not merely unsupported)
};

/// The driver and every GPU at one moment.
struct SystemSnapshot {
  std::string timestamp_utc;  ///< ISO 8601, when the snapshot was taken
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_driver_version;
  std::vector<DeviceSnapshot> devices;
};

/// Reads everything from one device; never throws (failures go to `errors`).
[[nodiscard]] DeviceSnapshot take_device_snapshot(const TelemetryDevice& device,
                                                  bool include_processes = true);
/// Reads the driver and every device.
[[nodiscard]] SystemSnapshot take_snapshot(TelemetrySystem& system, bool include_processes = true);

/// A human table: one block per GPU, "n/a" for absent readings.
void write_snapshot_table(std::ostream& out, const SystemSnapshot& snapshot);

/// The snapshot as JSON (absent readings are null; memory in bytes, power in W, clocks in MHz).
/// `indent` < 0 writes one line (JSON Lines in watch mode).
[[nodiscard]] std::string snapshot_to_json(const SystemSnapshot& snapshot, int indent = 2);

/// The column header of watch mode (two lines: names and units).
void write_watch_header(std::ostream& out);
/// One line per GPU for watch mode, beginning with `time_label` (e.g. "12:00:01").
void write_watch_rows(std::ostream& out, const SystemSnapshot& snapshot,
                      std::string_view time_label);

/// A TelemetrySummary for people, one reading per line, each prefixed by `indent`.
void write_telemetry_summary(std::ostream& out, const TelemetrySummary& summary,
                             std::string_view indent = "  ");

}  // namespace gpuperf
