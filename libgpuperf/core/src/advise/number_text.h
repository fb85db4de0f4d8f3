#pragma once
// The advisor's numbers as its reasons and its table print them, shared by the advisor
// (advisor.cpp) and its text printer (advice_text.cpp) so that both spell a figure alike.

#include <cmath>
#include <string>

#include "gpuperf/base/format.h"

namespace gpuperf::detail {

/// `v` with `digits` decimals; "n/a" when not finite.
inline std::string fmt(double v, int digits = 1) {
  return std::isfinite(v) ? format_fixed(v, digits) : "n/a";
}

/// Bytes as "12.3 GB".
inline std::string gb(double bytes) { return fmt(bytes / 1e9, 1) + " GB"; }

/// `v` as an ostream prints it by default ("7e+09", "0.3").
inline std::string general(double v) { return format_number(v, 6); }

/// Seconds as "1.234 ms".
inline std::string ms(double seconds) { return fmt(seconds * 1e3, 3) + " ms"; }

}  // namespace gpuperf::detail
