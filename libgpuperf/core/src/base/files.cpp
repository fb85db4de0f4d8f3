#include "gpuperf/base/files.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
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
  TemporarySlot& slot = g_temporary_slots[i];
  slot.word.store(next_word(slot.word.load(std::memory_order_relaxed), kFree),
                  std::memory_order_release);
}

// "<target><suffix><pid>", its file name cut to NAME_MAX (255 bytes) where the target's own name
// is long: a valid target name must not fail for its temporary's.
std::string temporary_path(const std::string& target, const std::string& suffix) {
  constexpr std::size_t kMaxName = 255;
  const std::string tail = suffix + std::to_string(::getpid());
  const std::size_t slash = target.rfind('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t name_bytes = target.size() - name_start;
  if (name_bytes + tail.size() <= kMaxName || tail.size() >= kMaxName) return target + tail;
  return target.substr(0, name_start + (kMaxName - tail.size())) + tail;
}

}  // namespace

TemporaryFile::TemporaryFile(const std::string& target, const std::string& suffix)
    : target_(target), path_(temporary_path(target, suffix)) {
  slot_ = claim_slot(path_);
}

TemporaryFile::~TemporaryFile() {
  if (!committed_) ::unlink(path_.c_str());
  release_slot(slot_);
}

void TemporaryFile::commit() {
  if (committed_) return;
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
  {
    std::ofstream out(temporary.path(), std::ios::binary | std::ios::trunc);
    if (!out) throw IoError("cannot write '" + temporary.path() + "': " + std::strerror(errno));
    out << text;
    out.close();
    if (!out) throw IoError("write to '" + temporary.path() + "' failed");
  }
  temporary.commit();
}

void check_writable(const std::string& path, const std::string& option) {
  if (is_stdout_path(path)) return;
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) {
    throw ConfigError("--" + option + ": '" + path + "' is a directory; give a file name");
  }
  // A result replaces its target by a rename: over a device or a pipe (/dev/null, /dev/stdout)
  // that would replace the special file itself.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw ConfigError("--" + option + ": '" + path +
                      "' is not a regular file; give a file name ('-': standard output)");
  }
  std::optional<TemporaryFile> probe;  // removed again when it goes
  try {
    probe.emplace(path, ".probe-");
  } catch (const IoError& e) {
    throw ConfigError("--" + option + ": " + e.what());
  }
  std::ofstream out(probe->path(), std::ios::binary | std::ios::trunc);
  if (!out) {
    throw ConfigError("--" + option + ": cannot write '" + path + "': " + std::strerror(errno));
  }
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
