// libFuzzer target: the inference-result reader (gpuperf.inference/3, /2, /1), then what the tools
// do with a result it accepted (fuzz_common.h states the contract). Registered in CTest by
// tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_common.h"
#include "gpuperf/results/inference_result.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  InferenceResult result;
  try {
    result = from_json<InferenceResult>(fuzz::text_of(data, size));
  } catch (const Error&) {
    return 0;  // refused with a message: the expected outcome for malformed input
  }
  // A version 1 file is written back as version 2, which must read again.
  fuzz::check_round_trip(
      result, [](const std::string& t) { return from_json<InferenceResult>(t); },
      "inference result");
  std::ostringstream out;
  write_text(out, result);
  write_csv(out, result);
  write_gbench_json(out, result);
  LoadedResults results;
  results.inference.push_back({"a.json", result});
  results.inference.push_back({"b.json", result});
  fuzz::consume(results);
  return 0;
}
