#pragma once
// A TelemetryDevice with scripted readings, for tests: the sampler, the summaries and the
// printers run against it exactly as against NVML.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/telemetry/telemetry.h"

namespace gpuperf::testing {

/// Readings that change over time; one frame answers every getter until the test moves on.
struct FakeFrame {
  std::optional<double> power_watts;
  std::optional<double> sm_clock_mhz;
  std::optional<double> memory_clock_mhz;
  std::optional<double> temperature_celsius;
  std::optional<Utilization> utilization;
  std::optional<MemoryInfo> memory;
  std::optional<std::uint64_t> clock_event_reasons;
  std::optional<std::uint64_t> total_energy_millijoules;
  bool power_fails = false;  ///< power_watts() throws NvmlError, as a lost GPU would
};

/// Scripted device. The frame in use is either set by the test (set_frame) or, with
/// auto_advance, moves on after every total_energy_millijoules() call (the last reading of a
/// sample), so that frame i is sample i. Reading from one thread while another moves the frame
/// on is safe: the frames themselves are fixed before the device is used.
class FakeDevice final : public TelemetryDevice {
 public:
  explicit FakeDevice(std::vector<FakeFrame> frames, unsigned index = 0)
      : frames_(std::move(frames)), index_(index) {}

  // Readings that do not change over time.
  std::optional<std::string> name_ = std::string("NVIDIA H200");
  std::optional<std::string> uuid_ = std::string("GPU-0b6c5b0e-1111-2222-3333-444455556666");
  std::optional<std::string> pci_bus_id_ = std::string("00000000:18:00.0");
  std::optional<double> power_limit_watts_ = 700.0;
  std::optional<double> sm_clock_max_mhz_ = 1980.0;
  std::optional<double> memory_clock_max_mhz_ = 3201.0;
  std::optional<bool> ecc_enabled_ = true;
  std::optional<PcieLink> pcie_ = PcieLink{5, 16, 5, 16};
  std::optional<int> nvlink_links_up_ = 18;
  std::optional<std::string> compute_capability_ = std::string("9.0");
  std::optional<std::vector<std::string>> nvlink_remote_;  ///< none: a GPU without NVLink
  std::optional<std::vector<GpuProcess>> processes_ =
      std::vector<GpuProcess>{{4242, "python3", 1024.0 * 1024 * 1024, "compute"}};
  bool auto_advance = false;

  void set_frame(std::size_t i) { frame_.store(i); }
  [[nodiscard]] std::size_t energy_reads() const { return energy_reads_.load(); }

  [[nodiscard]] unsigned index() const override { return index_; }
  [[nodiscard]] std::optional<std::string> name() const override { return name_; }
  [[nodiscard]] std::optional<std::string> uuid() const override { return uuid_; }
  [[nodiscard]] std::optional<std::string> pci_bus_id() const override { return pci_bus_id_; }
  [[nodiscard]] std::optional<MemoryInfo> memory() const override { return frame().memory; }
  [[nodiscard]] std::optional<Utilization> utilization() const override {
    return frame().utilization;
  }
  [[nodiscard]] std::optional<double> temperature_celsius() const override {
    return frame().temperature_celsius;
  }
  [[nodiscard]] std::optional<double> power_watts() const override {
    if (frame().power_fails) {
      throw NvmlError("nvmlDeviceGetPowerUsage: GPU is lost (NVML error 15)", 15);
    }
    return frame().power_watts;
  }
  [[nodiscard]] std::optional<double> power_limit_watts() const override {
    return power_limit_watts_;
  }
  [[nodiscard]] std::optional<double> clock_mhz(ClockDomain domain) const override {
    return domain == ClockDomain::kMemory ? frame().memory_clock_mhz : frame().sm_clock_mhz;
  }
  [[nodiscard]] std::optional<double> max_clock_mhz(ClockDomain domain) const override {
    return domain == ClockDomain::kMemory ? memory_clock_max_mhz_ : sm_clock_max_mhz_;
  }
  [[nodiscard]] std::optional<std::uint64_t> clock_event_reasons() const override {
    return frame().clock_event_reasons;
  }
  [[nodiscard]] std::optional<std::uint64_t> total_energy_millijoules() const override {
    const auto value = frame().total_energy_millijoules;
    energy_reads_.fetch_add(1);
    if (auto_advance) frame_.fetch_add(1);
    return value;
  }
  [[nodiscard]] std::optional<bool> ecc_enabled() const override { return ecc_enabled_; }
  [[nodiscard]] std::optional<PcieLink> pcie_link() const override { return pcie_; }
  [[nodiscard]] std::optional<int> nvlink_links_up() const override { return nvlink_links_up_; }
  [[nodiscard]] std::optional<std::string> compute_capability() const override {
    return compute_capability_;
  }
  [[nodiscard]] std::optional<std::vector<GpuProcess>> processes() const override {
    return processes_;
  }
  [[nodiscard]] std::optional<std::vector<std::string>> nvlink_remote_pci_bus_ids() const override {
    return nvlink_remote_;
  }

 private:
  // Past the last frame the last one holds.
  [[nodiscard]] const FakeFrame& frame() const {
    return frames_.at(std::min(frame_.load(), frames_.size() - 1));
  }

  const std::vector<FakeFrame> frames_;
  const unsigned index_;
  mutable std::atomic<std::size_t> frame_{0};
  mutable std::atomic<std::size_t> energy_reads_{0};
};

/// A system of fake devices.
class FakeSystem final : public TelemetrySystem {
 public:
  std::vector<std::unique_ptr<FakeDevice>> devices;
  std::optional<std::string> driver = std::string("580.95.05");
  std::optional<std::string> cuda = std::string("13.0");
  std::optional<PcieTopology> ancestor;  ///< common_ancestor() for any pair
  std::optional<bool> nvlink_peer;       ///< nvlink_p2p() for any pair

  [[nodiscard]] std::size_t device_count() const override { return devices.size(); }
  [[nodiscard]] TelemetryDevice& device(std::size_t index) override {
    if (index >= devices.size()) throw ConfigError("no fake device " + std::to_string(index));
    return *devices[index];
  }
  [[nodiscard]] std::optional<std::string> driver_version() const override { return driver; }
  [[nodiscard]] std::optional<std::string> cuda_driver_version() const override { return cuda; }
  [[nodiscard]] std::optional<PcieTopology> common_ancestor(const TelemetryDevice&,
                                                            const TelemetryDevice&) override {
    return ancestor;
  }
  [[nodiscard]] std::optional<bool> nvlink_p2p(const TelemetryDevice&,
                                               const TelemetryDevice&) override {
    return nvlink_peer;
  }
};

}  // namespace gpuperf::testing
