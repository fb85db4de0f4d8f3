// Checks gpuperf's own NVML declarations (libgpuperf/src/telemetry/nvml_api.h) against the real
// nvml.h. Built only where CMake finds nvml.h; compiling is the test: every check below is a
// static_assert, so a wrong signature, layout or constant fails the build and names the item.
#include <nvml.h>

#include <cstddef>
#include <type_traits>

#include "gpuperf/telemetry/clock_events.h"
#include "telemetry/nvml_api.h"

namespace {

namespace nv = gpuperf::detail::nvml;

// Mirror<T>: the type nvml_api.h uses in place of nvml.h's T. Types that are not listed mirror
// themselves (unsigned int*, char*, int*, ...). C enums are passed as int.
template <typename T>
struct Mirror {
  using type = T;
};
template <>
struct Mirror<nvmlReturn_t> {
  using type = nv::Return;
};
template <>
struct Mirror<nvmlDevice_t> {
  using type = nv::Device;
};
template <>
struct Mirror<nvmlDevice_t*> {
  using type = nv::Device*;
};
template <>
struct Mirror<nvmlEnableState_t*> {
  using type = nv::EnableState*;
};
template <>
struct Mirror<nvmlClockType_t> {
  using type = nv::ClockType;
};
template <>
struct Mirror<nvmlTemperatureSensors_t> {
  using type = nv::TemperatureSensor;
};
template <>
struct Mirror<nvmlMemory_t*> {
  using type = nv::Memory*;
};
template <>
struct Mirror<nvmlMemory_v2_t*> {
  using type = nv::MemoryV2*;
};
template <>
struct Mirror<nvmlUtilization_t*> {
  using type = nv::Utilization*;
};
template <>
struct Mirror<nvmlProcessInfo_t*> {
  using type = nv::ProcessInfo*;
};
template <>
struct Mirror<nvmlPciInfo_t*> {
  using type = nv::PciInfo*;
};
template <>
struct Mirror<nvmlGpuTopologyLevel_t*> {
  using type = nv::GpuTopologyLevel*;
};
template <>
struct Mirror<nvmlGpuP2PCapsIndex_t> {
  using type = nv::GpuP2PCapsIndex;
};
template <>
struct Mirror<nvmlGpuP2PStatus_t*> {
  using type = nv::GpuP2PStatus*;
};
template <typename R, typename... Args>
struct Mirror<R (*)(Args...)> {
  using type = typename Mirror<R>::type (*)(typename Mirror<Args>::type...);
};

// The function `name` in nvml.h has, once mirrored, exactly the type of Api's member `name`.
#define GPUPERF_CHECK_ENTRY_POINT(name)                                                   \
  static_assert(std::is_same_v<Mirror<decltype(&::name)>::type, decltype(nv::Api::name)>, \
                "nvml_api.h declares " #name " differently from nvml.h")

GPUPERF_CHECK_ENTRY_POINT(nvmlInit_v2);
GPUPERF_CHECK_ENTRY_POINT(nvmlShutdown);
GPUPERF_CHECK_ENTRY_POINT(nvmlErrorString);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetCount_v2);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetHandleByIndex_v2);
GPUPERF_CHECK_ENTRY_POINT(nvmlSystemGetDriverVersion);
GPUPERF_CHECK_ENTRY_POINT(nvmlSystemGetCudaDriverVersion_v2);
GPUPERF_CHECK_ENTRY_POINT(nvmlSystemGetProcessName);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetName);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetUUID);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetPciInfo_v3);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetMemoryInfo);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetMemoryInfo_v2);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetUtilizationRates);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetTemperature);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetPowerUsage);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetPowerManagementLimit);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetClockInfo);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetMaxClockInfo);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetCurrentClocksEventReasons);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetTotalEnergyConsumption);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetEccMode);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetCurrPcieLinkGeneration);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetCurrPcieLinkWidth);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetMaxPcieLinkGeneration);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetMaxPcieLinkWidth);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetNvLinkState);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetCudaComputeCapability);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetNvLinkRemotePciInfo_v2);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetTopologyCommonAncestor);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetP2PStatus);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetComputeRunningProcesses_v3);
GPUPERF_CHECK_ENTRY_POINT(nvmlDeviceGetGraphicsRunningProcesses_v3);

// C enums are passed as int.
static_assert(sizeof(nvmlReturn_t) == sizeof(nv::Return));
static_assert(sizeof(nvmlEnableState_t) == sizeof(nv::EnableState));
static_assert(sizeof(nvmlClockType_t) == sizeof(nv::ClockType));
static_assert(sizeof(nvmlTemperatureSensors_t) == sizeof(nv::TemperatureSensor));
static_assert(sizeof(nvmlGpuTopologyLevel_t) == sizeof(nv::GpuTopologyLevel));
static_assert(sizeof(nvmlGpuP2PCapsIndex_t) == sizeof(nv::GpuP2PCapsIndex));
static_assert(sizeof(nvmlGpuP2PStatus_t) == sizeof(nv::GpuP2PStatus));

// Return codes and enum values.
static_assert(NVML_SUCCESS == nv::kSuccess);
static_assert(NVML_ERROR_UNINITIALIZED == nv::kErrorUninitialized);
static_assert(NVML_ERROR_INVALID_ARGUMENT == nv::kErrorInvalidArgument);
static_assert(NVML_ERROR_NOT_SUPPORTED == nv::kErrorNotSupported);
static_assert(NVML_ERROR_NO_PERMISSION == nv::kErrorNoPermission);
static_assert(NVML_ERROR_NOT_FOUND == nv::kErrorNotFound);
static_assert(NVML_ERROR_INSUFFICIENT_SIZE == nv::kErrorInsufficientSize);
static_assert(NVML_ERROR_DRIVER_NOT_LOADED == nv::kErrorDriverNotLoaded);
static_assert(NVML_ERROR_FUNCTION_NOT_FOUND == nv::kErrorFunctionNotFound);
static_assert(NVML_ERROR_GPU_IS_LOST == nv::kErrorGpuIsLost);
static_assert(NVML_ERROR_NO_DATA == nv::kErrorNoData);
static_assert(NVML_ERROR_UNKNOWN == nv::kErrorUnknown);
static_assert(NVML_FEATURE_DISABLED == nv::kFeatureDisabled);
static_assert(NVML_FEATURE_ENABLED == nv::kFeatureEnabled);
static_assert(NVML_CLOCK_GRAPHICS == nv::kClockGraphics);
static_assert(NVML_CLOCK_SM == nv::kClockSm);
static_assert(NVML_CLOCK_MEM == nv::kClockMem);
static_assert(NVML_TEMPERATURE_GPU == nv::kTemperatureGpu);
static_assert(NVML_TOPOLOGY_INTERNAL == nv::kTopologyInternal);
static_assert(NVML_TOPOLOGY_SINGLE == nv::kTopologySingle);
static_assert(NVML_TOPOLOGY_MULTIPLE == nv::kTopologyMultiple);
static_assert(NVML_TOPOLOGY_HOSTBRIDGE == nv::kTopologyHostBridge);
static_assert(NVML_TOPOLOGY_NODE == nv::kTopologyNode);
static_assert(NVML_TOPOLOGY_SYSTEM == nv::kTopologySystem);
static_assert(NVML_P2P_CAPS_INDEX_NVLINK == nv::kP2PCapsIndexNvlink);
static_assert(NVML_P2P_STATUS_OK == nv::kP2PStatusOk);
static_assert(static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE) == nv::kValueNotAvailable);

// Buffers are at least as large as NVML asks for.
static_assert(nv::kDriverVersionBufferSize >= NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
static_assert(nv::kDeviceNameBufferSize >= NVML_DEVICE_NAME_V2_BUFFER_SIZE);
static_assert(nv::kDeviceUuidBufferSize >= NVML_DEVICE_UUID_V2_BUFFER_SIZE);
static_assert(nv::kMaxNvLinks >= NVML_NVLINK_MAX_LINKS);

// Struct layouts, field by field.
#define GPUPERF_CHECK_FIELD(nvml_type, ours, field)                        \
  static_assert(offsetof(nvml_type, field) == offsetof(nv::ours, field) && \
                    sizeof(nvml_type::field) == sizeof(nv::ours::field),   \
                #nvml_type "." #field " differs")

static_assert(sizeof(nvmlMemory_t) == sizeof(nv::Memory));
GPUPERF_CHECK_FIELD(nvmlMemory_t, Memory, total);
GPUPERF_CHECK_FIELD(nvmlMemory_t, Memory, free);
GPUPERF_CHECK_FIELD(nvmlMemory_t, Memory, used);

static_assert(sizeof(nvmlMemory_v2_t) == sizeof(nv::MemoryV2));
static_assert(nvmlMemory_v2 == nv::kMemoryV2Version);
GPUPERF_CHECK_FIELD(nvmlMemory_v2_t, MemoryV2, version);
GPUPERF_CHECK_FIELD(nvmlMemory_v2_t, MemoryV2, total);
GPUPERF_CHECK_FIELD(nvmlMemory_v2_t, MemoryV2, reserved);
GPUPERF_CHECK_FIELD(nvmlMemory_v2_t, MemoryV2, free);
GPUPERF_CHECK_FIELD(nvmlMemory_v2_t, MemoryV2, used);

static_assert(sizeof(nvmlUtilization_t) == sizeof(nv::Utilization));
GPUPERF_CHECK_FIELD(nvmlUtilization_t, Utilization, gpu);
GPUPERF_CHECK_FIELD(nvmlUtilization_t, Utilization, memory);

static_assert(sizeof(nvmlProcessInfo_t) == sizeof(nv::ProcessInfo));
GPUPERF_CHECK_FIELD(nvmlProcessInfo_t, ProcessInfo, pid);
GPUPERF_CHECK_FIELD(nvmlProcessInfo_t, ProcessInfo, usedGpuMemory);
GPUPERF_CHECK_FIELD(nvmlProcessInfo_t, ProcessInfo, gpuInstanceId);
GPUPERF_CHECK_FIELD(nvmlProcessInfo_t, ProcessInfo, computeInstanceId);

static_assert(sizeof(nvmlPciInfo_t) == sizeof(nv::PciInfo));
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, busIdLegacy);
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, domain);
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, bus);
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, device);
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, pciDeviceId);
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, pciSubSystemId);
GPUPERF_CHECK_FIELD(nvmlPciInfo_t, PciInfo, busId);

// Clock-event reason bits. Headers since driver 535 spell them ...ClocksEventReason..., but CUDA
// 13's nvml.h still names some only ...ClocksThrottleReason...: check whichever each defines.
namespace ce = gpuperf::clock_event;
#ifdef nvmlClocksEventReasonGpuIdle
static_assert(nvmlClocksEventReasonGpuIdle == ce::kGpuIdle);
#else
static_assert(nvmlClocksThrottleReasonGpuIdle == ce::kGpuIdle);
#endif
#ifdef nvmlClocksEventReasonApplicationsClocksSetting
static_assert(nvmlClocksEventReasonApplicationsClocksSetting == ce::kApplicationsClocksSetting);
#else
static_assert(nvmlClocksThrottleReasonApplicationsClocksSetting == ce::kApplicationsClocksSetting);
#endif
#ifdef nvmlClocksEventReasonSwPowerCap
static_assert(nvmlClocksEventReasonSwPowerCap == ce::kSwPowerCap);
#else
static_assert(nvmlClocksThrottleReasonSwPowerCap == ce::kSwPowerCap);
#endif
#ifdef nvmlClocksEventReasonHwSlowdown
static_assert(nvmlClocksEventReasonHwSlowdown == ce::kHwSlowdown);
#else
static_assert(nvmlClocksThrottleReasonHwSlowdown == ce::kHwSlowdown);
#endif
#ifdef nvmlClocksEventReasonSyncBoost
static_assert(nvmlClocksEventReasonSyncBoost == ce::kSyncBoost);
#else
static_assert(nvmlClocksThrottleReasonSyncBoost == ce::kSyncBoost);
#endif
#ifdef nvmlClocksEventReasonSwThermalSlowdown
static_assert(nvmlClocksEventReasonSwThermalSlowdown == ce::kSwThermalSlowdown);
#else
static_assert(nvmlClocksThrottleReasonSwThermalSlowdown == ce::kSwThermalSlowdown);
#endif
#ifdef nvmlClocksEventReasonHwThermalSlowdown
static_assert(nvmlClocksEventReasonHwThermalSlowdown == ce::kHwThermalSlowdown);
#else
static_assert(nvmlClocksThrottleReasonHwThermalSlowdown == ce::kHwThermalSlowdown);
#endif
#ifdef nvmlClocksEventReasonHwPowerBrakeSlowdown
static_assert(nvmlClocksEventReasonHwPowerBrakeSlowdown == ce::kHwPowerBrakeSlowdown);
#else
static_assert(nvmlClocksThrottleReasonHwPowerBrakeSlowdown == ce::kHwPowerBrakeSlowdown);
#endif
#ifdef nvmlClocksEventReasonDisplayClockSetting
static_assert(nvmlClocksEventReasonDisplayClockSetting == ce::kDisplayClockSetting);
#else
static_assert(nvmlClocksThrottleReasonDisplayClockSetting == ce::kDisplayClockSetting);
#endif

}  // namespace

int main() { return 0; }
