#pragma once
// One kernel that converts many tensors between fp32 and fp16/bf16 (round to nearest even, as ATen
// converts), compiled by nvcc where the build has a CUDA compiler (GPUPERF_WITH_CUDA_KERNELS). A
// training step under autocast casts each weight in its own kernel, forward, and each weight
// gradient back in its own kernel: 56 + 56 kernels for ResNet-50. No LibTorch here: the caller
// (models/weight_cast.cpp) checks the tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// out[i][k] = in[i][k] converted, for k < numel[i] and i < count: every tensor dense, in memory
/// order. Launches one kernel per 48 tensors on `stream`; returns the first launch error.
cudaError_t cast_tensors(NhwcDtype in_dtype, const void* const* in, NhwcDtype out_dtype,
                         void* const* out, const std::int64_t* numel, int count,
                         cudaStream_t stream);

}  // namespace gpuperf::detail
