#pragma once
// The whole training benchmark behind the example programs: parse options, build the model and
// TrainStep, warm up, measure, print, write the JSON result.
//
//   int main(int argc, char** argv) {
//     gpuperf::TrainingBenchmarkDefaults defaults;
//     defaults.program = "seed_benchmark";
//     return gpuperf::run_training_benchmark(argc, argv, defaults);
//   }
//
// Exit codes: 0 success, 1 runtime failure, 2 bad usage or input, 3 out of device memory.

#include <ostream>

#include "gpuperf/cli/benchmark_cli.h"
#include "gpuperf/report/run_record.h"

namespace gpuperf {

/// Exit code for CUDA out-of-memory.
inline constexpr int kExitOutOfMemory = 3;

/// Runs a training benchmark as the options say and returns the record (no printing, no file).
/// Throws ConfigError for bad options and CudaError when the device runs out of memory.
[[nodiscard]] RunRecord run_training_measurement(const TrainingBenchmarkArgs& args);

/// Parses argv, runs, prints the summary to stdout and progress to stderr, writes the JSON file;
/// returns the exit code.
int run_training_benchmark(int argc, const char* const* argv,
                           const TrainingBenchmarkDefaults& defaults);

}  // namespace gpuperf
