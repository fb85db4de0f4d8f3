// libFuzzer target: the spec-file and published-results readers must reject any input with a
// gpuperf error, never crash or hang. Run through tests/fuzz/run_fuzzers.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/specs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto db = gpuperf::SpecDatabase::from_json(text, "fuzz.json");
    // Matching and merging read every parsed field.
    for (const auto& gpu : db.gpus())
      (void)db.match_device(gpu.name, gpu.sm_count, gpu.memory_bytes);
    gpuperf::SpecDatabase merged = db;
    merged.merge_json(text, "fuzz.json");
  } catch (const gpuperf::Error&) {
  }
  try {
    (void)gpuperf::published_results_from_json(text, "fuzz.json");
  } catch (const gpuperf::Error&) {
  }
  return 0;
}
