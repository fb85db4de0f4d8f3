#include "gpuperf/base/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>

#include "gpuperf/base/error.h"

namespace gpuperf {

void write_text_file_atomically(const std::string& text, const std::string& path) {
  if (is_stdout_path(path)) {
    std::cout << text << std::flush;
    if (!std::cout) throw IoError("cannot write to standard output");
    return;
  }
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
  if (is_stdout_path(path)) return;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw ConfigError("--" + option + ": '" + path + "' is a directory; give a file name");
  }
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
  if (is_stdout_path(path)) return;
  for (const auto& input : inputs) {
    std::error_code error;  // a path that does not exist yet is not an input
    if (input == path || std::filesystem::equivalent(input, path, error)) {
      throw ConfigError(option + ": '" + path +
                        "' is one of the input files; refusing to overwrite it");
    }
  }
}

std::string read_text_file(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error) throw IoError("cannot read '" + path + "': " + error.message());
  if (!std::filesystem::is_regular_file(status)) {
    throw IoError("'" + path + "' is not a regular file");
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw IoError("cannot read '" + path + "': " + error.message());
  if (size > kMaxInputFileBytes) {
    throw IoError("'" + path + "' is larger than " + std::to_string(kMaxInputFileBytes >> 20) +
                  " MiB, the limit of an input file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  // One byte more than the size: a file that grows while it is read is still bounded.
  std::string out(static_cast<std::size_t>(size) + 1, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  if (in.bad()) throw IoError("read of '" + path + "' failed");
  out.resize(static_cast<std::size_t>(in.gcount()));
  if (out.size() > size) throw IoError("'" + path + "' changed while it was read");
  if (out.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw IoError("'" + path + "' is empty");
  }
  return out;
}

}  // namespace gpuperf
