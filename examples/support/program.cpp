#include "program.h"

#include <string>

#include "gpuperf/base/version.h"

namespace gpuperf::program {
namespace {

// One line: LibTorch's errors carry a backtrace after the first line.
int fail(std::ostream& err, const CLI::App& app, const char* what, int code) {
  const std::string message = what;
  err << app.get_name() << ": error: " << message.substr(0, message.find('\n')) << "\n";
  return code;
}

}  // namespace

int run_program(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body,
                std::ostream& out, std::ostream& err) {
  app.set_version_flag("--version", app.get_name() + " (gpuperf " + std::string(kVersion) + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return fail(err, app, e.what(), kExitUsage);
  }
  try {
    return body();
  } catch (const ConfigError& e) {
    return fail(err, app, e.what(), kExitUsage);
  } catch (const IoError& e) {
    return fail(err, app, e.what(), kExitUsage);
  } catch (const OutOfMemoryError& e) {
    return fail(err, app, e.what(), kExitOutOfMemory);
  } catch (const std::exception& e) {
    return fail(err, app, e.what(), kExitFailure);
  }
}

std::string join_command_line(int argc, const char* const* argv) {
  auto quote = [](const std::string& word) {
    if (!word.empty() &&
        word.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./=:,+") ==
            std::string::npos) {
      return word;
    }
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  };
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + quote(argv[i]);
  return line;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "|") + n;
  return joined;
}

}  // namespace gpuperf::program
