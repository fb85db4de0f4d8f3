#include "program.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "gpuperf/base/files.h"
#include "gpuperf/base/fingerprint.h"
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
  if (app.get_option_no_throw("--version") == nullptr) {
    const std::string driver = nvidia_driver_version();
    app.set_version_flag("--version",
                         version_text(app.get_name(), "no LibTorch" + (driver.empty()
                                                                           ? std::string()
                                                                           : ", NVIDIA driver " +
                                                                                 driver)));
  }
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

std::string version_text(const std::string& program, const std::string& software) {
  return program + " (gpuperf " + std::string(kVersion) + ")\n" + software;
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

void ResultOutputs::add(const std::string& option, const std::string& path,
                        const std::string& what) {
  outputs_.push_back({option, path, what});
}

void ResultOutputs::check(const std::vector<std::string>& inputs) const {
  const Output* on_stdout = nullptr;
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const Output& o = outputs_[i];
    if (o.path.empty()) continue;
    if (is_stdout_path(o.path)) {
      if (on_stdout) {
        throw ConfigError("--" + o.option + ": '-' (standard output) is also --" +
                          on_stdout->option + "'s; only one result can go to standard output");
      }
      on_stdout = &o;
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      const Output& earlier = outputs_[j];
      if (earlier.path.empty() || is_stdout_path(earlier.path)) continue;
      std::error_code error;
      if (std::filesystem::weakly_canonical(o.path, error) ==
          std::filesystem::weakly_canonical(earlier.path, error)) {
        throw ConfigError("--" + o.option + ": '" + o.path + "' is also the --" +
                          earlier.option + " file; give each output its own file");
      }
    }
    check_not_an_input(o.path, inputs, "--" + o.option);
    check_writable(o.path, o.option);
  }
}

bool ResultOutputs::wanted(const std::string& option) const {
  const Output* o = find(option);
  return o && !o->path.empty();
}

std::ostream& ResultOutputs::console() const {
  for (const auto& o : outputs_) {
    if (is_stdout_path(o.path)) return std::cerr;
  }
  return std::cout;
}

void ResultOutputs::write(const std::string& option, const std::string& text) const {
  const Output* o = find(option);
  if (!o || o->path.empty()) return;
  write_text_file_atomically(text, o->path);
  if (!is_stdout_path(o->path)) console() << o->what << " written to " << o->path << "\n";
}

void add_result_options(CLI::App& app, ResultPaths& paths, const std::string& json_help) {
  app.add_option("--json", paths.json, json_help + " ('-': standard output)");
  app.add_option("--csv", paths.csv,
                 "write one CSV row per measurement here ('-': standard output; default: none)");
  app.add_option("--benchmark-json", paths.benchmark_json,
                 "write Google Benchmark's JSON here, for its compare.py ('-': standard output; "
                 "default: none)");
}

ResultOutputs result_outputs(const ResultPaths& paths) {
  ResultOutputs outputs;
  outputs.add("json", paths.json, "Result");
  outputs.add("csv", paths.csv, "CSV");
  outputs.add("benchmark-json", paths.benchmark_json, "Google Benchmark JSON");
  return outputs;
}

const ResultOutputs::Output* ResultOutputs::find(const std::string& option) const {
  for (const auto& o : outputs_) {
    if (o.option == option) return &o;
  }
  return nullptr;
}

}  // namespace gpuperf::program
