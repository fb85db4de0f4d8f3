#pragma once
// The one way gpuperf's programs parse a command line with CLI11 (torch-free, internal).

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "gpuperf/error.h"

namespace gpuperf::detail {

/// Parses argv into `app`, then runs `check` (range checks that throw ConfigError). Returns no
/// value to go on, or the exit code to return now: 0 after --help (printed to `out`), 2 after
/// a parse or range error (one line "error: ..." on `err`).
[[nodiscard]] std::optional<int> parse_command_line(CLI::App& app, int argc,
                                                    const char* const* argv,
                                                    const std::function<void()>& check,
                                                    std::ostream& out, std::ostream& err);

/// Throws ConfigError "--<option>: must be <rule>, got <value>" unless `ok`.
template <typename T>
void require(bool ok, const std::string& option, const T& value, const std::string& rule) {
  if (!ok) {
    throw ConfigError("--" + option + ": must be " + rule + ", got " + std::to_string(value));
  }
}

/// Throws ConfigError naming --<option> unless `value` is auto, on or off.
void check_switch(const std::string& option, const std::string& value);

}  // namespace gpuperf::detail
