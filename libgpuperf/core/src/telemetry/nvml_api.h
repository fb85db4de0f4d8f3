#pragma once
// The few NVML types and entry points gpuperf uses, declared here rather than taken from nvml.h:
// a fresh Debian has no nvml.h (the CUDA toolkit is not in main), and linking NVML would stop
// binaries from starting on machines without a driver, so libnvidia-ml.so.1 is dlopen()ed and
// these declarations describe what is looked up (pynvml does the same with ctypes).
// tests/core/test_nvml_declarations.cpp checks every line here against the real nvml.h where one
// exists. Member names are the exported symbol names, versioned ones included, so that nvml.h's
// "#define nvmlInit nvmlInit_v2" style macros never rename anything when both headers meet.

#include <string>

namespace gpuperf::detail::nvml {

/// nvmlReturn_t: a C enum, passed as int across the C ABI.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorNoData = 21;
inline constexpr Return kErrorUnknown = 999;

/// nvmlDevice_t: an opaque handle.
struct DeviceOpaque;
using Device = DeviceOpaque*;

/// nvmlEnableState_t.
using EnableState = int;
inline constexpr EnableState kFeatureDisabled = 0;
inline constexpr EnableState kFeatureEnabled = 1;

/// nvmlClockType_t.
using ClockType = int;
inline constexpr ClockType kClockGraphics = 0;
inline constexpr ClockType kClockSm = 1;
inline constexpr ClockType kClockMem = 2;

/// nvmlTemperatureSensors_t.
using TemperatureSensor = int;
inline constexpr TemperatureSensor kTemperatureGpu = 0;

/// nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs on the PCIe tree.
using GpuTopologyLevel = int;
inline constexpr GpuTopologyLevel kTopologyInternal = 0;
inline constexpr GpuTopologyLevel kTopologySingle = 10;
inline constexpr GpuTopologyLevel kTopologyMultiple = 20;
inline constexpr GpuTopologyLevel kTopologyHostBridge = 30;
inline constexpr GpuTopologyLevel kTopologyNode = 40;
inline constexpr GpuTopologyLevel kTopologySystem = 50;

/// nvmlGpuP2PCapsIndex_t (only the NVLink index is asked) and nvmlGpuP2PStatus_t.
using GpuP2PCapsIndex = int;
inline constexpr GpuP2PCapsIndex kP2PCapsIndexNvlink = 2;
using GpuP2PStatus = int;
inline constexpr GpuP2PStatus kP2PStatusOk = 0;

/// NVML_VALUE_NOT_AVAILABLE as an unsigned long long field holds it.
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

/// Buffer sizes: NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE,
/// NVML_DEVICE_UUID_V2_BUFFER_SIZE; process names have no constant, 256 is what nvidia-smi fits.
inline constexpr unsigned kDriverVersionBufferSize = 80;
inline constexpr unsigned kDeviceNameBufferSize = 96;
inline constexpr unsigned kDeviceUuidBufferSize = 96;
inline constexpr unsigned kProcessNameBufferSize = 256;

/// Upper bound on NVLink link indices probed; NVML answers "invalid argument" past the last link.
inline constexpr unsigned kMaxNvLinks = 64;

/// nvmlMemory_t (v1): used includes memory the driver reserves.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

/// nvmlMemory_v2_t: reserved reported apart from used, as nvidia-smi shows it.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
/// nvmlMemory_v2, i.e. NVML_STRUCT_VERSION(Memory, 2).
inline constexpr unsigned int kMemoryV2Version =
    static_cast<unsigned int>(sizeof(MemoryV2) | (2U << 24U));

/// nvmlUtilization_t, percent over NVML's last sample period.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

/// nvmlProcessInfo_t (the v2 layout that the *_v3 process queries fill).
struct ProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

/// nvmlPciInfo_t.
struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);
using SystemGetCudaDriverVersionFn = Return (*)(int*);
using SystemGetProcessNameFn = Return (*)(unsigned int, char*, unsigned int);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetMemoryInfoV2Fn = Return (*)(Device, MemoryV2*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetTemperatureFn = Return (*)(Device, TemperatureSensor, unsigned int*);
using DeviceGetUintFn = Return (*)(Device, unsigned int*);
using DeviceGetClockFn = Return (*)(Device, ClockType, unsigned int*);
using DeviceGetUllFn = Return (*)(Device, unsigned long long*);
using DeviceGetEccModeFn = Return (*)(Device, EnableState*, EnableState*);
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned int, EnableState*);
using DeviceGetCudaComputeCapabilityFn = Return (*)(Device, int*, int*);
using DeviceGetNvLinkRemotePciInfoFn = Return (*)(Device, unsigned int, PciInfo*);
using DeviceGetTopologyCommonAncestorFn = Return (*)(Device, Device, GpuTopologyLevel*);
using DeviceGetP2PStatusFn = Return (*)(Device, Device, GpuP2PCapsIndex, GpuP2PStatus*);
using DeviceGetProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);

/// The entry points, resolved from the loaded library; optional ones may be null (older drivers).
struct Api {
  // Required: without these there is no telemetry at all.
  InitFn nvmlInit_v2 = nullptr;
  ShutdownFn nvmlShutdown = nullptr;
  ErrorStringFn nvmlErrorString = nullptr;
  DeviceGetCountFn nvmlDeviceGetCount_v2 = nullptr;
  DeviceGetHandleByIndexFn nvmlDeviceGetHandleByIndex_v2 = nullptr;
  // Optional.
  SystemGetDriverVersionFn nvmlSystemGetDriverVersion = nullptr;
  SystemGetCudaDriverVersionFn nvmlSystemGetCudaDriverVersion_v2 = nullptr;
  SystemGetProcessNameFn nvmlSystemGetProcessName = nullptr;
  DeviceGetStringFn nvmlDeviceGetName = nullptr;
  DeviceGetStringFn nvmlDeviceGetUUID = nullptr;
  DeviceGetPciInfoFn nvmlDeviceGetPciInfo_v3 = nullptr;
  DeviceGetMemoryInfoFn nvmlDeviceGetMemoryInfo = nullptr;
  DeviceGetMemoryInfoV2Fn nvmlDeviceGetMemoryInfo_v2 = nullptr;
  DeviceGetUtilizationRatesFn nvmlDeviceGetUtilizationRates = nullptr;
  DeviceGetTemperatureFn nvmlDeviceGetTemperature = nullptr;
  DeviceGetUintFn nvmlDeviceGetPowerUsage = nullptr;
  DeviceGetUintFn nvmlDeviceGetPowerManagementLimit = nullptr;
  DeviceGetClockFn nvmlDeviceGetClockInfo = nullptr;
  DeviceGetClockFn nvmlDeviceGetMaxClockInfo = nullptr;
  // Renamed from ...ClocksThrottleReasons in driver 535; the loader takes whichever exists.
  DeviceGetUllFn nvmlDeviceGetCurrentClocksEventReasons = nullptr;
  DeviceGetUllFn nvmlDeviceGetTotalEnergyConsumption = nullptr;
  DeviceGetEccModeFn nvmlDeviceGetEccMode = nullptr;
  DeviceGetUintFn nvmlDeviceGetCurrPcieLinkGeneration = nullptr;
  DeviceGetUintFn nvmlDeviceGetCurrPcieLinkWidth = nullptr;
  DeviceGetUintFn nvmlDeviceGetMaxPcieLinkGeneration = nullptr;
  DeviceGetUintFn nvmlDeviceGetMaxPcieLinkWidth = nullptr;
  DeviceGetNvLinkStateFn nvmlDeviceGetNvLinkState = nullptr;
  DeviceGetCudaComputeCapabilityFn nvmlDeviceGetCudaComputeCapability = nullptr;
  DeviceGetNvLinkRemotePciInfoFn nvmlDeviceGetNvLinkRemotePciInfo_v2 = nullptr;
  DeviceGetTopologyCommonAncestorFn nvmlDeviceGetTopologyCommonAncestor = nullptr;
  DeviceGetP2PStatusFn nvmlDeviceGetP2PStatus = nullptr;
  DeviceGetProcessesFn nvmlDeviceGetComputeRunningProcesses_v3 = nullptr;
  DeviceGetProcessesFn nvmlDeviceGetGraphicsRunningProcesses_v3 = nullptr;

  /// nvmlErrorString(code), or "NVML error <code>" when that is unavailable.
  [[nodiscard]] std::string error_string(Return code) const;
  /// Throws NvmlError "<call>: <nvmlErrorString> (NVML error <code>)" unless code is kSuccess.
  void check(Return code, const char* call) const;
  /// For readings: true on success, false when the device or driver cannot give this reading
  /// (not supported, no permission, no data, entry point missing); throws NvmlError otherwise.
  [[nodiscard]] bool query(Return code, const char* call) const;
};

/// True for return codes that mean "this reading does not exist here", not "something broke".
[[nodiscard]] bool is_unavailable_code(Return code);

}  // namespace gpuperf::detail::nvml
