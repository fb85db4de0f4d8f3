#include "memory_errors.h"

#include <c10/util/Exception.h>

#include <new>
#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf::program {
namespace {

// LibTorch's first line, without the "[enforce fail at alloc_cpu.cpp:75] err == 0. " prefix of
// the CPU allocator's.
std::string allocator_message(const std::string& what) {
  const std::size_t start = what.find("DefaultCPUAllocator");
  std::string message = what.substr(start == std::string::npos ? 0 : start);
  return message.substr(0, message.find('\n'));
}

}  // namespace

int with_memory_errors(const std::string& setting, const std::function<int()>& body) {
  try {
    return body();
  } catch (const c10::OutOfMemoryError& e) {
    // LibTorch's line has the figures: what was asked for, the device's capacity, what is free,
    // what the caching allocator holds.
    throw OutOfMemoryError("out of device memory with " + setting + ": " +
                           allocator_message(e.what_without_backtrace()) + " Try a smaller value.");
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (what.find("can't allocate memory") == std::string::npos) throw;
    throw Error("out of host memory with " + setting + ": " + allocator_message(what) +
                ". Try a smaller value.");
  } catch (const std::bad_alloc&) {
    throw Error("out of host memory with " + setting + ". Try a smaller value.");
  }
}

}  // namespace gpuperf::program
