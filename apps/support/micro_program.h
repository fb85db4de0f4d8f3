#pragma once
// The microbench program: argv -> MicroRun -> run_micro() -> Markdown tables on stdout, the
// JSON (and optionally Markdown) files.
//
//   int main(int argc, char** argv) { return gpuperf::program::run_micro_program(argc, argv); }

namespace gpuperf::program {

/// Parses argv, runs, prints, writes --json and --markdown; returns the exit code (program.h).
int run_micro_program(int argc, const char* const* argv);

}  // namespace gpuperf::program
