// A stand-in libnvidia-ml for tests: a shared library exporting the NVML entry points gpuperf
// loads, with canned answers, so that the loader (dlopen, symbol lookup, error handling, the
// memory v2 fallback, the process-list retry, the NVLink scan) runs on machines without a GPU.
// It is written against gpuperf's own declarations: whether those match NVML's ABI is
// test_nvml_declarations' job.
//
// Two devices. Device 0 answers everything. Device 1 is an older card: no memory v2, no NVLink,
// no energy counter, and its power reading fails as a lost GPU would. Of device 0's 16 active
// NVLinks, 12 end at device 1 and 4 at an NVSwitch; the two share a NUMA node on PCIe.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "telemetry/nvml_api.h"

namespace nv = gpuperf::detail::nvml;

namespace {

std::atomic<int> sessions{0};

// Handles are 1 + the device index, never dereferenced.
int index_of(nv::Device device) {
  return static_cast<int>(reinterpret_cast<std::uintptr_t>(device)) - 1;
}

nv::Return copy(const char* text, char* out, unsigned length) {
  if (std::strlen(text) + 1 > length) return nv::kErrorInsufficientSize;
  std::strcpy(out, text);
  return nv::kSuccess;
}

constexpr unsigned kComputeProcesses = 40;  // more than the loader's first guess of 32

}  // namespace

extern "C" {

// Open sessions (nvmlInit_v2 minus nvmlShutdown), for the test to see that RAII shut down.
__attribute__((visibility("default"))) int fake_nvml_sessions() { return sessions.load(); }

__attribute__((visibility("default"))) nv::Return nvmlInit_v2() {
  ++sessions;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlShutdown() {
  --sessions;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nv::Return code) {
  switch (code) {
    case nv::kErrorNotSupported:
      return "Not Supported";
    case nv::kErrorGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nv::Return nvmlSystemGetDriverVersion(char* out,
                                                                             unsigned length) {
  return copy("999.12.34", out, length);
}

__attribute__((visibility("default"))) nv::Return nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 13010;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlSystemGetProcessName(unsigned pid, char* out,
                                                                           unsigned length) {
  if (pid == 1001) return nv::kErrorNotFound;  // a process in another PID namespace
  char name[32];
  std::snprintf(name, sizeof name, "proc%u", pid);
  return copy(name, out, length);
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetHandleByIndex_v2(unsigned index,
                                                                                nv::Device* out) {
  if (index >= 2) return nv::kErrorInvalidArgument;
  *out = reinterpret_cast<nv::Device>(static_cast<std::uintptr_t>(index + 1));
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetName(nv::Device d, char* out,
                                                                    unsigned length) {
  return copy(index_of(d) == 0 ? "Fake H200" : "Fake V100", out, length);
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetUUID(nv::Device d, char* out,
                                                                    unsigned length) {
  return copy(index_of(d) == 0 ? "GPU-00000000-0000-0000-0000-000000000000"
                               : "GPU-11111111-1111-1111-1111-111111111111",
              out, length);
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetPciInfo_v3(nv::Device d,
                                                                          nv::PciInfo* pci) {
  std::memset(pci, 0, sizeof *pci);
  pci->bus = index_of(d) == 0 ? 0x18 : 0x9a;
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetMemoryInfo_v2(nv::Device d,
                                                                             nv::MemoryV2* m) {
  if (index_of(d) != 0) return nv::kErrorNotSupported;
  if (m->version != nv::kMemoryV2Version) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  m->total = 150ULL << 30;
  m->reserved = 512ULL << 20;
  m->used = 1ULL << 30;
  m->free = m->total - m->reserved - m->used;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetMemoryInfo(nv::Device d,
                                                                          nv::Memory* m) {
  m->total = 32ULL << 30;
  m->used = 2ULL << 30;
  m->free = m->total - m->used;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetUtilizationRates(
    nv::Device, nv::Utilization* u) {
  u->gpu = 50;
  u->memory = 20;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetTemperature(nv::Device,
                                                                           nv::TemperatureSensor s,
                                                                           unsigned* t) {
  if (s != nv::kTemperatureGpu) return nv::kErrorInvalidArgument;
  *t = 40;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetPowerUsage(nv::Device d,
                                                                          unsigned* mw) {
  if (index_of(d) == 1) return nv::kErrorGpuIsLost;
  *mw = 123456;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetPowerManagementLimit(nv::Device,
                                                                                    unsigned* mw) {
  *mw = 700000;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetClockInfo(nv::Device,
                                                                         nv::ClockType type,
                                                                         unsigned* mhz) {
  *mhz = type == nv::kClockSm ? 1755 : 2619;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetMaxClockInfo(nv::Device,
                                                                            nv::ClockType type,
                                                                            unsigned* mhz) {
  *mhz = type == nv::kClockSm ? 1980 : 3201;
  return nv::kSuccess;
}

// Only the pre-535 name, so the loader's fallback to it is exercised.
__attribute__((visibility("default"))) nv::Return nvmlDeviceGetCurrentClocksThrottleReasons(
    nv::Device, unsigned long long* bits) {
  *bits = 0x4;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetTotalEnergyConsumption(
    nv::Device d, unsigned long long* mj) {
  if (index_of(d) == 1) return nv::kErrorNotSupported;
  *mj = 987654321;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetEccMode(nv::Device,
                                                                       nv::EnableState* current,
                                                                       nv::EnableState* pending) {
  *current = nv::kFeatureEnabled;
  *pending = nv::kFeatureEnabled;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetCurrPcieLinkGeneration(nv::Device,
                                                                                      unsigned* v) {
  *v = 5;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetCurrPcieLinkWidth(nv::Device,
                                                                                 unsigned* v) {
  *v = 16;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetMaxPcieLinkGeneration(nv::Device,
                                                                                     unsigned* v) {
  *v = 5;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetMaxPcieLinkWidth(nv::Device,
                                                                                unsigned* v) {
  *v = 16;
  return nv::kSuccess;
}

// Device 0: 18 links, the first 16 up. Device 1: no NVLink.
__attribute__((visibility("default"))) nv::Return nvmlDeviceGetNvLinkState(nv::Device d,
                                                                           unsigned link,
                                                                           nv::EnableState* up) {
  if (index_of(d) == 1) return nv::kErrorNotSupported;
  if (link >= 18) return nv::kErrorInvalidArgument;
  *up = link < 16 ? nv::kFeatureEnabled : nv::kFeatureDisabled;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetNvLinkRemotePciInfo_v2(
    nv::Device d, unsigned link, nv::PciInfo* pci) {
  if (index_of(d) == 1) return nv::kErrorNotSupported;
  if (link >= 18) return nv::kErrorInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  pci->bus = link < 12 ? 0x9a : 0xc1;  // device 1, or a switch
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetTopologyCommonAncestor(
    nv::Device a, nv::Device b, nv::GpuTopologyLevel* level) {
  *level = index_of(a) == index_of(b) ? nv::kTopologyInternal : nv::kTopologyNode;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetP2PStatus(nv::Device, nv::Device,
                                                                         nv::GpuP2PCapsIndex index,
                                                                         nv::GpuP2PStatus* status) {
  if (index != nv::kP2PCapsIndexNvlink) return nv::kErrorInvalidArgument;
  *status = nv::kP2PStatusOk;
  return nv::kSuccess;
}

__attribute__((visibility("default"))) nv::Return nvmlDeviceGetCudaComputeCapability(nv::Device d,
                                                                                     int* major,
                                                                                     int* minor) {
  *major = index_of(d) == 0 ? 9 : 7;
  *minor = 0;
  return nv::kSuccess;
}

// Device 0: 40 compute processes (pids 1000..1039), pid 1001 without memory accounting.
__attribute__((visibility("default"))) nv::Return nvmlDeviceGetComputeRunningProcesses_v3(
    nv::Device d, unsigned* count, nv::ProcessInfo* infos) {
  const unsigned n = index_of(d) == 0 ? kComputeProcesses : 0;
  if (*count < n) {
    *count = n;
    return nv::kErrorInsufficientSize;
  }
  for (unsigned i = 0; i < n; ++i) {
    infos[i] = nv::ProcessInfo{1000 + i, i == 1 ? nv::kValueNotAvailable : (i + 1ULL) << 20,
                               0xFFFFFFFFu, 0xFFFFFFFFu};
  }
  *count = n;
  return nv::kSuccess;
}

// Device 0: pid 1000 also holds a graphics context.
__attribute__((visibility("default"))) nv::Return nvmlDeviceGetGraphicsRunningProcesses_v3(
    nv::Device d, unsigned* count, nv::ProcessInfo* infos) {
  const unsigned n = index_of(d) == 0 ? 1 : 0;
  if (*count < n) {
    *count = n;
    return nv::kErrorInsufficientSize;
  }
  if (n == 1) infos[0] = nv::ProcessInfo{1000, 1ULL << 20, 0xFFFFFFFFu, 0xFFFFFFFFu};
  *count = n;
  return nv::kSuccess;
}

}  // extern "C"
