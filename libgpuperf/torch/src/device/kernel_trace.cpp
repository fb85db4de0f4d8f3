#include "gpuperf/device/kernel_trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>

#include <sys/stat.h>
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
    // A private folder of its own: a fixed name in /tmp could be a planted link.
    char folder[] = "/tmp/gpuperf-kernel-trace-XXXXXX";
    if (::mkdtemp(folder) == nullptr) return false;
    const std::string probe = std::string(folder) + "/probe.json";
    bool ok = true;
    try {
      write_kernel_trace(probe, [] {});
    } catch (const Error&) {
      ok = false;
    }
    std::remove(probe.c_str());
    ::rmdir(folder);
    return ok;
  }();
  return supported;
}

void write_kernel_trace(const std::string& path, const std::function<void()>& work) {
  namespace prof = torch::profiler::impl;
  std::set<prof::ActivityType> activities{prof::ActivityType::CPU};
#if GPUPERF_WITH_CUDA
  activities.insert(prof::ActivityType::CUDA);
#endif
  // With the operators' input shapes: the trace says which call launched a kernel on what.
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO, /*report_input_shapes=*/true);
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
  // (The temporary file exists from the start, empty: what counts is that something was written.)
  struct stat written {};
  if (::stat(temporary.path().c_str(), &written) != 0 || written.st_size == 0) {
    throw Error("kernel trace: this LibTorch wrote no trace (built without Kineto?)");
  }
  temporary.commit();
}

}  // namespace gpuperf
