#pragma once
// What every gpuperf program shares: one run_program() that parses argv with CLI11, answers
// --help and --version, runs the program's body and maps errors to exit codes, so that all
// programs behave the same. Not part of the library: the library never sees argv.
//
//   int main(int argc, char** argv) {
//     CLI::App app("what it does", "name");
//     std::string path;
//     app.add_option("--json", path, "...");
//     return gpuperf::program::run_program(app, argc, argv, [&] { ...; return 0; });
//   }

#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"

namespace gpuperf::program {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;       ///< a runtime failure
inline constexpr int kExitUsage = 2;         ///< bad usage or input: nothing ran, nothing written
inline constexpr int kExitOutOfMemory = 3;   ///< the device ran out of memory

/// Parses argv into `app` (adding --version), then runs `body` and returns its exit code.
/// --help and --version print to `out` and return 0. Errors print one line
/// "<program>: error: <message>" to `err`: a parse error, ConfigError or IoError gives
/// kExitUsage, OutOfMemoryError kExitOutOfMemory, any other exception kExitFailure.
int run_program(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body,
                std::ostream& out = std::cout, std::ostream& err = std::cerr);

/// argv as one shell-quoted command line (recorded in results as the command that reproduces
/// them).
[[nodiscard]] std::string join_command_line(int argc, const char* const* argv);

/// Names joined by "|", for help texts ("fp32|tf32|fp16|bf16").
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);



}  // namespace gpuperf::program
