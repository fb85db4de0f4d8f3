// own_kernels_run_on (own_kernels.h): asks the CUDA runtime whether this kernel has an image for
// the device. Every kernel of the library is built for the same architectures: one tells for all.

#include "device/own_kernels.h"

#include <cuda_runtime_api.h>

#include <atomic>

namespace gpuperf::detail {
namespace {

__global__ void probe_kernel() {}

}  // namespace

bool own_kernels_run_on(int device) {
  // 0: not asked yet, 1: runs, 2: does not.
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {};
  if (device < 0 || device >= kDevices) return false;
  const int state = known[device].load(std::memory_order_relaxed);
  if (state != 0) return state == 1;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  cudaFuncAttributes attributes{};
  const bool runs = cudaFuncGetAttributes(&attributes, probe_kernel) == cudaSuccess;
  (void)cudaGetLastError();  // a missing image is an answer here, not an error to report later
  (void)cudaSetDevice(current);
  known[device].store(runs ? 1 : 2, std::memory_order_relaxed);
  return runs;
}

}  // namespace gpuperf::detail
