// libFuzzer target: result files as gpuperf_compare, gpuperf_report and gpuperf_advise read them
// (load_results(): the kind told by the schema field, errors prefixed with the file name), then
// what the tools do with them (fuzz_common.h states the contract). The input goes through a
// memory file so that the file-reading path runs too. Registered in CTest by
// tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  static const int fd = ::memfd_create("gpuperf-fuzz.json", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    fuzz::broken("cannot write the memory file");
  }
  LoadedResults results;
  try {
    results = load_results({path});
  } catch (const Error& e) {
    // Every error names the file it came from.
    if (std::string(e.what()).find(path) == std::string::npos) {
      fuzz::broken(std::string("an error without the file name: ") + e.what());
    }
    return 0;
  }
  fuzz::consume(results);
  return 0;
}
