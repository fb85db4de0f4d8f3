// NVML loaded at run time: the library handle, the session, and the TelemetryDevice and
// TelemetrySystem built on them. Every call goes through Api::check or Api::query, which name
// the call and NVML's own error string.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/log.h"
#include "gpuperf/telemetry/telemetry.h"
#include "telemetry/nvml_api.h"

// Calls an optional entry point and classifies its result with Api::query; a missing entry point
// counts as "unavailable". The call's name goes into any error message.
#define GPUPERF_NVML_QUERY(api, fn, ...)                                             \
  (api).query((api).fn != nullptr ? (api).fn(__VA_ARGS__)                            \
                                  : ::gpuperf::detail::nvml::kErrorFunctionNotFound, \
              #fn)

namespace gpuperf::detail::nvml {

bool is_unavailable_code(Return code) {
  return code == kErrorNotSupported || code == kErrorNoPermission || code == kErrorNotFound ||
         code == kErrorFunctionNotFound || code == kErrorNoData;
}

std::string Api::error_string(Return code) const {
  const char* text = nvmlErrorString != nullptr ? nvmlErrorString(code) : nullptr;
  return text != nullptr ? std::string(text) : "NVML error " + std::to_string(code);
}

void Api::check(Return code, const char* call) const {
  if (code == kSuccess) return;
  throw NvmlError(
      std::string(call) + ": " + error_string(code) + " (NVML error " + std::to_string(code) + ")",
      code);
}

bool Api::query(Return code, const char* call) const {
  if (code == kSuccess) return true;
  if (is_unavailable_code(code)) return false;
  check(code, call);
  return false;
}

namespace {

// Move-only owner of a dlopen() handle.
class LibraryHandle {
 public:
  LibraryHandle() = default;
  explicit LibraryHandle(void* handle) noexcept : handle_(handle) {}
  LibraryHandle(LibraryHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  LibraryHandle& operator=(LibraryHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  LibraryHandle(const LibraryHandle&) = delete;
  LibraryHandle& operator=(const LibraryHandle&) = delete;
  ~LibraryHandle() { reset(); }

  // Resolves `name` into `slot` (null when the library does not export it).
  template <typename Fn>
  void resolve(Fn& slot, const char* name) const {
    void* address = ::dlsym(handle_, name);
    // POSIX guarantees that a data pointer from dlsym converts to a function pointer.
    static_assert(sizeof(Fn) == sizeof(void*));
    std::memcpy(&slot, &address, sizeof slot);
  }

 private:
  void reset() noexcept {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = nullptr;
  }
  void* handle_ = nullptr;
};

// Move-only NVML session: loads the library, resolves the entry points, nvmlInit_v2 on creation
// and nvmlShutdown on destruction. Throws Error when the library or a required entry point is
// missing and NvmlError when nvmlInit_v2 fails.
class NvmlSession {
 public:
  explicit NvmlSession(const std::string& path) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = ::dlerror();
      throw Error(reason != nullptr ? reason : path + ": cannot be loaded");
    }
    library_ = LibraryHandle(handle);
    resolve_all();
    api_.check(api_.nvmlInit_v2(), "nvmlInit_v2");
    active_ = true;
  }
  NvmlSession(NvmlSession&& other) noexcept
      : library_(std::move(other.library_)),
        api_(other.api_),
        active_(std::exchange(other.active_, false)) {}
  NvmlSession& operator=(NvmlSession&& other) noexcept {
    if (this != &other) {
      shutdown();
      library_ = std::move(other.library_);
      api_ = other.api_;
      active_ = std::exchange(other.active_, false);
    }
    return *this;
  }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
  ~NvmlSession() { shutdown(); }

  [[nodiscard]] const Api& api() const { return api_; }

 private:
  void resolve_all() {
    const LibraryHandle& l = library_;
    l.resolve(api_.nvmlInit_v2, "nvmlInit_v2");
    l.resolve(api_.nvmlShutdown, "nvmlShutdown");
    l.resolve(api_.nvmlErrorString, "nvmlErrorString");
    l.resolve(api_.nvmlDeviceGetCount_v2, "nvmlDeviceGetCount_v2");
    l.resolve(api_.nvmlDeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
    for (const auto& [slot, name] :
         {std::pair<bool, const char*>{api_.nvmlInit_v2 != nullptr, "nvmlInit_v2"},
          {api_.nvmlShutdown != nullptr, "nvmlShutdown"},
          {api_.nvmlErrorString != nullptr, "nvmlErrorString"},
          {api_.nvmlDeviceGetCount_v2 != nullptr, "nvmlDeviceGetCount_v2"},
          {api_.nvmlDeviceGetHandleByIndex_v2 != nullptr, "nvmlDeviceGetHandleByIndex_v2"}}) {
      if (!slot) throw Error(std::string("NVML library has no ") + name + " (driver too old)");
    }
    l.resolve(api_.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
    l.resolve(api_.nvmlSystemGetCudaDriverVersion_v2, "nvmlSystemGetCudaDriverVersion_v2");
    l.resolve(api_.nvmlSystemGetProcessName, "nvmlSystemGetProcessName");
    l.resolve(api_.nvmlDeviceGetName, "nvmlDeviceGetName");
    l.resolve(api_.nvmlDeviceGetUUID, "nvmlDeviceGetUUID");
    l.resolve(api_.nvmlDeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3");
    l.resolve(api_.nvmlDeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo");
    l.resolve(api_.nvmlDeviceGetMemoryInfo_v2, "nvmlDeviceGetMemoryInfo_v2");
    l.resolve(api_.nvmlDeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates");
    l.resolve(api_.nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature");
    l.resolve(api_.nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
    l.resolve(api_.nvmlDeviceGetPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit");
    l.resolve(api_.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo");
    l.resolve(api_.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
    l.resolve(api_.nvmlDeviceGetCurrentClocksEventReasons,
              "nvmlDeviceGetCurrentClocksEventReasons");
    if (api_.nvmlDeviceGetCurrentClocksEventReasons == nullptr) {
      // Drivers before 535 export only the old name; the signature is the same.
      l.resolve(api_.nvmlDeviceGetCurrentClocksEventReasons,
                "nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    l.resolve(api_.nvmlDeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption");
    l.resolve(api_.nvmlDeviceGetEccMode, "nvmlDeviceGetEccMode");
    l.resolve(api_.nvmlDeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
    l.resolve(api_.nvmlDeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth");
    l.resolve(api_.nvmlDeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration");
    l.resolve(api_.nvmlDeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth");
    l.resolve(api_.nvmlDeviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
    l.resolve(api_.nvmlDeviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability");
    l.resolve(api_.nvmlDeviceGetNvLinkRemotePciInfo_v2, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    l.resolve(api_.nvmlDeviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor");
    l.resolve(api_.nvmlDeviceGetP2PStatus, "nvmlDeviceGetP2PStatus");
    l.resolve(api_.nvmlDeviceGetComputeRunningProcesses_v3,
              "nvmlDeviceGetComputeRunningProcesses_v3");
    l.resolve(api_.nvmlDeviceGetGraphicsRunningProcesses_v3,
              "nvmlDeviceGetGraphicsRunningProcesses_v3");
  }

  void shutdown() noexcept {
    // A failing shutdown at exit has no one to report to; the library is closed either way.
    if (active_) api_.nvmlShutdown();
    active_ = false;
  }

  LibraryHandle library_;
  Api api_;
  bool active_ = false;
};

ClockType to_nvml(ClockDomain domain) {
  switch (domain) {
    case ClockDomain::kGraphics:
      return kClockGraphics;
    case ClockDomain::kSm:
      return kClockSm;
    case ClockDomain::kMemory:
      return kClockMem;
  }
  return kClockSm;
}

class NvmlDevice final : public TelemetryDevice {
 public:
  NvmlDevice(const Api& api, unsigned index, Device handle)
      : api_(api), index_(index), handle_(handle) {}

  [[nodiscard]] unsigned index() const override { return index_; }

  [[nodiscard]] std::optional<std::string> name() const override {
    char buffer[kDeviceNameBufferSize] = {};
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetName, handle_, buffer, sizeof buffer)) return {};
    return std::string(buffer);
  }

  [[nodiscard]] std::optional<std::string> uuid() const override {
    char buffer[kDeviceUuidBufferSize] = {};
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetUUID, handle_, buffer, sizeof buffer)) return {};
    return std::string(buffer);
  }

  [[nodiscard]] std::optional<std::string> pci_bus_id() const override {
    PciInfo info{};
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetPciInfo_v3, handle_, &info)) return {};
    return std::string(info.busId, strnlen(info.busId, sizeof info.busId));
  }

  [[nodiscard]] std::optional<gpuperf::MemoryInfo> memory() const override {
    // v2 tells the driver's reservation apart from "used", as nvidia-smi reports it; v1 counts
    // the reservation as used. Any v2 failure (absent, version mismatch) falls back to v1.
    if (api_.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
      MemoryV2 memory{};
      memory.version = kMemoryV2Version;
      if (api_.nvmlDeviceGetMemoryInfo_v2(handle_, &memory) == kSuccess) {
        return MemoryInfo{static_cast<double>(memory.used), static_cast<double>(memory.total),
                          static_cast<double>(memory.reserved)};
      }
    }
    Memory memory{};
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetMemoryInfo, handle_, &memory)) return {};
    return MemoryInfo{static_cast<double>(memory.used), static_cast<double>(memory.total),
                      std::nullopt};
  }

  [[nodiscard]] std::optional<gpuperf::Utilization> utilization() const override {
    nvml::Utilization rates{};
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetUtilizationRates, handle_, &rates)) return {};
    return gpuperf::Utilization{static_cast<double>(rates.gpu), static_cast<double>(rates.memory)};
  }

  [[nodiscard]] std::optional<double> temperature_celsius() const override {
    unsigned celsius = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetTemperature, handle_, kTemperatureGpu, &celsius)) {
      return {};
    }
    return static_cast<double>(celsius);
  }

  [[nodiscard]] std::optional<double> power_watts() const override {
    unsigned milliwatts = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetPowerUsage, handle_, &milliwatts)) return {};
    return milliwatts / 1000.0;
  }

  [[nodiscard]] std::optional<double> power_limit_watts() const override {
    unsigned milliwatts = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetPowerManagementLimit, handle_, &milliwatts)) {
      return {};
    }
    return milliwatts / 1000.0;
  }

  [[nodiscard]] std::optional<double> clock_mhz(ClockDomain domain) const override {
    unsigned mhz = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetClockInfo, handle_, to_nvml(domain), &mhz)) {
      return {};
    }
    return static_cast<double>(mhz);
  }

  [[nodiscard]] std::optional<double> max_clock_mhz(ClockDomain domain) const override {
    unsigned mhz = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetMaxClockInfo, handle_, to_nvml(domain), &mhz)) {
      return {};
    }
    return static_cast<double>(mhz);
  }

  [[nodiscard]] std::optional<std::uint64_t> clock_event_reasons() const override {
    unsigned long long bits = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetCurrentClocksEventReasons, handle_, &bits)) {
      return {};
    }
    return static_cast<std::uint64_t>(bits);
  }

  [[nodiscard]] std::optional<std::uint64_t> total_energy_millijoules() const override {
    unsigned long long millijoules = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetTotalEnergyConsumption, handle_, &millijoules)) {
      return {};
    }
    return static_cast<std::uint64_t>(millijoules);
  }

  [[nodiscard]] std::optional<bool> ecc_enabled() const override {
    EnableState current = kFeatureDisabled;
    EnableState pending = kFeatureDisabled;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetEccMode, handle_, &current, &pending)) return {};
    return current == kFeatureEnabled;
  }

  [[nodiscard]] std::optional<PcieLink> pcie_link() const override {
    unsigned generation = 0;
    unsigned width = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetCurrPcieLinkGeneration, handle_, &generation) ||
        !GPUPERF_NVML_QUERY(api_, nvmlDeviceGetCurrPcieLinkWidth, handle_, &width)) {
      return {};
    }
    PcieLink link;
    link.generation = static_cast<int>(generation);
    link.width = static_cast<int>(width);
    unsigned max_value = 0;
    if (GPUPERF_NVML_QUERY(api_, nvmlDeviceGetMaxPcieLinkGeneration, handle_, &max_value)) {
      link.max_generation = static_cast<int>(max_value);
    }
    if (GPUPERF_NVML_QUERY(api_, nvmlDeviceGetMaxPcieLinkWidth, handle_, &max_value)) {
      link.max_width = static_cast<int>(max_value);
    }
    return link;
  }

  [[nodiscard]] std::optional<int> nvlink_links_up() const override {
    if (api_.nvmlDeviceGetNvLinkState == nullptr) return {};
    int up = 0;
    bool any_link = false;
    for (unsigned link = 0; link < kMaxNvLinks; ++link) {
      EnableState active = kFeatureDisabled;
      const Return code = api_.nvmlDeviceGetNvLinkState(handle_, link, &active);
      // NVML answers "invalid argument" past the device's last link, and "not supported" for
      // links (or whole GPUs) without NVLink.
      if (code == kErrorInvalidArgument) break;
      if (!api_.query(code, "nvmlDeviceGetNvLinkState")) continue;
      any_link = true;
      if (active == kFeatureEnabled) ++up;
    }
    if (!any_link) return {};
    return up;
  }

  [[nodiscard]] std::optional<std::vector<std::string>> nvlink_remote_pci_bus_ids() const override {
    if (api_.nvmlDeviceGetNvLinkState == nullptr ||
        api_.nvmlDeviceGetNvLinkRemotePciInfo_v2 == nullptr) {
      return {};
    }
    std::vector<std::string> remote;
    bool any_link = false;
    for (unsigned link = 0; link < kMaxNvLinks; ++link) {
      EnableState active = kFeatureDisabled;
      const Return code = api_.nvmlDeviceGetNvLinkState(handle_, link, &active);
      if (code == kErrorInvalidArgument) break;  // past the last link, as in nvlink_links_up()
      if (!api_.query(code, "nvmlDeviceGetNvLinkState")) continue;
      any_link = true;
      if (active != kFeatureEnabled) continue;
      PciInfo info{};
      if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetNvLinkRemotePciInfo_v2, handle_, link, &info)) {
        continue;
      }
      remote.emplace_back(info.busId, strnlen(info.busId, sizeof info.busId));
    }
    if (!any_link) return {};
    return remote;
  }

  [[nodiscard]] Device handle() const { return handle_; }

  [[nodiscard]] std::optional<std::string> compute_capability() const override {
    int major = 0;
    int minor = 0;
    if (!GPUPERF_NVML_QUERY(api_, nvmlDeviceGetCudaComputeCapability, handle_, &major, &minor)) {
      return {};
    }
    return std::to_string(major) + "." + std::to_string(minor);
  }

  [[nodiscard]] std::optional<std::vector<GpuProcess>> processes() const override {
    const auto compute = list_processes(api_.nvmlDeviceGetComputeRunningProcesses_v3,
                                        "nvmlDeviceGetComputeRunningProcesses_v3");
    const auto graphics = list_processes(api_.nvmlDeviceGetGraphicsRunningProcesses_v3,
                                         "nvmlDeviceGetGraphicsRunningProcesses_v3");
    if (!compute && !graphics) return {};
    // A process with both kinds of context appears in both lists: report it once.
    std::map<unsigned, GpuProcess> by_pid;
    const auto add = [&](const std::vector<ProcessInfo>& infos, const char* kind) {
      for (const ProcessInfo& info : infos) {
        auto [it, inserted] = by_pid.try_emplace(info.pid);
        GpuProcess& process = it->second;
        if (inserted) {
          process.pid = info.pid;
          process.name = process_name(info.pid);
          process.kind = kind;
        } else {
          process.kind += std::string("+") + kind;
        }
        if (info.usedGpuMemory != kValueNotAvailable && !process.used_memory_bytes) {
          process.used_memory_bytes = static_cast<double>(info.usedGpuMemory);
        }
      }
    };
    if (compute) add(*compute, "compute");
    if (graphics) add(*graphics, "graphics");
    std::vector<GpuProcess> out;
    out.reserve(by_pid.size());
    for (auto& [pid, process] : by_pid) out.push_back(std::move(process));
    return out;
  }

 private:
  std::optional<std::vector<ProcessInfo>> list_processes(DeviceGetProcessesFn fn,
                                                         const char* call) const {
    if (fn == nullptr) return {};
    std::vector<ProcessInfo> infos(32);
    // Processes can start between the size query and the fill: retry with more room.
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto count = static_cast<unsigned>(infos.size());
      const Return code = fn(handle_, &count, infos.data());
      if (code == kErrorInsufficientSize) {
        infos.resize(std::max<std::size_t>(count, infos.size()) * 2);
        continue;
      }
      if (!api_.query(code, call)) return {};
      infos.resize(count);
      return infos;
    }
    throw NvmlError(std::string(call) + ": the process list kept growing", kErrorInsufficientSize);
  }

  [[nodiscard]] std::string process_name(unsigned pid) const {
    char buffer[kProcessNameBufferSize] = {};
    // Processes in another PID namespace (containers) have no name here; that is not an error.
    if (api_.nvmlSystemGetProcessName == nullptr ||
        api_.nvmlSystemGetProcessName(pid, buffer, sizeof buffer) != kSuccess) {
      return "";
    }
    return std::string(buffer);
  }

  const Api& api_;
  unsigned index_;
  Device handle_;
};

class NvmlSystem final : public TelemetrySystem {
 public:
  explicit NvmlSystem(const std::string& path) : session_(path) {
    const Api& api = session_.api();
    unsigned count = 0;
    api.check(api.nvmlDeviceGetCount_v2(&count), "nvmlDeviceGetCount_v2");
    for (unsigned i = 0; i < count; ++i) {
      Device handle = nullptr;
      api.check(api.nvmlDeviceGetHandleByIndex_v2(i, &handle), "nvmlDeviceGetHandleByIndex_v2");
      devices_.push_back(std::make_unique<NvmlDevice>(api, i, handle));
    }
  }
  NvmlSystem(const NvmlSystem&) = delete;
  NvmlSystem& operator=(const NvmlSystem&) = delete;

  [[nodiscard]] std::size_t device_count() const override { return devices_.size(); }

  [[nodiscard]] TelemetryDevice& device(std::size_t index) override {
    if (index >= devices_.size()) {
      throw ConfigError("telemetry device index " + std::to_string(index) + " is out of range (" +
                        std::to_string(devices_.size()) + " devices)");
    }
    return *devices_[index];
  }

  [[nodiscard]] std::optional<PcieTopology> common_ancestor(const TelemetryDevice& a,
                                                            const TelemetryDevice& b) override {
    const Api& api = session_.api();
    GpuTopologyLevel level = kTopologySystem;
    if (!GPUPERF_NVML_QUERY(api, nvmlDeviceGetTopologyCommonAncestor, handle_of(a), handle_of(b),
                            &level)) {
      return {};
    }
    switch (level) {
      case kTopologyInternal:
        return PcieTopology::kSameBoard;
      case kTopologySingle:
        return PcieTopology::kSingleSwitch;
      case kTopologyMultiple:
        return PcieTopology::kMultipleSwitches;
      case kTopologyHostBridge:
        return PcieTopology::kHostBridge;
      case kTopologyNode:
        return PcieTopology::kNumaNode;
      case kTopologySystem:
        return PcieTopology::kSystem;
      default:
        return {};
    }
  }

  [[nodiscard]] std::optional<bool> nvlink_p2p(const TelemetryDevice& a,
                                               const TelemetryDevice& b) override {
    const Api& api = session_.api();
    GpuP2PStatus status = kP2PStatusOk;
    if (!GPUPERF_NVML_QUERY(api, nvmlDeviceGetP2PStatus, handle_of(a), handle_of(b),
                            kP2PCapsIndexNvlink, &status)) {
      return {};
    }
    return status == kP2PStatusOk;
  }

  [[nodiscard]] std::optional<std::string> driver_version() const override {
    char buffer[kDriverVersionBufferSize] = {};
    const Api& api = session_.api();
    if (!GPUPERF_NVML_QUERY(api, nvmlSystemGetDriverVersion, buffer, sizeof buffer)) return {};
    return std::string(buffer);
  }

  [[nodiscard]] std::optional<std::string> cuda_driver_version() const override {
    int version = 0;
    const Api& api = session_.api();
    if (!GPUPERF_NVML_QUERY(api, nvmlSystemGetCudaDriverVersion_v2, &version)) return {};
    // Encoded as 1000 * major + 10 * minor, like cudaDriverGetVersion.
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
  }

 private:
  // The NVML handle of one of this system's devices (topology queries take two handles).
  [[nodiscard]] Device handle_of(const TelemetryDevice& device) const {
    for (const auto& d : devices_) {
      if (d.get() == &device) return d->handle();
    }
    throw ConfigError("telemetry device " + std::to_string(device.index()) +
                      " does not belong to this NVML system");
  }

  NvmlSession session_;  // first: devices refer to its Api
  std::vector<std::unique_ptr<NvmlDevice>> devices_;
};

}  // namespace
}  // namespace gpuperf::detail::nvml

namespace gpuperf {

OpenedTelemetry open_nvml_telemetry(const std::string& library) {
  OpenedTelemetry opened;
  try {
    opened.system = std::make_unique<detail::nvml::NvmlSystem>(library);
    log::debug(log::cat("NVML: ", opened.system->device_count(), " device(s) from ", library));
  } catch (const std::exception& e) {
    opened.system.reset();
    opened.unavailable_reason = e.what();
  }
  return opened;
}

}  // namespace gpuperf
