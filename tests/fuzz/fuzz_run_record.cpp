// libFuzzer target: the run-record reader (gpuperf.run/1), then what the tools do with a record it
// accepted (fuzz_common.h states the contract). Registered in CTest by tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_common.h"
#include "gpuperf/report/console.h"
#include "gpuperf/results/run_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  RunRecord record;
  try {
    record = from_json<RunRecord>(fuzz::text_of(data, size));
  } catch (const Error&) {
    return 0;  // refused with a message: the expected outcome for malformed input
  }
  fuzz::check_round_trip(
      record, [](const std::string& t) { return from_json<RunRecord>(t); }, "run record");
  std::ostringstream out;
  write_text(out, record);
  write_csv(out, record);
  write_gbench_json(out, record);
  LoadedResults results;
  results.runs.push_back({"a.json", record});
  results.runs.push_back({"b.json", record});
  fuzz::consume(results);
  return 0;
}
