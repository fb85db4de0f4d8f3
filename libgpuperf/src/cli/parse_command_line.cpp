#include "cli/parse_command_line.h"

#include "gpuperf/error.h"

namespace gpuperf::detail {

void check_switch(const std::string& option, const std::string& value) {
  if (value != "auto" && value != "on" && value != "off") {
    throw ConfigError("--" + option + ": unknown value '" + value + "' (choose auto, on or off)");
  }
}

std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv,
                                      const std::function<void()>& check, std::ostream& out,
                                      std::ostream& err) {
  try {
    app.parse(argc, argv);
    if (check) check();
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const ConfigError& e) {
    err << "error: " << e.what() << "\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace gpuperf::detail
