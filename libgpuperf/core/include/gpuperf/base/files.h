#pragma once
// Result files are written whole or not at all: a temporary file beside the target, renamed over
// it. Programs check their output paths before a long run, never after it.
//
//   gpuperf::check_writable(path, "json");           // before the run: ConfigError naming "json"
//   gpuperf::write_text_file_atomically(text, path);  // after it
//
// Every temporary file (the "<path>.tmp-<random>" of a write, check_writable()'s probe) is
// registered while it exists, so that a signal handler can remove it with
// remove_temporary_files() before it ends the process: an interrupted program leaves neither a
// partial result at the target nor a temporary file beside it.

#include <cstddef>
#include <string>
#include <vector>

namespace gpuperf {

/// The output path that means standard output: "-".
inline constexpr const char* kStdoutPath = "-";

/// Whether `path` names standard output ("-") rather than a file.
[[nodiscard]] inline bool is_stdout_path(const std::string& path) { return path == kStdoutPath; }

/// A temporary file of this process beside `target`, "<target><suffix><16 random hex digits>":
/// created by the constructor with O_CREAT|O_EXCL|O_NOFOLLOW (a planted file or link at its name
/// is never opened, and the name cannot be guessed), registered from before its creation until
/// destruction so that remove_temporary_files() can delete it, and removed by the destructor
/// unless commit() renamed it over its target. Write through write() (or fd()).
///
///   gpuperf::TemporaryFile temporary(path);   // "<path>.tmp-<random>", created empty
///   temporary.write(text.data(), text.size());
///   temporary.commit();                       // renamed over `path`: whole or nothing
class TemporaryFile {
 public:
  /// Creates and registers the file. IoError (with the errno text) when it cannot be created,
  /// the registry is full (kMaxTemporaryFiles at once) or the path is longer than a path can be
  /// (kMaxTemporaryPathBytes). Ignores SIGXFSZ once (where it was at its default) so that a write
  /// past the file-size limit fails with EFBIG instead of killing the process.
  explicit TemporaryFile(const std::string& target, const std::string& suffix = ".tmp-");
  /// Closes and removes the file unless committed, and unregisters it. Never throws.
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  /// The temporary file's path.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The open file descriptor (write-only); -1 after commit().
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Writes all of `data`; IoError naming the target with the errno text (ENOSPC, EFBIG, ...).
  void write(const char* data, std::size_t size);
  /// Closes the file (a failed close is an IoError: NFS reports a full disk there), then renames
  /// it over the target (atomic within a file system); IoError naming both when that fails (the
  /// temporary file is then removed by the destructor).
  void commit();

 private:
  std::string target_, path_;
  int slot_ = -1;
  int fd_ = -1;
  bool committed_ = false;
};

/// How many temporary files can be registered at once.
inline constexpr int kMaxTemporaryFiles = 64;
/// The longest temporary path the registry holds, bytes (Linux's PATH_MAX, terminator included).
inline constexpr std::size_t kMaxTemporaryPathBytes = 4096;

/// Deletes every registered temporary file with async-signal-safe calls only (unlink(2)): what a
/// handler of SIGINT/SIGTERM does before it ends the process with _exit(). Never throws.
void remove_temporary_files() noexcept;

/// How many temporary files have been committed (renamed over their target: results written
/// whole) in this process. Async-signal-safe, for the line a signal handler prints.
[[nodiscard]] int committed_temporary_files() noexcept;

/// Writes `text` to `path` atomically (a temporary file beside it, renamed over it), or to
/// standard output when `path` is "-"; IoError.
void write_text_file_atomically(const std::string& text, const std::string& path);
/// Checks that `path` can be written (creates and removes a temporary file beside it) so that a
/// program can refuse bad output paths before a long run ("-", standard output, always can):
/// a directory, a special file (/dev/null, a pipe, a terminal: the rename would replace it), a
/// path in or linked into /dev, /proc or /sys (`/dev/stdout`: as root the rename would replace
/// the system's link) and a place that cannot be written are ConfigErrors naming `option`.
void check_writable(const std::string& path, const std::string& option);

/// What identifies a file however it is spelled: its device and inode where it exists, else the
/// canonical absolute path of its folder plus its name. Two paths with equal identities name one
/// file (`x.csv`, `./x.csv`, `/abs/x.csv`, `d/../x.csv`, a symbolic or hard link).
[[nodiscard]] std::string file_identity(const std::string& path);

/// Throws ConfigError "<option>: '<path>' is one of the input files; refusing to overwrite it"
/// when `path` is one of `inputs` by file_identity() (another spelling, a link): reading results
/// must never rewrite one.
void check_not_an_input(const std::string& path, const std::vector<std::string>& inputs,
                        const std::string& option);

/// The largest input file gpuperf reads (results, spec database): 64 MiB.
inline constexpr std::size_t kMaxInputFileBytes = 64u << 20;

/// Reads a whole text file. IoError naming the file when it cannot be read, is not a regular
/// file (a directory, /dev/zero, a pipe), is larger than kMaxInputFileBytes, or is empty.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace gpuperf
