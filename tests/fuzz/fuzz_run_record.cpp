// libFuzzer target: the result-file reader must reject any input with a gpuperf error, never
// crash, hang or leak. Run through tests/fuzz/run_fuzzers.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/results/run_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuperf::RunRecord record = gpuperf::from_json<gpuperf::RunRecord>(text);
    // What was read must serialize again: reports and compare print read records.
    (void)gpuperf::to_json(record);
  } catch (const gpuperf::Error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
