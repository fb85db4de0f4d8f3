#pragma once
// The device fingerprint every result carries: what ran, on which machine, with which software.

#include <string>

#include "gpuperf/base/not_available.h"

namespace gpuperf {

/// What the measurement ran on, and with which software.
struct DeviceFingerprint {
  std::string kind;  ///< "cuda" or "cpu"
  int index = 0;
  std::string name;                ///< e.g. "NVIDIA H200", or the CPU model
  int sm_count = 0;                ///< streaming multiprocessors (GPU) or hardware threads (CPU)
  std::string compute_capability;  ///< "9.0"; empty on CPU
  double memory_bytes = kNotAvailable;  ///< device memory, or host RAM on CPU
  double sm_clock_max_hz = kNotAvailable;
  double memory_clock_max_hz = kNotAvailable;
  double power_limit_watts = kNotAvailable;
  std::string driver_version;           ///< NVIDIA kernel driver, e.g. "580.159.04"
  std::string cuda_driver_api_version;  ///< CUDA version the driver supports, e.g. "13.0"
  std::string cuda_runtime_version;     ///< CUDA runtime LibTorch was built with
  std::string cudnn_version;
  std::string libtorch_version;
  std::string gpuperf_version;
  int intra_op_threads = 0;  ///< LibTorch's CPU threads
  std::string host;
  /// The host's CPU model and hardware threads, whatever the device: what feeds a GPU (a JPEG
  /// loader's rate follows them). "" and 0 in records written before they were recorded.
  std::string host_cpu;
  int host_cores = 0;
};

/// The NVIDIA kernel driver's version ("580.159.04") from /proc/driver/nvidia/version; "" where
/// there is no NVIDIA driver. Needs no library.
[[nodiscard]] std::string nvidia_driver_version();

}  // namespace gpuperf
