#include "gpuperf/base/run_basics.h"

#include <algorithm>
#include <string>
#include <thread>

#include "gpuperf/base/error.h"

namespace gpuperf {

void RunBasics::validate() const {
  if (device.empty()) {
    throw ConfigError("RunBasics::device", "unknown value '' (choose auto, cpu, cuda or cuda:N)");
  }
  require_setting(seed >= 0, "RunBasics::seed", seed, ">= 0");
  require_setting(threads >= 0, "RunBasics::threads", threads, ">= 0 (0: LibTorch's default)");
  // More intra-op threads than hardware threads only contend (and 100000 would not start).
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  require_setting(threads <= hardware, "RunBasics::threads", threads,
                  "<= " + std::to_string(hardware) + " (this machine's hardware threads)");
}

}  // namespace gpuperf
