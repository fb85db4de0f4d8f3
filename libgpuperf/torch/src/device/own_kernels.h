#pragma once
// Whether gpuperf's own CUDA kernels run on a device (nvcc-compiled code; no LibTorch here).

namespace gpuperf::detail {

/// Whether gpuperf's kernels have code for CUDA device `device` (the build's CUDA architectures
/// include it, or PTX the driver can compile for it). Where not, a launch would fail with
/// cudaErrorNoKernelImageForDevice: the library runs ATen's kernels instead. Asked once per
/// device, then remembered.
bool own_kernels_run_on(int device);

}  // namespace gpuperf::detail
