#pragma once
// Results in formats that other tools read: CSV for pandas, spreadsheets and R, and Google
// Benchmark's JSON for its tools/compare.py, github-action-benchmark and Bencher.
//
//   std::ofstream csv("run.csv");
//   gpuperf::write_csv(csv, record);             // one row per timed window
//   gpuperf::write_gbench_json(std::cout, record);
//
// CSV (RFC 4180): a header row, then one row per measurement: a training record's timed windows,
// an inference result's batch sizes and serving rates, a micro report's results. Cells are raw
// numbers in the unit that the column name ends with (_s, _bytes, _samples_per_s), an empty
// cell for "not available", and the run's settings repeated on every row so that files
// concatenate into one table.
//
// Google Benchmark JSON (its own JSON output format, library 1.7): one benchmark
// family per measured configuration, one "iteration" run per repetition (a training window, an
// inference call, a micro window) with real_time = time per step, call or operation, then the
// mean, median, stddev and cv aggregates over the repetitions. cpu_time repeats real_time: gpuperf
// measures device or wall time, not process CPU time.

#include <ostream>

#include "gpuperf/results/inference_result.h"
#include "gpuperf/results/micro_result.h"
#include "gpuperf/results/run_record.h"

namespace gpuperf {

/// A training record as CSV: one row per timed window.
void write_csv(std::ostream& out, const RunRecord& record);
/// An inference result as CSV: one row per batch size ("kind" batch), then one per serving rate
/// ("kind" serving).
void write_csv(std::ostream& out, const InferenceResult& result);
/// A micro report as CSV: one row per result, its figures (median ... datasheet) in the base unit
/// named in its "unit" cell: FLOP/s, OP/s, B/s, or s for a latency.
void write_csv(std::ostream& out, const MicroReport& report);

/// A training record in Google Benchmark's JSON: one repetition per timed window, real_time in
/// milliseconds per step, items_per_second = samples/s.
void write_gbench_json(std::ostream& out, const RunRecord& record);
/// An inference result in Google Benchmark's JSON: one family per batch size, one repetition per
/// stored call latency (the p50 alone when none were stored), real_time in milliseconds per call.
void write_gbench_json(std::ostream& out, const InferenceResult& result);
/// A micro report in Google Benchmark's JSON: one family per measured result, one repetition per
/// window, real_time in microseconds per call, bytes_per_second or items_per_second (FLOP/s).
void write_gbench_json(std::ostream& out, const MicroReport& report);

}  // namespace gpuperf
