// The only translation unit that includes spdlog; it has no torch headers on its include path.
#include "gpuperf/base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace gpuperf::log {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

Level level_from_env() {
  const char* env = std::getenv("GPUPERF_LOG_LEVEL");
  const std::string value = env ? env : "";
  if (value == "debug") return Level::kDebug;
  if (value == "warn") return Level::kWarn;
  if (value == "error") return Level::kError;
  if (value == "off") return Level::kOff;
  return Level::kInfo;
}

// Logs go to stderr so that a program's stdout carries only its results.
spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto made = spdlog::stderr_color_mt("gpuperf");
    made->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    made->set_level(to_spdlog(level_from_env()));
    return made;
  }();
  return *instance;
}

Level current = level_from_env();

}  // namespace

void set_level(Level new_level) {
  current = new_level;
  logger().set_level(to_spdlog(new_level));
}

Level level() { return current; }

void debug(std::string_view message) { logger().debug("{}", message); }
void info(std::string_view message) { logger().info("{}", message); }
void warn(std::string_view message) { logger().warn("{}", message); }
void error(std::string_view message) { logger().error("{}", message); }

}  // namespace gpuperf::log
