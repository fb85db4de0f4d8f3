#pragma once
// GPU telemetry behind an interface: NVML (loaded at run time) in programs, a scripted fake in
// tests. Every reading is optional, because what NVML answers depends on the GPU, the driver and
// the permissions; "not supported" is an empty optional, a real failure throws NvmlError.
//
//   auto telemetry = gpuperf::open_nvml_telemetry();
//   if (!telemetry) {
//     std::cout << "telemetry unavailable: " << telemetry.unavailable_reason << "\n";
//   } else {
//     gpuperf::TelemetryDevice& gpu = telemetry.system->device(0);
//     std::cout << gpu.name().value_or("?") << " " << gpu.power_watts().value_or(0) << " W\n";
//   }

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf {

/// Which clock a clock reading refers to.
enum class ClockDomain { kGraphics, kSm, kMemory };

/// Device memory, bytes.
struct MemoryInfo {
  double used_bytes = 0;  ///< in use (without the driver's reservation where NVML tells it apart)
  double total_bytes = 0;
  std::optional<double> reserved_bytes;  ///< set aside by driver and firmware, where reported
};

/// Utilization over NVML's last sample period (1/6 s to 1 s depending on the GPU), percent.
struct Utilization {
  double gpu_percent = 0;     ///< time one or more kernels was running
  double memory_percent = 0;  ///< time device memory was being read or written
};

/// PCIe link state; the current generation and width drop when the link idles.
struct PcieLink {
  int generation = 0;
  int width = 0;
  std::optional<int> max_generation;
  std::optional<int> max_width;
};

/// Closest common ancestor of two GPUs on the PCIe tree (NVML's nvmlGpuTopologyLevel_t, the
/// levels `nvidia-smi topo -m` prints as PIX, PXB, PHB, NODE and SYS).
enum class PcieTopology {
  kSameBoard,         ///< both on one board (multi-GPU boards)
  kSingleSwitch,      ///< one PCIe switch between them (PIX)
  kMultipleSwitches,  ///< several switches, no host bridge (PXB)
  kHostBridge,        ///< through a CPU's host bridge (PHB)
  kNumaNode,          ///< host bridges of one NUMA node (NODE)
  kSystem,            ///< across NUMA nodes, over the CPUs' interconnect (SYS)
};
/// "same board", "one PCIe switch (PIX)", ..., "across CPU sockets (SYS)".
[[nodiscard]] std::string to_string(PcieTopology level);

/// A process holding a context on the GPU.
struct GpuProcess {
  unsigned pid = 0;
  std::string name;                         ///< empty when NVML cannot see it (other namespace)
  std::optional<double> used_memory_bytes;  ///< absent where the driver does not account it
  std::string kind;                         ///< "compute", "graphics" or "compute+graphics"
};

/// One GPU's readings. Implementations are safe to call from any one thread at a time.
class TelemetryDevice {
 public:
  virtual ~TelemetryDevice() = default;

  /// NVML's index of the device (PCI order, all devices, not CUDA_VISIBLE_DEVICES order).
  [[nodiscard]] virtual unsigned index() const = 0;
  /// Product name, e.g. "NVIDIA H200".
  [[nodiscard]] virtual std::optional<std::string> name() const = 0;
  /// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints it.
  [[nodiscard]] virtual std::optional<std::string> uuid() const = 0;
  /// "00000000:18:00.0": domain (8 hex digits), bus, device, function.
  [[nodiscard]] virtual std::optional<std::string> pci_bus_id() const = 0;
  /// Memory used and total.
  [[nodiscard]] virtual std::optional<MemoryInfo> memory() const = 0;
  /// GPU and memory utilization.
  [[nodiscard]] virtual std::optional<Utilization> utilization() const = 0;
  /// GPU die temperature, degrees Celsius.
  [[nodiscard]] virtual std::optional<double> temperature_celsius() const = 0;
  /// Power draw, watts (averaged over about a second on Ampere and newer, says NVML).
  [[nodiscard]] virtual std::optional<double> power_watts() const = 0;
  /// Power limit the driver manages the board to, watts.
  [[nodiscard]] virtual std::optional<double> power_limit_watts() const = 0;
  /// Current clock of `domain`, MHz.
  [[nodiscard]] virtual std::optional<double> clock_mhz(ClockDomain domain) const = 0;
  /// Highest clock `domain` can reach, MHz.
  [[nodiscard]] virtual std::optional<double> max_clock_mhz(ClockDomain domain) const = 0;
  /// Clock-event reason bits (see clock_events.h).
  [[nodiscard]] virtual std::optional<std::uint64_t> clock_event_reasons() const = 0;
  /// Energy used since the driver was loaded, millijoules (Volta and newer).
  [[nodiscard]] virtual std::optional<std::uint64_t> total_energy_millijoules() const = 0;
  /// Whether ECC is on (current mode).
  [[nodiscard]] virtual std::optional<bool> ecc_enabled() const = 0;
  /// PCIe link generation and width.
  [[nodiscard]] virtual std::optional<PcieLink> pcie_link() const = 0;
  /// NVLink links that are up; absent on GPUs without NVLink.
  [[nodiscard]] virtual std::optional<int> nvlink_links_up() const = 0;
  /// CUDA compute capability, e.g. "9.0".
  [[nodiscard]] virtual std::optional<std::string> compute_capability() const = 0;
  /// PCI bus id of the far end of each active NVLink, one entry per link (another GPU's, or an
  /// NVSwitch's); absent on GPUs without NVLink or where the driver cannot say.
  [[nodiscard]] virtual std::optional<std::vector<std::string>> nvlink_remote_pci_bus_ids() const {
    return {};
  }
  /// Compute and graphics processes on the GPU.
  [[nodiscard]] virtual std::optional<std::vector<GpuProcess>> processes() const = 0;
};

/// The machine's GPUs and driver. Owns its devices: references from device() live as long as it.
class TelemetrySystem {
 public:
  virtual ~TelemetrySystem() = default;

  /// Number of GPUs NVML sees.
  [[nodiscard]] virtual std::size_t device_count() const = 0;
  /// Device by NVML index; throws ConfigError naming the index when out of range.
  [[nodiscard]] virtual TelemetryDevice& device(std::size_t index) = 0;
  /// NVIDIA kernel driver version, e.g. "580.95.05".
  [[nodiscard]] virtual std::optional<std::string> driver_version() const = 0;
  /// Highest CUDA version the driver supports, e.g. "13.0".
  [[nodiscard]] virtual std::optional<std::string> cuda_driver_version() const = 0;

  /// Closest common PCIe ancestor of two of this system's devices; absent where unknown.
  [[nodiscard]] virtual std::optional<PcieTopology> common_ancestor(const TelemetryDevice& a,
                                                                    const TelemetryDevice& b) {
    (void)a;
    (void)b;
    return {};
  }
  /// Whether the driver reports NVLink peer-to-peer between two of this system's devices (true
  /// also through NVSwitches); absent where unknown.
  [[nodiscard]] virtual std::optional<bool> nvlink_p2p(const TelemetryDevice& a,
                                                       const TelemetryDevice& b) {
    (void)a;
    (void)b;
    return {};
  }

  /// The device at this PCI location (cudaDeviceProp's pciDomainID, pciBusID, pciDeviceID), or
  /// nullptr. This is how a CUDA device index maps to NVML: the orders differ in general.
  [[nodiscard]] TelemetryDevice* find_by_pci_location(unsigned domain, unsigned bus,
                                                      unsigned device);
  /// The device with this PCI bus id ("0000:18:00.0" or NVML's "00000000:18:00.0"), or nullptr.
  [[nodiscard]] TelemetryDevice* find_by_pci_bus_id(std::string_view bus_id);
  /// The device with this UUID ("GPU-..."; case-insensitive), or nullptr.
  [[nodiscard]] TelemetryDevice* find_by_uuid(std::string_view uuid);
};

/// A PCI bus id taken apart; parse_pci_bus_id() accepts any domain width, upper or lower case.
struct PciLocation {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
  friend bool operator==(const PciLocation& a, const PciLocation& b) {
    return a.domain == b.domain && a.bus == b.bus && a.device == b.device &&
           a.function == b.function;
  }
};

/// Parses "dddd:bb:dd.f" or "bb:dd.f"; empty when it is not a PCI bus id.
[[nodiscard]] std::optional<PciLocation> parse_pci_bus_id(std::string_view text);

/// How two GPUs are connected, as far as NVML tells.
struct GpuLink {
  std::string type = "unknown";      ///< "NVLink", "NVLink (NVSwitch)", "PCIe" or "unknown"
  int nvlinks = 0;                   ///< active NVLinks joining them directly (0 through a switch)
  std::optional<PcieTopology> pcie;  ///< PCIe path, where NVML gives one
  std::string detail;                ///< "NVLink x18", "PCIe, through a host bridge (PHB)", ...
};

/// Classifies the link between devices `a` and `b` of `system`: NVLink when an active NVLink of
/// either ends at the other's PCI bus id (direct links, counted); else "NVLink (NVSwitch)" when
/// the driver reports NVLink peer-to-peer between them (HGX boards, where every link ends at a
/// switch); else PCIe with the common ancestor's level; "unknown" when NVML says nothing.
[[nodiscard]] GpuLink describe_gpu_link(TelemetrySystem& system, TelemetryDevice& a,
                                        TelemetryDevice& b);

/// What open_nvml_telemetry() found: a system, or the reason there is none.
struct OpenedTelemetry {
  std::unique_ptr<TelemetrySystem> system;  ///< null when unavailable
  std::string unavailable_reason;           ///< e.g. "libnvidia-ml.so.1: cannot open shared ..."
  /// True when telemetry is available.
  explicit operator bool() const { return system != nullptr; }
};

/// The NVML library name opened by default.
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

/// Loads NVML from `library` (dlopen, never linked) and initializes it. Never throws for a missing
/// library or driver: the result then says why telemetry is unavailable.
[[nodiscard]] OpenedTelemetry open_nvml_telemetry(const std::string& library = kNvmlLibrary);

}  // namespace gpuperf
