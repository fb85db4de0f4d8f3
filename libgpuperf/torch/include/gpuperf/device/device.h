#pragma once
// Choosing the device to measure on, describing it, and reading its memory.

#include <torch/types.h>

#include <memory>
#include <string>

#include "gpuperf/base/fingerprint.h"
#include "gpuperf/base/not_available.h"
#include "gpuperf/telemetry/telemetry.h"  // PciLocation

namespace gpuperf {

/// Parses a device name: "auto" (the first CUDA device if there is one, else the CPU), "cpu",
/// "cuda", "cuda:N". Throws ConfigError naming the field "device" when CUDA is asked for and
/// absent.
[[nodiscard]] torch::Device resolve_device(const std::string& text);

/// Whether this LibTorch has CUDA and sees at least one device.
[[nodiscard]] bool cuda_available();

/// Name, size, clocks and software versions of the device (see DeviceFingerprint).
[[nodiscard]] DeviceFingerprint collect_fingerprint(const torch::Device& device);

/// The software underneath, for a program's version text: "LibTorch 2.11.0, CUDA runtime 13.0,
/// cuDNN 9.13.0, CUDA driver API 13.0, NVIDIA driver 580.159.04" (what is present; "(CPU only)"
/// without CUDA).
[[nodiscard]] std::string software_versions();

/// Sets LibTorch's CPU intra-op threads: `threads` (> 0), or for 0 LibTorch's own default count
/// (at::get_num_threads()), applied explicitly. The explicit call matters: LibTorch's pools
/// start out with different sizes (OpenMP's follows the CPU affinity, the pthreadpool under
/// NNPACK/XNNPACK follows std::thread::hardware_concurrency()), and at::set_num_threads() makes
/// them agree. Measured on a 2-core machine whose OpenMP default is 1 thread: the seed program
/// ran ~16% slower without it.
void set_intra_op_threads(int threads);

/// Memory figures of a CUDA device, bytes; NaN on the CPU.
struct DeviceMemory {
  double total = kNotAvailable;
  double free = kNotAvailable;
  double allocated = kNotAvailable;       ///< by LibTorch's caching allocator, now
  double reserved = kNotAvailable;        ///< held by the caching allocator, now
  double peak_allocated = kNotAvailable;  ///< since the last reset_peak_memory()
  double peak_reserved = kNotAvailable;   ///< since the last reset_peak_memory()
};

/// Reads the memory figures (no-op NaNs on the CPU).
[[nodiscard]] DeviceMemory device_memory(const torch::Device& device);
/// Restarts the peak counters (allocated, reserved) of a CUDA device.
void reset_peak_memory(const torch::Device& device);
/// Hands the caching allocator's unused blocks of a CUDA device back to the driver (as
/// torch.cuda.empty_cache()); no-op elsewhere.
void release_cached_memory(const torch::Device& device);
/// release_cached_memory() after freeing cuBLAS's per-stream workspaces too (each stream that ran
/// a matrix product keeps one, 32 MiB and more on Hopper, until this call). Only while no captured
/// CUDA graph of this process will be replayed: a graph keeps using its capture's workspace.
void release_cached_memory_and_workspaces(const torch::Device& device);
/// The PCI location of a CUDA device. Throws CudaError for other devices.
[[nodiscard]] PciLocation cuda_pci_location(const torch::Device& device);

/// Waits for all work queued on the device.
void synchronize(const torch::Device& device);

/// Whether a /proc/cpuinfo text names an instruction set that multiplies bfloat16 natively: x86's
/// AVX512-BF16 or AMX-BF16 (flags "avx512_bf16", "amx_bf16"), Arm's BF16 (feature "bf16"). The
/// first "flags" or "Features" line decides.
[[nodiscard]] bool cpuinfo_computes_bf16(const std::string& cpuinfo);
/// cpuinfo_computes_bf16() of this machine (false where /proc/cpuinfo cannot be read). Without
/// it LibTorch's CPU kernels emulate bfloat16 and run slower than in float32 (the seed, AVX-512
/// without BF16: 0.77x fp32's rate; with AVX512-BF16: 2.67x; docs/results/2026-12-04-cpu-bf16).
[[nodiscard]] bool cpu_computes_bf16();

/// While alive, this thread's work on a CUDA device goes to a non-blocking stream made for it,
/// one per device for the process (not one of LibTorch's pool, which a copy or decode stream
/// could also be handed), at the default priority, instead of the legacy default stream (nothing
/// changes for other devices). The legacy default stream and every blocking stream of the
/// process wait for each other: a library that queues work on blocking streams of its own
/// (nvJPEG's hardware decoder, on another thread) would otherwise wait for the training step in
/// flight, and the step for it. Training runs use one.
class SideStreamScope {
 public:
  explicit SideStreamScope(const torch::Device& device);
  ~SideStreamScope();
  SideStreamScope(const SideStreamScope&) = delete;
  SideStreamScope& operator=(const SideStreamScope&) = delete;
  SideStreamScope(SideStreamScope&&) = delete;
  SideStreamScope& operator=(SideStreamScope&&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Whether this thread's current stream on a CUDA device is its default stream (false for other
/// devices).
[[nodiscard]] bool on_default_stream(const torch::Device& device);

}  // namespace gpuperf
