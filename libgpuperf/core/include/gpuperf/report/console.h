#pragma once
// Human-readable console output of a run record, and the unit formatters the printers share.

#include <ostream>
#include <string>

#include "gpuperf/results/run_record.h"

namespace gpuperf {

/// Prints the throughput line ("Throughput: N <unit>", as the seed does), its spread, skipped
/// steps, memory, the record's 90-epoch ImageNet-1k projection where it has one, and warnings.
void write_text(std::ostream& out, const RunRecord& record,
                const std::string& unit = "samples/sec");

/// Bytes as "1.23 GiB"; "n/a" for NaN.
[[nodiscard]] std::string format_bytes(double bytes);
/// Seconds as "2 h 05 min" / "3.2 min" / "12.3 s".
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace gpuperf
