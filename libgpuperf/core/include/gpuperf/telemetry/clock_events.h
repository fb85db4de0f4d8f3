#pragma once
// NVML clock-event reasons ("throttle reasons"): why the GPU's clocks are below their maximum.
// NVML reports a bit mask; several bits may be set at once.
//
//   std::uint64_t bits = device.clock_event_reasons().value_or(0);
//   for (const auto& name : gpuperf::clock_event_reason_names(bits)) std::cout << name << ' ';
//   if (gpuperf::is_throttling(bits)) std::cout << "(throttled)";

#include <cstdint>
#include <string>
#include <vector>

namespace gpuperf {

/// NVML's clock-event reason bits (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*).
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;                    ///< nothing running: clocks idle
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;  ///< clocks set by the user
inline constexpr std::uint64_t kSwPowerCap = 0x4;  ///< software power cap (power limit)
inline constexpr std::uint64_t kHwSlowdown = 0x8;  ///< hardware slowdown (thermal or power)
inline constexpr std::uint64_t kSyncBoost = 0x10;  ///< held back to match a sync-boost group
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;     ///< software thermal slowdown
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;     ///< hardware thermal slowdown
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;  ///< external power brake asserted
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;  ///< held down by display clocks

/// Bits that mean the card ran slower than it could for thermal reasons.
inline constexpr std::uint64_t kThermal = kSwThermalSlowdown | kHwThermalSlowdown;
/// Bits that mean the card ran slower than it could because of its power limit.
inline constexpr std::uint64_t kPowerCap = kSwPowerCap;
/// Bits that mean the hardware itself pulled the clocks down.
inline constexpr std::uint64_t kHardware = kHwSlowdown | kHwPowerBrakeSlowdown;
/// Every bit that counts as throttling: a throughput taken under any of them is not comparable.
inline constexpr std::uint64_t kThrottling = kThermal | kPowerCap | kHardware;
}  // namespace clock_event

/// One known reason bit with its names.
struct ClockEventReason {
  std::uint64_t bit;
  const char* name;         ///< short snake_case name, e.g. "sw_power_cap"
  const char* description;  ///< words for people, e.g. "SW power cap"
  bool throttling;          ///< counts as throttling (thermal, power cap, hardware slowdown)
};

/// Every reason NVML defines, in bit order.
[[nodiscard]] const std::vector<ClockEventReason>& clock_event_reasons();

/// Short names of the bits set in `bits`, in bit order; unknown bits as "unknown_0x...".
[[nodiscard]] std::vector<std::string> clock_event_reason_names(std::uint64_t bits);

/// The names joined by `separator`, or "none" when no bit is set.
[[nodiscard]] std::string describe_clock_event_reasons(std::uint64_t bits,
                                                       const std::string& separator = ",");

/// True when any throttling bit (thermal, power cap, hardware slowdown) is set.
[[nodiscard]] constexpr bool is_throttling(std::uint64_t bits) {
  return (bits & clock_event::kThrottling) != 0;
}

}  // namespace gpuperf
