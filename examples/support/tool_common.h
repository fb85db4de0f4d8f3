#pragma once
// Shared plumbing of the torch-free programs (compare, report, advise): loading the spec
// database, refusing to overwrite inputs, and mapping errors to exit codes.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf::tool {

/// Loads the spec database (explicit path, $GPUPERF_SPECS, build or install tree) plus user
/// files. An explicit or extra file that fails is an error; a missing default only a warning,
/// because comparing or reporting still works without datasheet figures.
inline std::optional<SpecDatabase> load_specs(const std::string& path,
                                              const std::vector<std::string>& extra,
                                              bool required) {
  std::optional<SpecDatabase> db;
  try {
    db = SpecDatabase::load_default(path);
  } catch (const IoError& e) {
    if (required || !path.empty()) throw;
    std::cerr << "warning: " << e.what() << "; continuing without datasheet figures\n";
    return std::nullopt;
  }
  for (const auto& file : extra) db->merge_file(file);
  return db;
}

/// Writes `text` to `path` through a temporary file renamed over it, after checking that `path`
/// is none of the input files: reading results must never rewrite one.
inline void write_output(const std::string& path, const std::string& text,
                         const std::vector<std::string>& inputs, const std::string& option) {
  for (const auto& input : inputs) {
    if (input == path) {
      throw ConfigError(option + ": '" + path +
                        "' is one of the input files; refusing to overwrite it");
    }
  }
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError(option + ": cannot write '" + path + "'");
    out << text;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw IoError(option + ": write to '" + path + "' failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw IoError(option + ": cannot rename the output onto '" + path + "'");
  }
}

/// Runs `body` after parsing; maps usage and input errors to exit code 2 with one line on stderr.
inline int run_tool(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return kExitUsage;
  }
  try {
    return body();
  } catch (const ConfigError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const IoError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << app.get_name() << ": internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpuperf::tool
