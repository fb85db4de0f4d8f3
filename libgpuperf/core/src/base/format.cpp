#include "gpuperf/base/format.h"

#include <cstdio>

namespace gpuperf {

std::string format_number(double value, int significant) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significant, value);
  return buffer;
}

}  // namespace gpuperf
