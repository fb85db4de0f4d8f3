#pragma once
// Human-readable console output of a run record (its unit formatters: base/format.h).

#include <ostream>
#include <string>

#include "gpuperf/results/run_record.h"

namespace gpuperf {

/// Prints the throughput line ("Throughput: N <unit>", as the seed does), its spread, skipped
/// steps, memory, the 90-epoch ImageNet-1k projection where the record has one
/// (imagenet_projection_seconds(), as the HTML report), and warnings.
void write_text(std::ostream& out, const RunRecord& record,
                const std::string& unit = "samples/sec");

}  // namespace gpuperf
