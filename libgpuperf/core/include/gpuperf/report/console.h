#pragma once
// Human-readable console output of a run record (its unit formatters: base/format.h).

#include <ostream>
#include <string>

#include "gpuperf/results/run_record.h"

namespace gpuperf {

/// Prints the throughput line ("Throughput: N <unit>", as the seed does), its spread, skipped
/// steps, memory, the record's 90-epoch ImageNet-1k projection where it has one, and warnings.
void write_text(std::ostream& out, const RunRecord& record,
                const std::string& unit = "samples/sec");

}  // namespace gpuperf
