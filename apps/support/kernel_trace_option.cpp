#include "kernel_trace_option.h"

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/device/kernel_trace.h"

namespace gpuperf::program {

void add_kernel_trace_option(CLI::App& app, std::string& path, const std::string& what) {
  app.add_option("--kernel-trace", path,
                 "after timing, " + what +
                     " under LibTorch's profiler and write their Chrome "
                     "trace (GPU kernels, CPU operators) here; benchmarks/python/profile_step.py "
                     "--trace sums it by kernel class (default: none)");
}

void check_kernel_trace(const std::string& path) {
  if (path.empty()) return;
  if (is_stdout_path(path)) {
    throw ConfigError("--kernel-trace: must be a file, got '-' (standard output)");
  }
  check_writable(path, "kernel-trace");
  if (!kernel_traces_supported()) {
    throw ConfigError("--kernel-trace: cannot trace kernels into '" + path +
                      "': this LibTorch has no Kineto profiler (Debian's CPU LibTorch has none; "
                      "PyTorch's wheels have it)");
  }
}

}  // namespace gpuperf::program
