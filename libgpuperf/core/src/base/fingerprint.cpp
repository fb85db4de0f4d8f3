#include "gpuperf/base/fingerprint.h"

#include <fstream>
#include <iterator>
#include <regex>
#include <string>

namespace gpuperf {

std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  if (!in) return "";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch match;
  if (std::regex_search(text, match,
                        std::regex(R"(Kernel Module\s+(?:for \S+\s+)?([0-9]+(?:\.[0-9]+)+))"))) {
    return match[1];
  }
  return "";
}

}  // namespace gpuperf
