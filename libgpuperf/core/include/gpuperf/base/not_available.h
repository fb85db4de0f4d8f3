#pragma once
// "Not available": numeric fields that could not be measured or looked up hold NaN, written as
// JSON null and printed as "n/a".

#include <cmath>
#include <limits>

namespace gpuperf {

/// "Not available" for a numeric field.
inline constexpr double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

/// Whether a numeric field holds a value (is not kNotAvailable).
[[nodiscard]] inline bool is_available(double value) { return !std::isnan(value); }

}  // namespace gpuperf
