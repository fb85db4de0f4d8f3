#pragma once
// Logging facade. spdlog stays in one torch-free translation unit (its fmt clashes with the fmt
// that the PyTorch wheel's headers bundle), so callers pass finished strings:
//
//   gpuperf::log::info(gpuperf::log::cat("window ", i, ": ", rate, " samples/s"));

#include <sstream>
#include <string>
#include <string_view>

namespace gpuperf::log {

/// Severity, lowest first.
enum class Level { kDebug, kInfo, kWarn, kError, kOff };

/// Sets the minimum level printed (default kInfo; GPUPERF_LOG_LEVEL=debug|info|warn|error|off).
void set_level(Level level);
/// The current minimum level.
[[nodiscard]] Level level();

void debug(std::string_view message);
void info(std::string_view message);
void warn(std::string_view message);
void error(std::string_view message);

/// Concatenates anything that streams into a std::ostream.
template <typename... Args>
[[nodiscard]] std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace gpuperf::log
