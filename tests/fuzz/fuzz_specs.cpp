// libFuzzer target: the spec-database reader (gpuperf.specs/1) as a file of its own and merged
// over the shipped database (a user's GPUPERF_SPECS file), then matching devices, the advisor and
// the report against what it accepted (fuzz_common.h states the contract). Registered in CTest by
// tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_common.h"
#include "gpuperf/results/micro_datasheet.h"
#include "gpuperf/results/micro_result.h"

namespace {

void use(const gpuperf::SpecDatabase& db) {
  using namespace gpuperf;
  MicroReport micro;
  micro.results.push_back({});
  micro.results.back().category = "gemm";
  micro.results.back().variant = "fp16";
  for (const GpuSpec& gpu : db.gpus()) {
    (void)db.match_device(gpu.name, gpu.sm_count, gpu.memory_bytes);
    apply_datasheet(micro, &gpu);
  }
  (void)db.match_device("NVIDIA H100 80GB HBM3", 132, 85e9);
  LoadedResults none;
  fuzz::consume(none, db, fuzz::shipped_published());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  const std::string text = fuzz::text_of(data, size);
  try {
    use(SpecDatabase::from_json(text, "fuzz.json"));
  } catch (const Error&) {
  }
  SpecDatabase merged = fuzz::shipped_specs();
  const std::size_t before = merged.gpus().size();
  try {
    merged.merge_json(text, "fuzz.json");
  } catch (const Error&) {
    // A refused file leaves the database as it was.
    if (merged.gpus().size() != before) fuzz::broken("a refused spec file changed the database");
    return 0;
  }
  use(merged);
  return 0;
}
