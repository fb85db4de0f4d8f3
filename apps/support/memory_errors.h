#pragma once
// LibTorch's allocation failures as errors a user can act on: what ran out, under which setting,
// and the exit code that says so (program.h).
//
//   return gpuperf::program::with_memory_errors("batch_size " + std::to_string(n), [&] {
//     return time_regions(steps, n);
//   });

#include <functional>
#include <string>

namespace gpuperf::program {

/// Runs `body` and returns its exit code, turning an allocation failure into one line that names
/// `setting` ("--batch-size 256") and says what to lower: CUDA out of memory becomes
/// OutOfMemoryError (kExitOutOfMemory) with LibTorch's memory figures (asked, capacity, free,
/// held), host memory (LibTorch's CPU allocator, std::bad_alloc) an Error (kExitFailure).
/// Anything else passes through.
int with_memory_errors(const std::string& setting, const std::function<int()>& body);

}  // namespace gpuperf::program
