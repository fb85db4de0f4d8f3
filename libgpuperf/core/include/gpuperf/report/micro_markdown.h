#pragma once
// Microbenchmark reports as Markdown: the seeds' table (measured / datasheet per GPU) and a table
// of every measurement.

#include <ostream>
#include <string>
#include <vector>

#include "gpuperf/results/micro_result.h"

namespace gpuperf {

/// The seeds' table for one or more reports (one row each), as Markdown.
void write_seeds_table_markdown(std::ostream& out, const std::vector<MicroReport>& reports);
/// The seeds' table for `report` followed by a table of every measurement, as Markdown.
void write_markdown(std::ostream& out, const MicroReport& report);

}  // namespace gpuperf
