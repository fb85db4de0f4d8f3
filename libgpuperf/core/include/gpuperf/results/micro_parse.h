#pragma once
// Microbenchmark settings from option text: GEMM data types and shapes.

#include <string>
#include <vector>

#include "gpuperf/results/micro_result.h"

namespace gpuperf {

/// Parses one name (case-insensitive). Throws ConfigError naming `option` and the value.
[[nodiscard]] GemmDtype parse_gemm_dtype(const std::string& text, const std::string& option);
/// Parses a comma-separated list ("fp32,bf16"); duplicates collapse, order follows the list.
/// Throws ConfigError naming `option` and the bad item (an empty list or item is bad too).
[[nodiscard]] std::vector<GemmDtype> parse_gemm_dtypes(const std::string& list,
                                                       const std::string& option);

/// Parses "N" (square) or "MxNxK". Throws ConfigError naming `option` and the value.
[[nodiscard]] GemmShape parse_gemm_shape(const std::string& text, const std::string& option);

}  // namespace gpuperf
