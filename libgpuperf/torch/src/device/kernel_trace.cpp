#include "gpuperf/device/kernel_trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <exception>
#include <set>
#include <string>

#include <unistd.h>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"

namespace gpuperf {
namespace {

// The first line of a LibTorch error (the rest is its C++ stack).
std::string first_line(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

}  // namespace

bool kernel_traces_supported() {
  static const bool supported = [] {
    const std::string probe = "/tmp/gpuperf-kernel-trace-probe-" + std::to_string(::getpid());
    try {
      write_kernel_trace(probe, [] {});
    } catch (const Error&) {
      return false;
    }
    std::remove(probe.c_str());
    return true;
  }();
  return supported;
}

void write_kernel_trace(const std::string& path, const std::function<void()>& work) {
  namespace prof = torch::profiler::impl;
  std::set<prof::ActivityType> activities{prof::ActivityType::CPU};
#if GPUPERF_WITH_CUDA
  activities.insert(prof::ActivityType::CUDA);
#endif
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  try {
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  } catch (const std::exception& e) {
    throw Error("kernel trace: LibTorch's Kineto profiler could not start (" + first_line(e) + ")");
  }
  try {
    work();
  } catch (...) {
    (void)torch::autograd::profiler::disableProfiler();
    throw;
  }
  const auto result = torch::autograd::profiler::disableProfiler();
  TemporaryFile temporary(path);  // whole or nothing at `path`, removed on a signal
  try {
    result->save(temporary.path());
  } catch (const std::exception& e) {
    throw Error("kernel trace: this LibTorch cannot write Kineto traces (" + first_line(e) + ")");
  }
  // Without Kineto, LibTorch's save() may write nothing and say nothing.
  if (std::FILE* f = std::fopen(temporary.path().c_str(), "r")) {
    std::fclose(f);
  } else {
    throw Error("kernel trace: this LibTorch wrote no trace (built without Kineto?)");
  }
  temporary.commit();
}

}  // namespace gpuperf
