#include "gpuperf/device/device.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "gpuperf/base/error.h"
#include "gpuperf/base/version.h"

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace gpuperf {
namespace {

#if GPUPERF_WITH_CUDA
constexpr const char* kCudaBuildNote = " with CUDA, 0 devices visible";
#else
constexpr const char* kCudaBuildNote = ", built without CUDA";
#endif

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

#if GPUPERF_WITH_CUDA
std::string cuda_version_text(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}
#endif

#if GPUPERF_WITH_CUDA
// The CUDA software versions: none of them needs a device.
void fill_cuda_software(DeviceFingerprint& f) {
  int version = 0;
  if (cudaDriverGetVersion(&version) == cudaSuccess) {
    f.cuda_driver_api_version = cuda_version_text(version);
  }
  if (cudaRuntimeGetVersion(&version) == cudaSuccess) {
    f.cuda_runtime_version = cuda_version_text(version);
  }
  if (at::globalContext().hasCuDNN()) {
    // cuDNN 9 encodes major * 10000 + minor * 100 + patch (8.x: major * 1000 + minor * 100).
    const long v = at::globalContext().versionCuDNN();
    const long major = v >= 90000 ? v / 10000 : v / 1000;
    const long minor = v >= 90000 ? (v % 10000) / 100 : (v % 1000) / 100;
    f.cudnn_version =
        std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
  }
  f.driver_version = nvidia_driver_version();
}
#endif

void fill_common(DeviceFingerprint& f) {
  f.libtorch_version = TORCH_VERSION;
  f.gpuperf_version = kBuildVersion;
  f.intra_op_threads = at::get_num_threads();
  f.host = host_name();
  f.host_cpu = cpu_model();
  f.host_cores = static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace

bool cuda_available() {
#if GPUPERF_WITH_CUDA
  return c10::cuda::device_count() > 0;
#else
  return false;
#endif
}

torch::Device resolve_device(const std::string& text) {
  if (text == "auto")
    return cuda_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (text == "cpu") return torch::kCPU;
  if (text == "cuda" || text.rfind("cuda:", 0) == 0) {
    if (!cuda_available()) {
      throw ConfigError("device", text,
                        std::string("no CUDA device available (LibTorch ") + TORCH_VERSION +
                            kCudaBuildNote + ")");
    }
    int index = 0;
    if (text.size() > 5) {
      const std::string digits = text.substr(5);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw ConfigError("device", text, "expected cuda:N with N a device number");
      }
      index = std::stoi(digits);
    }
#if GPUPERF_WITH_CUDA
    const int count = c10::cuda::device_count();
    if (index >= count) {
      throw ConfigError("device", text, "only " + std::to_string(count) + " CUDA device(s)");
    }
#endif
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw ConfigError("device", "unknown value '" + text + "' (choose auto, cpu, cuda or cuda:N)");
}

DeviceFingerprint collect_fingerprint(const torch::Device& device) {
  DeviceFingerprint f;
  fill_common(f);
  f.kind = device.is_cuda() ? "cuda" : "cpu";
  f.index = device.has_index() ? device.index() : 0;
  if (device.is_cpu()) {
    f.name = cpu_model();
    f.sm_count = static_cast<int>(std::thread::hardware_concurrency());
    f.memory_bytes =
        static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    return f;
  }
#if GPUPERF_WITH_CUDA
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(f.index);
  f.name = props->name;
  f.sm_count = props->multiProcessorCount;
  f.compute_capability = std::to_string(props->major) + "." + std::to_string(props->minor);
  f.memory_bytes = static_cast<double>(props->totalGlobalMem);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, f.index) == cudaSuccess)
    f.sm_clock_max_hz = khz * 1e3;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, f.index) == cudaSuccess) {
    f.memory_clock_max_hz = khz * 1e3;
  }
  fill_cuda_software(f);
#endif
  return f;
}

std::string software_versions() {
  DeviceFingerprint f;
  fill_common(f);
  std::string text = "LibTorch " + f.libtorch_version;
#if GPUPERF_WITH_CUDA
  fill_cuda_software(f);
  if (!f.cuda_runtime_version.empty()) text += ", CUDA runtime " + f.cuda_runtime_version;
  if (!f.cudnn_version.empty()) text += ", cuDNN " + f.cudnn_version;
  if (!f.cuda_driver_api_version.empty()) {
    text += ", CUDA driver API " + f.cuda_driver_api_version;
  }
#else
  text += " (CPU only)";
#endif
  const std::string driver = nvidia_driver_version();
  if (!driver.empty()) text += ", NVIDIA driver " + driver;
  return text;
}

void set_intra_op_threads(int threads) {
  if (threads < 0) {
    throw ConfigError("threads",
                      "must be >= 0 (0: LibTorch's default), got " + std::to_string(threads));
  }
  at::set_num_threads(threads > 0 ? threads : at::get_num_threads());
}

#if GPUPERF_WITH_CUDA
namespace {

// LibTorch sets up its CUDA state, the caching allocator's tables for every GPU included, with
// the process's first CUDA tensor: the allocator's statistics refuse a device before that
// ("Invalid device argument"). Once per process.
void initialise_cuda(c10::DeviceIndex index) {
  static const bool initialised = [index] {
    (void)at::empty(
        {1}, at::TensorOptions().device(torch::Device(torch::kCUDA, index)).dtype(at::kByte));
    return true;
  }();
  (void)initialised;
}

}  // namespace
#endif

DeviceMemory device_memory(const torch::Device& device) {
  DeviceMemory m;
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) {
    const int index = device.has_index() ? device.index() : 0;
    initialise_cuda(static_cast<c10::DeviceIndex>(index));
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    size_t free = 0;
    size_t total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) {
      m.free = static_cast<double>(free);
      m.total = static_cast<double>(total);
    }
    const auto stats =
        c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
    constexpr size_t kAll = 0;  // StatType::AGGREGATE, whose namespace moved between versions
    m.allocated = static_cast<double>(stats.allocated_bytes[kAll].current);
    m.reserved = static_cast<double>(stats.reserved_bytes[kAll].current);
    m.peak_allocated = static_cast<double>(stats.allocated_bytes[kAll].peak);
    m.peak_reserved = static_cast<double>(stats.reserved_bytes[kAll].peak);
  }
#endif
  return m;
}

void release_cached_memory(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)device;
#endif
}

void release_cached_memory_and_workspaces(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) at::cuda::clearCublasWorkspaces();
#endif
  release_cached_memory(device);
}

void reset_peak_memory(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) {
    const auto index = static_cast<c10::DeviceIndex>(device.has_index() ? device.index() : 0);
    initialise_cuda(index);
    c10::cuda::CUDACachingAllocator::resetPeakStats(index);
  }
#endif
}

PciLocation cuda_pci_location(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* props =
        at::cuda::getDeviceProperties(device.has_index() ? device.index() : 0);
    PciLocation location;
    location.domain = static_cast<unsigned>(props->pciDomainID);
    location.bus = static_cast<unsigned>(props->pciBusID);
    location.device = static_cast<unsigned>(props->pciDeviceID);
    return location;
  }
#endif
  throw CudaError("cuda_pci_location: " + device.str() + " is not a CUDA device");
}

#if GPUPERF_WITH_CUDA
namespace {
// One side stream per device for the whole process, made for it (a pool stream could also be
// handed to a copy or decode stream, which would then queue behind the training): every stream
// that runs a matrix product gets a cuBLAS workspace of its own (32 MiB and more on Hopper), so
// runs that each took a new stream (a batch search's tries) would pile them up. Never destroyed.
c10::cuda::CUDAStream side_stream(c10::DeviceIndex index) {
  static std::mutex mutex;
  static std::map<c10::DeviceIndex, c10::cuda::CUDAStream> streams;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = streams.find(index);
  if (found != streams.end()) return found->second;
  const c10::cuda::CUDAGuard guard(index);
  cudaStream_t raw = nullptr;
  C10_CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromExternal(raw, index);
  streams.emplace(index, stream);
  return stream;
}
}  // namespace

struct SideStreamScope::State {
  explicit State(c10::DeviceIndex index) : guard(side_stream(index)) {}
  c10::cuda::CUDAStreamGuard guard;  // puts the previous stream back when destroyed
};

SideStreamScope::SideStreamScope(const torch::Device& device) {
  if (device.is_cuda()) {
    state_ =
        std::make_unique<State>(device.has_index() ? device.index() : c10::cuda::current_device());
  }
}
#else
struct SideStreamScope::State {};

SideStreamScope::SideStreamScope(const torch::Device& device) { (void)device; }
#endif

SideStreamScope::~SideStreamScope() = default;

bool on_default_stream(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (!device.is_cuda()) return false;
  const c10::DeviceIndex index = device.has_index() ? device.index() : c10::cuda::current_device();
  return c10::cuda::getCurrentCUDAStream(index) == c10::cuda::getDefaultCUDAStream(index);
#else
  (void)device;
  return false;
#endif
}

bool cpuinfo_computes_bf16(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    for (std::string word; words >> word;) {
      if (word == "avx512_bf16" || word == "amx_bf16" || word == "bf16") return true;
    }
    return false;
  }
  return false;
}

bool cpu_computes_bf16() {
  static const bool computes = [] {
    std::ifstream in("/proc/cpuinfo");
    std::ostringstream text;
    text << in.rdbuf();
    return cpuinfo_computes_bf16(text.str());
  }();
  return computes;
}

void synchronize(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDAGuard guard(
        static_cast<c10::DeviceIndex>(device.has_index() ? device.index() : 0));
    c10::cuda::device_synchronize();
  }
#endif
}

}  // namespace gpuperf
