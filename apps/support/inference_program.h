#pragma once
// The inference benchmark program: argv -> InferenceRun -> run_inference() -> tables on stdout,
// progress on stderr, the JSON result.
//
//   int main(int argc, char** argv) { return gpuperf::program::run_inference_program(argc, argv); }

namespace gpuperf::program {

/// Parses argv, runs, prints, writes the JSON file; returns the exit code (program.h).
int run_inference_program(int argc, const char* const* argv);

}  // namespace gpuperf::program
