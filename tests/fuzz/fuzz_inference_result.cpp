// libFuzzer target: the inference-result reader must reject any input with a gpuperf error, never
// crash, hang or leak. Run through tests/fuzz/run_fuzzers.sh.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/results/inference_result.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuperf::InferenceResult result = gpuperf::from_json<gpuperf::InferenceResult>(text);
    // What was read must serialize and print again: compare and report use read results.
    (void)gpuperf::to_json(result);
    std::ostringstream out;
    gpuperf::write_text(out, result);
  } catch (const gpuperf::Error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
