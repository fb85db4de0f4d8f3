// Names of NVML's clock-event reason bits.
#include "gpuperf/telemetry/clock_events.h"

#include <cstdio>

namespace gpuperf {

const std::vector<ClockEventReason>& clock_event_reasons() {
  namespace ce = clock_event;
  static const std::vector<ClockEventReason> table = {
      {ce::kGpuIdle, "gpu_idle", "GPU idle", false},
      {ce::kApplicationsClocksSetting, "applications_clocks_setting", "applications clocks setting",
       false},
      {ce::kSwPowerCap, "sw_power_cap", "SW power cap", true},
      {ce::kHwSlowdown, "hw_slowdown", "HW slowdown", true},
      {ce::kSyncBoost, "sync_boost", "sync boost", false},
      {ce::kSwThermalSlowdown, "sw_thermal_slowdown", "SW thermal slowdown", true},
      {ce::kHwThermalSlowdown, "hw_thermal_slowdown", "HW thermal slowdown", true},
      {ce::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown", "HW power brake slowdown", true},
      {ce::kDisplayClockSetting, "display_clock_setting", "display clock setting", false},
  };
  return table;
}

std::vector<std::string> clock_event_reason_names(std::uint64_t bits) {
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const ClockEventReason& reason : clock_event_reasons()) {
    known |= reason.bit;
    if ((bits & reason.bit) != 0) names.emplace_back(reason.name);
  }
  // Newer drivers may define bits this table does not know; show them rather than drop them.
  for (int shift = 0; shift < 64; ++shift) {
    const std::uint64_t bit = std::uint64_t{1} << shift;
    if ((bits & bit) != 0 && (known & bit) == 0) {
      char text[40];
      std::snprintf(text, sizeof text, "unknown_0x%llx", static_cast<unsigned long long>(bit));
      names.emplace_back(text);
    }
  }
  return names;
}

std::string describe_clock_event_reasons(std::uint64_t bits, const std::string& separator) {
  if (bits == 0) return "none";
  std::string out;
  for (const std::string& name : clock_event_reason_names(bits)) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

}  // namespace gpuperf
