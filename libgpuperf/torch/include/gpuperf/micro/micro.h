#pragma once
// Microbenchmarks of one device: GEMM throughput per data type and memory bandwidth (device
// copy, read, write; host<->device from pinned and pageable memory), timed with gpuperf's timers
// and measure() windows, on random data that rotates past the L2 cache.
//
//   gpuperf::MicroOptions options;                       // warm-up 3, 5 windows of 10 calls
//   auto device = gpuperf::resolve_device("cuda");
//   auto bf16 = gpuperf::run_gemm(gpuperf::GemmDtype::kBf16, {8192, 8192, 8192}, device, options);
//   auto copy = gpuperf::run_memory(gpuperf::MemoryOp::kDeviceCopy, 1 << 30, device, options);
//   std::cout << bf16.value() << " " << bf16.unit << ", " << copy.value() << " GB/s\n";

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/results/micro_result.h"

namespace gpuperf {

/// How the microbenchmarks time: warm-up, windows of calls, and the GEMM inputs rotated past
/// the L2 cache (MicroRun::timing; a run's seed is RunBasics::seed).
struct MicroTiming {
  int warmup = 3;             ///< untimed calls first (cuBLAS heuristics, allocator, clocks)
  int calls_per_window = 10;  ///< calls between two timer marks
  int windows = 5;            ///< timed windows; the result is their median
  int min_operand_sets = 4;   ///< GEMM input pairs rotated at least
  double l2_multiple = 3;     ///< rotated GEMM inputs together exceed this many L2 caches

  /// Throws ConfigError naming the first bad field ("MicroTiming::windows").
  void validate() const;
};

/// Measurement settings of one microbenchmark call: its timing and the seed of its operands.
struct MicroOptions : MicroTiming {
  std::uint64_t seed = 0;  ///< random operands
};

/// Allows (or forbids) TF32 math for fp32 matmuls while alive; restores the previous state of
/// both TF32 switches (cuBLAS, cuDNN) when it ends.
class MatmulTf32Guard {
 public:
  /// Sets TF32 for matmuls and convolutions to `allow`.
  explicit MatmulTf32Guard(bool allow);
  ~MatmulTf32Guard();
  MatmulTf32Guard(const MatmulTf32Guard&) = delete;
  MatmulTf32Guard& operator=(const MatmulTf32Guard&) = delete;

 private:
  bool cublas_;
  bool cudnn_;
};

/// Whether `dtype` GEMMs can run on `device` with this LibTorch; when not, `reason` says why.
[[nodiscard]] bool gemm_supported(GemmDtype dtype, const torch::Device& device,
                                  std::string* reason = nullptr);

/// Inputs of one GEMM in the layout the timed op takes: A row-major [M,K]; B [K,N], row-major
/// for torch::mm and column-major for int8 and fp8 (what cuBLASLt's fast paths and _scaled_mm
/// want). Scales (fp8 only) are float32 scalars of 1.
struct GemmOperands {
  torch::Tensor a;
  torch::Tensor b;
  torch::Tensor scale_a;
  torch::Tensor scale_b;
};

/// Random operands (never zeros: normal values cast to the dtype; int8 uniform in [-128, 127]).
[[nodiscard]] GemmOperands make_gemm_operands(GemmDtype dtype, const GemmShape& shape,
                                              const torch::Device& device);
/// Bytes of one operand set (A and B) of `dtype`.
[[nodiscard]] double gemm_operand_bytes(GemmDtype dtype, const GemmShape& shape);
/// The op the GEMM benchmark times: torch::mm (fp64..bf16), at::_int_mm (int8 -> int32) or
/// at::_scaled_mm (fp8 e4m3 -> bf16). fp32 vs tf32 is the TF32 switch (MatmulTf32Guard).
[[nodiscard]] torch::Tensor gemm_call(GemmDtype dtype, const GemmOperands& operands);

/// L2 cache of a CUDA device in bytes; 0 for the CPU.
[[nodiscard]] double l2_cache_bytes(const torch::Device& device);

/// Times `dtype` GEMMs of `shape` on `device`. An unsupported dtype or a failing op gives a
/// result with status "unsupported: <reason>"; CUDA out-of-memory propagates.
[[nodiscard]] MicroResult run_gemm(GemmDtype dtype, const GemmShape& shape,
                                   const torch::Device& device, const MicroOptions& options);
/// Times `op` on buffers of `buffer_bytes` (a multiple of 4). Throws ConfigError for a
/// device op or a transfer on a CPU device, or a bad size.
[[nodiscard]] MicroResult run_memory(MemoryOp op, double buffer_bytes, const torch::Device& device,
                                     const MicroOptions& options);

/// GEMM types run when none are named: all on CUDA, fp64 and fp32 on the CPU.
[[nodiscard]] std::vector<GemmDtype> default_gemm_dtypes(const torch::Device& device);
/// Memory ops run on `device`: device copy/read/write and the four transfers on CUDA; host
/// copy/read/write on the CPU (the CPU variant).
[[nodiscard]] std::vector<MemoryOp> default_memory_ops(const torch::Device& device);

}  // namespace gpuperf
