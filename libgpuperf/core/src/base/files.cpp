#include "gpuperf/base/files.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include <fcntl.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): sigaction is POSIX, not <csignal>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

// The registry of temporary files, read by signal handlers: fixed storage (no allocation), and
// per slot one atomic word, a seqlock of a generation count and the state, so that a handler
// running on another thread while a slot is reused never unlinks a half-copied path.
constexpr unsigned kFree = 0, kClaimed = 1, kLive = 2, kStateMask = 3;

struct TemporarySlot {
  std::atomic<unsigned> word{0};  // generation << 2 | state
  char path[kMaxTemporaryPathBytes];
};

TemporarySlot g_temporary_slots[kMaxTemporaryFiles];
std::atomic<int> g_committed{0};
static_assert(std::atomic<unsigned>::is_always_lock_free, "the signal handler reads these");
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads these");

unsigned next_word(unsigned word, unsigned state) { return ((word >> 2) + 1) << 2 | state; }

int claim_slot(const std::string& path) {
  if (path.size() >= kMaxTemporaryPathBytes) {
    throw IoError("cannot write '" + path + "': the path is longer than " +
                  std::to_string(kMaxTemporaryPathBytes - 1) + " bytes");
  }
  for (int i = 0; i < kMaxTemporaryFiles; ++i) {
    TemporarySlot& slot = g_temporary_slots[i];
    unsigned word = slot.word.load(std::memory_order_relaxed);
    if ((word & kStateMask) != kFree) continue;
    if (!slot.word.compare_exchange_strong(word, next_word(word, kClaimed),
                                           std::memory_order_acq_rel)) {
      continue;
    }
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.word.store(next_word(slot.word.load(std::memory_order_relaxed), kLive),
                    std::memory_order_release);
    return i;
  }
  throw IoError("cannot write '" + path + "': more than " + std::to_string(kMaxTemporaryFiles) +
                " temporary files at once");
}

void release_slot(int i) {
  if (i < 0) return;
  TemporarySlot& slot = g_temporary_slots[i];
  slot.word.store(next_word(slot.word.load(std::memory_order_relaxed), kFree),
                  std::memory_order_release);
}

// 16 hex digits from the kernel's random source: a temporary name nobody can plant in advance.
std::string random_hex() {
  unsigned char bytes[8];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw IoError(std::string("cannot name a temporary file: getrandom: ") +
                    std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

// "<target><suffix><random>", its file name cut to NAME_MAX (255 bytes) where the target's own
// name is long: a valid target name must not fail for its temporary's.
std::string temporary_path(const std::string& target, const std::string& suffix) {
  constexpr std::size_t kMaxName = 255;
  const std::string tail = suffix + random_hex();
  const std::size_t slash = target.rfind('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t name_bytes = target.size() - name_start;
  if (name_bytes + tail.size() <= kMaxName || tail.size() >= kMaxName) return target + tail;
  return target.substr(0, name_start + (kMaxName - tail.size())) + tail;
}

// A write past RLIMIT_FSZ raises SIGXFSZ, whose default ends the process with a core dump: with it
// ignored, write() fails with EFBIG and the writer reports it. A disposition someone chose stays.
void ignore_file_size_signal() {
  static const bool done = [] {
    struct sigaction current {};
    if (::sigaction(SIGXFSZ, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      ::signal(SIGXFSZ, SIG_IGN);
    }
    return true;
  }();
  (void)done;
}

std::string errno_text(int error) { return std::strerror(error); }

std::string system_place(const std::string& path);

}  // namespace

TemporaryFile::TemporaryFile(const std::string& target, const std::string& suffix)
    : target_(target) {
  // The rename would replace whatever is at the target: never a device, a pipe or a folder, nor
  // anything in /dev, /proc or /sys (as root, /dev/full or the /dev/stdout link itself).
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    throw IoError("cannot write '" + target + "': it is not a regular file");
  }
  if (const std::string place = system_place(target); !place.empty()) {
    throw IoError("cannot write '" + target + "': it is or leads to " + place +
                  ", in /dev, /proc or /sys");
  }
  ignore_file_size_signal();
  // Registered before it exists, so that a signal between open() and registration cannot leave
  // it; a name already taken (EEXIST: planted or a collision) is skipped for another.
  for (int attempt = 0;; ++attempt) {
    path_ = temporary_path(target, suffix);
    slot_ = claim_slot(path_);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    const int error = errno;
    release_slot(slot_);
    slot_ = -1;
    if (error != EEXIST || attempt >= 100) {
      throw IoError("cannot write '" + target + "': cannot create '" + path_ +
                    "': " + errno_text(error));
    }
  }
}

TemporaryFile::~TemporaryFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(path_.c_str());
  release_slot(slot_);
}

void TemporaryFile::write(const char* data, std::size_t size) {
  if (fd_ < 0) throw IoError("cannot write '" + target_ + "': the temporary file is closed");
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      throw IoError("cannot write '" + target_ + "': " + errno_text(error));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void TemporaryFile::commit() {
  if (committed_) return;
  if (fd_ >= 0) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      throw IoError("cannot write '" + target_ + "': " + errno_text(errno));
    }
  }
  if (std::rename(path_.c_str(), target_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    throw IoError("cannot rename '" + path_ + "' to '" + target_ + "': " + reason);
  }
  committed_ = true;
  g_committed.fetch_add(1, std::memory_order_release);
}

void remove_temporary_files() noexcept {
  char path[kMaxTemporaryPathBytes];
  for (auto& slot : g_temporary_slots) {
    const unsigned before = slot.word.load(std::memory_order_acquire);
    if ((before & kStateMask) != kLive) continue;
    std::memcpy(path, slot.path, sizeof path);
    path[sizeof path - 1] = '\0';
    std::atomic_thread_fence(std::memory_order_acquire);
    // Unchanged while it was copied: the path is whole (a slot reused meanwhile is skipped, and
    // its new file is not created before it is registered anyway).
    if (slot.word.load(std::memory_order_acquire) == before) ::unlink(path);
  }
}

int committed_temporary_files() noexcept { return g_committed.load(std::memory_order_acquire); }

void write_text_file_atomically(const std::string& text, const std::string& path) {
  if (is_stdout_path(path)) {
    std::cout << text << std::flush;
    if (!std::cout) throw IoError("cannot write to standard output");
    return;
  }
  TemporaryFile temporary(path);  // removed again unless committed
  temporary.write(text.data(), text.size());
  // The tests' seam: held here, the temporary file written and registered, until the test opens
  // this FIFO for writing (or its signal ends the process), and then until it closes it again
  // (what it changes meanwhile, the write meets next).
  if (const char* hold = std::getenv("GPUPERF_TEST_HOLD_WRITE"); hold && *hold) {
    const int fd = ::open(hold, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char byte = 0;
      for (;;) {
        const ssize_t n = ::read(fd, &byte, 1);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        break;
      }
      ::close(fd);
    }
  }
  temporary.commit();
}

namespace {

// Whether an absolute, normal path lies in a folder of kernel objects: a result renamed there
// would replace a device node or a link of the system's (/dev/stdout), or fail oddly (/proc).
bool in_system_folder(const std::filesystem::path& path) {
  static const char* const kFolders[] = {"/dev", "/proc", "/sys"};
  const std::string text = path.lexically_normal().string();
  // /dev/shm is a plain memory file system for files of anyone's.
  if (text.compare(0, 9, "/dev/shm/") == 0) return false;
  return std::any_of(std::begin(kFolders), std::end(kFolders), [&](const char* folder) {
    const std::size_t n = std::strlen(folder);
    return text.compare(0, n, folder) == 0 && (text.size() == n || text[n] == '/');
  });
}

// The first place in /dev, /proc or /sys that `path` is or leads to (its folder resolved, then
// each hop of its own chain of symbolic links); empty when none.
std::string system_place(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path current = fs::absolute(path, error);
  if (error) return {};
  for (int hop = 0; hop < 40; ++hop) {
    if (in_system_folder(current)) return current.lexically_normal().string();
    const fs::path parent = fs::canonical(current.parent_path(), error);
    if (error) return {};
    if (in_system_folder(parent)) return (parent / current.filename()).string();
    current = parent / current.filename();
    if (!fs::is_symlink(fs::symlink_status(current, error))) return {};
    const fs::path target = fs::read_symlink(current, error);
    if (error) return {};
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  return {};
}

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  if (is_stdout_path(path)) return;
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) {
    throw ConfigError(option, "'" + path + "' is a directory; give a file name");
  }
  // A read-only file is its owner's "keep this": the rename would replace it whatever its mode
  // says (and root's writes ignore the mode anyway).
  using std::filesystem::perms;
  if (std::filesystem::is_regular_file(status) &&
      (status.permissions() & (perms::owner_write | perms::group_write | perms::others_write)) ==
          perms::none) {
    throw ConfigError(option, "'" + path +
                                  "' is read-only; give another file name or make it "
                                  "writable");
  }
  // A result replaces its target by a rename: over a device or a pipe (/dev/null, /dev/stdout)
  // that would replace the special file itself.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw ConfigError(
        option, "'" + path + "' is not a regular file; give a file name ('-': standard output)");
  }
  // /dev/stdout with standard output redirected to a file resolves to that regular file; run as
  // root, the rename would then replace the /dev/stdout link itself.
  if (const std::string place = system_place(path); !place.empty()) {
    const std::string where =
        place == std::filesystem::absolute(path, error).lexically_normal().string()
            ? "is in /dev, /proc or /sys"
            : "leads to " + place + ", in /dev, /proc or /sys";
    throw ConfigError(option, "'" + path + "' " + where +
                                  ": not a file of yours; give a file name ('-': standard output)");
  }
  try {
    TemporaryFile probe(path, ".probe-");  // created, then removed again when it goes
  } catch (const IoError& e) {
    throw ConfigError(option, e.what());
  }
}

std::string file_identity(const std::string& path) {
  namespace fs = std::filesystem;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  if (error) return "path " + path;
  fs::path name = absolute.filename();
  fs::path folder = absolute.parent_path();
  if (name.empty() || name == "." || name == "..") {  // "d/." names a folder, not a new file
    return "path " + absolute.lexically_normal().string();
  }
  const fs::path canonical = fs::canonical(folder, error);
  if (!error) {
    // The folder exists: the new file would have the folder's identity and this name.
    struct stat folder_stat {};
    if (::stat(canonical.c_str(), &folder_stat) == 0) {
      return "in " + std::to_string(folder_stat.st_dev) + ":" + std::to_string(folder_stat.st_ino) +
             " " + name.string();
    }
    return "path " + (canonical / name).string();
  }
  return "path " + fs::weakly_canonical(absolute, error).lexically_normal().string();
}

void check_not_an_input(const std::string& path, const std::vector<std::string>& inputs,
                        const std::string& option) {
  if (is_stdout_path(path)) return;
  const std::string identity = file_identity(path);
  const bool is_input = std::any_of(inputs.begin(), inputs.end(), [&](const std::string& input) {
    return input == path || file_identity(input) == identity;
  });
  if (is_input) {
    throw ConfigError(option + ": '" + path +
                      "' is one of the input files; refusing to overwrite it");
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
