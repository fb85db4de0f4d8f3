#include "gpuperf/base/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

#include "gpuperf/base/error.h"

namespace gpuperf {

void write_text_file_atomically(const std::string& text, const std::string& path) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError("cannot write '" + temporary + "': " + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw IoError("write to '" + temporary + "' failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw IoError("cannot rename '" + temporary + "' to '" + path + "': " + reason);
  }
}

void check_writable(const std::string& path, const std::string& option) {
  const std::string probe = path + ".probe-" + std::to_string(::getpid());
  std::ofstream out(probe, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw ConfigError("--" + option + ": cannot write '" + path + "': " + std::strerror(errno));
  }
  out.close();
  std::remove(probe.c_str());
}

void check_not_an_input(const std::string& path, const std::vector<std::string>& inputs,
                        const std::string& option) {
  for (const auto& input : inputs) {
    if (input == path) {
      throw ConfigError(option + ": '" + path +
                        "' is one of the input files; refusing to overwrite it");
    }
  }
}

}  // namespace gpuperf
