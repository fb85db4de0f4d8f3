#pragma once
// The whole inference benchmark behind examples/inference_benchmark.cpp: parse options, build
// the model and an InferenceSession, sweep batch sizes, optionally simulate serving from the
// measured service times, print, write the JSON result.
//
//   int main(int argc, char** argv) { return gpuperf::run_inference_benchmark(argc, argv); }
//
// Exit codes: 0 success, 1 runtime failure, 2 bad usage or input, 3 out of device memory at the
// first batch size (later out-of-memory ends the sweep and is reported, not an error).

#include "inference_cli.h"
#include "gpuperf/results/inference_result.h"

namespace gpuperf {

/// Runs the benchmark the options describe and returns the result (no printing, no file).
/// Throws ConfigError for bad options.
[[nodiscard]] InferenceResult run_inference_measurement(const InferenceBenchmarkArgs& args);

/// Parses argv, runs, prints the tables to stdout, writes the JSON file; returns the exit code.
int run_inference_benchmark(int argc, const char* const* argv);

}  // namespace gpuperf
