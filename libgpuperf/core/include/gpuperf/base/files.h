#pragma once
// Result files are written whole or not at all: a temporary file beside the target, renamed over
// it. Programs check their output paths before a long run, never after it.
//
//   gpuperf::check_writable(path, "json");           // before the run: ConfigError naming --json
//   gpuperf::write_text_file_atomically(text, path);  // after it

#include <cstddef>
#include <string>
#include <vector>

namespace gpuperf {

/// The output path that means standard output: "-".
inline constexpr const char* kStdoutPath = "-";

/// Whether `path` names standard output ("-") rather than a file.
[[nodiscard]] inline bool is_stdout_path(const std::string& path) { return path == kStdoutPath; }

/// Writes `text` to `path` atomically (a temporary file beside it, renamed over it), or to
/// standard output when `path` is "-"; IoError.
void write_text_file_atomically(const std::string& text, const std::string& path);
/// Checks that `path` can be written (creates and removes a temporary file beside it) so that a
/// program can refuse bad output paths before a long run ("-", standard output, always can).
/// Throws ConfigError naming `option`.
void check_writable(const std::string& path, const std::string& option);
/// Throws ConfigError "<option>: '<path>' is one of the input files; refusing to overwrite it"
/// when `path` is one of `inputs`, by name or as the same file (another spelling, a link):
/// reading results must never rewrite one.
void check_not_an_input(const std::string& path, const std::vector<std::string>& inputs,
                        const std::string& option);

/// The largest input file gpuperf reads (results, spec database): 64 MiB.
inline constexpr std::size_t kMaxInputFileBytes = 64u << 20;

/// Reads a whole text file. IoError naming the file when it cannot be read, is not a regular
/// file (a directory, /dev/zero, a pipe), is larger than kMaxInputFileBytes, or is empty.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace gpuperf
