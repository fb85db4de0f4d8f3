#pragma once
// The arithmetic that turns a microbenchmark's calls and seconds into rates: FLOPs of a GEMM,
// bytes a memory operation moves, operand sets that defeat the cache.

#include <cstdint>

#include "gpuperf/results/micro_result.h"

namespace gpuperf {

/// Floating-point (or integer) operations of one GEMM: 2*M*N*K, a multiply and an add per term.
[[nodiscard]] double gemm_flops(const GemmShape& shape);

/// How many operand sets to rotate through so that each call finds its inputs outside the cache:
/// enough that together they exceed `cache_multiple` x `cache_bytes`, and at least `min_sets`.
/// Throws ConfigError when set_bytes is not positive or min_sets < 1.
[[nodiscard]] int rotation_sets(double set_bytes, double cache_bytes, double cache_multiple,
                                int min_sets);

/// Bytes one call moves through memory for a buffer of `buffer_bytes`: a copy reads the source
/// and writes the destination (2x); a read, a write or a transfer counts the buffer once.
[[nodiscard]] double memory_bytes_per_call(MemoryOp op, double buffer_bytes);

/// work_per_call * calls / seconds, in the unit `unit_scale` (1e12 for TFLOP/s, 1e9 for GB/s).
/// Throws ConfigError when seconds is not positive.
[[nodiscard]] double rate(double work_per_call, std::int64_t calls, double seconds,
                          double unit_scale);

}  // namespace gpuperf
