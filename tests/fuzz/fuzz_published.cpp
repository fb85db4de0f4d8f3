// libFuzzer target: the published-results reader (gpuperf.published/1), then the report and the
// advisor with what it accepted (fuzz_common.h states the contract). Registered in CTest by
// tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  std::vector<PublishedResult> published;
  try {
    published = published_results_from_json(fuzz::text_of(data, size), "fuzz.json");
  } catch (const Error&) {
    return 0;
  }
  LoadedResults none;
  fuzz::consume(none, fuzz::shipped_specs(), published);
  return 0;
}
