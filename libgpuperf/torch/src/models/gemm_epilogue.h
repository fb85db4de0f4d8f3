#pragma once
// A linear layer and its GELU in one cuBLASLt matrix product (models/transformer_ops.cpp checks
// the tensors): y = gelu_tanh(x w^T + b), with the GELU's input kept for the backward pass, where
// ATen's linear and gelu write the product and then read it back in a second kernel (GPT-2's
// MLP: 12 such kernels, 0.74 ms of a 124M step on an H200). cuBLASLt's GELU epilogue is the tanh
// approximation (ATen's own fallback for its GELU epilogue is gelu(x, "tanh")); it is applied to
// the float32 sum before rounding.
//
// matmul() is a plain product through the same path, for the transformer's products without a
// bias. Asked to (`timed`), both take per product shape the fastest of the algorithms cuBLASLt's
// heuristic offers, timed at the shape's first call outside a CUDA graph's capture (see
// matmul()); else the heuristic's first. No LibTorch here.

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
/// [rows, out] of `dtype`. `workspace`: kGemmWorkspaceBytes of device memory. `timed`: the
/// algorithm chosen as matmul() chooses it, else the heuristic's first. Queued on `stream`;
/// `status` gets cuBLASLt's status of the failing call.
GemmOutcome linear_gelu(bool timed, NhwcDtype dtype, const void* x, const void* w, const void* b,
                        std::int64_t rows, int in, int out, void* y, void* pre, void* workspace,
                        cudaStream_t stream, int* status);

/// How matmul() and linear_gelu() choose a product's algorithm (matmul()).
constexpr int kTimedAlgorithms = 8;
constexpr int kTimingRounds = 3;
constexpr int kTimingCalls = 5;
constexpr double kTimingMargin = 0.01;

/// Column-major D [m x n] = op(A) op(B) (k the shared dimension), A and B of 16-bit `dtype`
/// (kHalf or kBFloat16), D of `dtype` or float32 (`float_out`); `trans_a`: A is stored k x m (read
/// transposed), else m x k; `trans_b`: B stored n x k, else k x n; leading dimensions lda, ldb,
/// ldd (D's is m or more). The algorithm, where `timed` (else the heuristic's first): of the
/// heuristic's first kTimedAlgorithms for the product (shapes, operations, types, alignments,
/// device), the one fastest by the median of kTimingRounds rounds of kTimingCalls calls each (the
/// candidates alternating on `stream`, after two calls each to warm up), where it is at least
/// kTimingMargin faster than the heuristic's first, else the first; chosen at the product's first
/// call outside a capture (that call waits for `stream`), kept for the process, the heuristic's
/// first taken during a capture. Isolated on an H100 at its 700 W limit, Llama 1B's GEMMs were 2.3%
/// faster a step this way (docs/results/2026-12-06-h100-llama-gemm-algorithms); its whole step was
/// not (the card clocked down: docs/results/2026-12-06-h100-llama-timed-gemms). Queued on `stream`.
GemmOutcome matmul(bool timed, NhwcDtype dtype, bool float_out, bool trans_a, bool trans_b,
                   std::int64_t m, std::int64_t n, std::int64_t k, const void* a, std::int64_t lda,
                   const void* b, std::int64_t ldb, void* d, std::int64_t ldd, void* workspace,
                   cudaStream_t stream, int* status);

}  // namespace gpuperf::detail
