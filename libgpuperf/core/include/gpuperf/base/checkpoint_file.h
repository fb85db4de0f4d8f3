#pragma once
// The checkpoint container (format 2): a short text header that says what the file holds and
// checks it, then LibTorch's archive as an opaque payload. TrainStep::save()/load() fill and
// check it; this part has no LibTorch, so that its reader can be fuzzed with the other readers.
//
//   gpuperf.checkpoint/2
//   payload_bytes 48211
//   payload_fnv1a64 9ae16a3b2f90c8b1
//   tensors_fnv1a64 01f3c2a4e5b6d7c8
//   identity 5
//   param conv1.weight<TAB>float [8, 3, 3, 3]
//   ...
//   optimizer<TAB>adam (torch::optim)
//   <empty line>
//   <payload_bytes bytes of LibTorch's archive>
//
// The payload's checksum is checked before LibTorch parses a byte of it: a cut, padded or
// flipped file is an IoError here, never a read past a record inside LibTorch. The identity (every
// model tensor's name, dtype and shape, and the optimizer) is compared before anything is loaded;
// the tensors' own checksum (name, dtype, shape and bytes of each model tensor) is checked on the
// tensors read, before one is copied into the model.
//
//   std::string bytes = gpuperf::encode_checkpoint(header, payload);
//   gpuperf::CheckpointFile file = gpuperf::decode_checkpoint(bytes, path);  // IoError

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuperf {

/// The format save() writes; load() reads only this one (format 1, a bare LibTorch archive with
/// no checksum, is refused: it cannot be checked before LibTorch parses it).
inline constexpr int kCheckpointFormat = 2;

/// 64-bit FNV-1a, fed in pieces: the checkpoint's checksums (corruption, not tampering).
class Fnv1a64 {
 public:
  /// Adds `size` bytes.
  void update(const void* data, std::size_t size) noexcept;
  /// Adds a string and its length (so that "ab","c" and "a","bc" differ).
  void update(std::string_view text) noexcept;
  /// Adds an integer's 8 little-endian bytes.
  void update(std::int64_t value) noexcept;
  /// The checksum so far.
  [[nodiscard]] std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

/// One line of a checkpoint's identity: a key ("param fc.weight", "buffer bn.running_mean",
/// "optimizer", "model") and what it is there ("float [10, 64]", "adam (fused)").
using CheckpointIdentity = std::vector<std::pair<std::string, std::string>>;

/// What a checkpoint file holds besides its payload.
struct CheckpointHeader {
  /// The model's tensors and the options that define the state, in save order.
  CheckpointIdentity identity;
  /// Fnv1a64 over each model tensor's name, dtype, shape and bytes, in identity order.
  std::uint64_t tensors_checksum = 0;
};

/// A decoded checkpoint: its header and a view of its payload inside the bytes decoded.
struct CheckpointFile {
  CheckpointHeader header;
  std::string_view payload;
};

/// The largest header decode_checkpoint() reads (identity lines included): 64 MiB.
inline constexpr std::size_t kMaxCheckpointHeaderBytes = 64u << 20;

/// The file's bytes: the header and `payload`. Keys and values must be printable (no tab or
/// newline in a key, no newline in a value): ConfigError otherwise.
[[nodiscard]] std::string encode_checkpoint(const CheckpointHeader& header,
                                            std::string_view payload);

/// Reads what encode_checkpoint() wrote. IoError naming `what` (the path) and the field when
/// anything is malformed, cut, followed by extra bytes, or fails its payload checksum; a file of
/// another format (a LibTorch archive of format 1) names the format it has.
[[nodiscard]] CheckpointFile decode_checkpoint(std::string_view bytes, const std::string& what);

/// The first difference between a checkpoint's identity and a model's, as one phrase
/// ("param fc.weight is float [10, 64] in the checkpoint, float [10, 32] here"); empty when they
/// are the same.
[[nodiscard]] std::string identity_mismatch(const CheckpointIdentity& in_file,
                                            const CheckpointIdentity& here);

/// Reads a whole binary file: opened O_NONBLOCK (a FIFO never hangs) and checked to be a regular
/// file before a byte is read. IoError naming the file with the errno text, for a file that is
/// not regular, larger than `max_bytes`, or changed while read.
[[nodiscard]] std::string read_binary_file(const std::string& path, std::size_t max_bytes);

}  // namespace gpuperf
