// libFuzzer target: the checkpoint container's reader (base/checkpoint_file.h), the part of
// TrainStep::load() that reads untrusted bytes before LibTorch sees any (fuzz_common.h states the
// contract). The input is read as a checkpoint file; it is also wrapped, as identity lines and
// payload, into a valid file, which must read back unchanged, and whose every cut and flipped
// payload byte must be refused. Registered in CTest by tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "gpuperf/base/checkpoint_file.h"

namespace {

using gpuperf::CheckpointFile;
using gpuperf::CheckpointHeader;

void check_same(const CheckpointFile& a, const CheckpointFile& b, const char* what) {
  if (a.header.identity != b.header.identity ||
      a.header.tensors_checksum != b.header.tensors_checksum || a.payload != b.payload) {
    gpuperf::fuzz::broken(std::string(what) + ": changed in an encode/decode round trip");
  }
  if (!gpuperf::identity_mismatch(a.header.identity, b.header.identity).empty()) {
    gpuperf::fuzz::broken(std::string(what) + ": an identity differs from itself");
  }
}

// Must be refused with an IoError (never accepted, never another exception).
void refused(const std::string& bytes, const char* what) {
  try {
    (void)gpuperf::decode_checkpoint(bytes, "fuzz.ckpt");
  } catch (const gpuperf::IoError&) {
    return;
  }
  gpuperf::fuzz::broken(std::string(what) + ": accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  const std::string text = fuzz::text_of(data, size);
  // The input as a file: read or refused; what is read encodes to a file that reads the same.
  try {
    const CheckpointFile file = decode_checkpoint(text, "fuzz.ckpt");
    const std::string again = encode_checkpoint(file.header, file.payload);
    check_same(file, decode_checkpoint(again, "again.ckpt"), "an accepted file");
  } catch (const Error&) {
  }
  // The input as the identity (its first lines, "key<TAB>value") and payload of a valid file.
  CheckpointHeader header;
  std::size_t pos = 0;
  for (int line = 0; line < 8 && pos < text.size(); ++line) {
    const std::size_t end = text.find('\n', pos);
    const std::string piece = text.substr(pos, end == std::string::npos ? end : end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    const std::size_t tab = piece.find('\t');
    if (tab == std::string::npos) break;
    header.identity.emplace_back(piece.substr(0, tab), piece.substr(tab + 1));
  }
  header.tensors_checksum = size * 0x9e3779b97f4a7c15ull;
  std::string valid;
  try {
    valid = encode_checkpoint(header, text);
  } catch (const ConfigError&) {
    return 0;  // an identity line that cannot be written (an empty or repeated key is refused
               // below only by the reader)
  }
  CheckpointFile read;
  try {
    read = decode_checkpoint(valid, "valid.ckpt");
  } catch (const IoError& e) {
    // A repeated key is the writer's caller's mistake, refused by the reader: nothing else.
    if (std::string(e.what()).find("repeats") == std::string::npos) {
      fuzz::broken(std::string("a written file is refused: ") + e.what());
    }
    return 0;
  }
  CheckpointFile expected{header, text};
  check_same(read, expected, "a written file");
  // A cut anywhere and a flipped payload byte are refused.
  refused(valid.substr(0, size == 0 ? valid.size() - 1 : (data[0] * 131 + size) % valid.size()),
          "a cut file");
  if (size > 0) {
    std::string flipped = valid;
    flipped[valid.size() - 1 - data[size - 1] % size] ^= 0x20;
    refused(flipped, "a file with a flipped payload byte");
  }
  return 0;
}
