#pragma once
// Human-readable console output of a run record.

#include <ostream>
#include <string>

#include "gpuperf/report/run_record.h"

namespace gpuperf {

/// ImageNet-1k training images, for epoch-time projections.
inline constexpr double kImageNetTrainImages = 1281167;

/// Prints the throughput line ("Throughput: N <unit>", as the seed does), its spread, skipped
/// steps, memory, warnings and, if asked, the 90-epoch ImageNet-1k projection.
void print_training_summary(const RunRecord& record, std::ostream& out,
                            const std::string& unit = "samples/sec",
                            bool imagenet_projection = false);

/// Bytes as "1.23 GiB"; "n/a" for NaN.
[[nodiscard]] std::string format_bytes(double bytes);
/// Seconds as "2 h 05 min" / "3.2 min" / "12.3 s".
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace gpuperf
