#pragma once
// The one way gpuperf's programs parse a command line with CLI11 (torch-free, internal).

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <ostream>

namespace gpuperf::detail {

/// Parses argv into `app`, then runs `check` (range checks that throw ConfigError). Returns no
/// value to go on, or the exit code to return now: 0 after --help (printed to `out`), 2 after
/// a parse or range error (one line "error: ..." on `err`).
[[nodiscard]] std::optional<int> parse_command_line(CLI::App& app, int argc,
                                                    const char* const* argv,
                                                    const std::function<void()>& check,
                                                    std::ostream& out, std::ostream& err);

}  // namespace gpuperf::detail
