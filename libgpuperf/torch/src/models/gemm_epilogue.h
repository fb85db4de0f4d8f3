#pragma once
// A linear layer and its GELU in one cuBLASLt matrix product (models/transformer_ops.cpp checks
// the tensors): y = gelu_tanh(x w^T + b), with the GELU's input kept for the backward pass, where
// ATen's linear and gelu write the product and then read it back in a second kernel (GPT-2's
// MLP: 12 such kernels, 0.74 ms of a 124M step on an H200). cuBLASLt's GELU epilogue is the tanh
// approximation (ATen's own fallback for its GELU epilogue is gelu(x, "tanh")); it is applied to
// the float32 sum before rounding. No LibTorch here.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// Device memory linear_gelu() may use as cuBLASLt's workspace.
constexpr std::size_t kGemmWorkspaceBytes = std::size_t{32} << 20;

/// What linear_gelu() did.
enum class GemmOutcome {
  kDone,         ///< y and pre written
  kUnsupported,  ///< cuBLASLt has no algorithm for it: nothing written (take ATen's path)
  kFailed,       ///< a cuBLASLt call failed (its status in `status`)
};

/// x [rows, in], w [out, in] and b [out], all `dtype` (kHalf or kBFloat16), row-major, 16-byte
/// aligned, in and out multiples of 8 -> y = gelu_tanh(x w^T + b) and pre = x w^T + b, both
/// [rows, out] of `dtype`. `workspace`: kGemmWorkspaceBytes of device memory. Queued on
/// `stream`; `status` gets cuBLASLt's status of the failing call.
GemmOutcome linear_gelu(NhwcDtype dtype, const void* x, const void* w, const void* b,
                        std::int64_t rows, int in, int out, void* y, void* pre, void* workspace,
                        cudaStream_t stream, int* status);

}  // namespace gpuperf::detail
