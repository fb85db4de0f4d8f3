// FLOPs, bytes and rates of microbenchmarks (results/micro_math.h).
#include "gpuperf/results/micro_math.h"

#include <cmath>
#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf {

double gemm_flops(const GemmShape& shape) {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
         static_cast<double>(shape.k);
}

int rotation_sets(double set_bytes, double cache_bytes, double cache_multiple, int min_sets) {
  if (!(set_bytes > 0))
    throw ConfigError("rotation_sets: set_bytes must be > 0, got " + std::to_string(set_bytes));
  if (min_sets < 1)
    throw ConfigError("rotation_sets: min_sets must be >= 1, got " + std::to_string(min_sets));
  const double needed = std::ceil(std::max(0.0, cache_bytes * cache_multiple) / set_bytes);
  return std::max(min_sets, static_cast<int>(std::min(needed, 1e6)));
}

double memory_bytes_per_call(MemoryOp op, double buffer_bytes) {
  const bool copy_within_one_memory = op == MemoryOp::kDeviceCopy || op == MemoryOp::kHostCopy;
  return copy_within_one_memory ? 2 * buffer_bytes : buffer_bytes;
}

double rate(double work_per_call, std::int64_t calls, double seconds, double unit_scale) {
  if (!(seconds > 0))
    throw ConfigError("rate: seconds must be > 0, got " + std::to_string(seconds));
  return work_per_call * static_cast<double>(calls) / seconds / unit_scale;
}

}  // namespace gpuperf
