#pragma once
// The training benchmark programs (seed_benchmark, resnet50_benchmark): argv -> TrainingRun ->
// run_training() -> summary on stdout, progress on stderr, the JSON record.
//
//   int main(int argc, char** argv) {
//     gpuperf::program::TrainingDefaults defaults;
//     defaults.program = "seed_benchmark";
//     return gpuperf::program::run_training_program(argc, argv, defaults);
//   }

#include <string>

#include "gpuperf/train/training_run.h"

namespace gpuperf::program {

/// What a training benchmark program defaults to: the run, and how the program presents it.
struct TrainingDefaults {
  std::string program;               ///< name for help and the default JSON file
  std::string description;           ///< first line of --help
  TrainingRun run;                   ///< the run when no option is given
  std::string unit = "samples/sec";  ///< how throughput is printed ("img/s")
};

/// Parses argv, runs, prints, writes the JSON file; returns the exit code (program.h).
int run_training_program(int argc, const char* const* argv, const TrainingDefaults& defaults);

}  // namespace gpuperf::program
