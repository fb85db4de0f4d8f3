// libFuzzer target with planted defects, for fuzz:self_test (self_test.sh): an input starting with
// "ASAN" reads past a heap buffer, "UBSAN" overflows a signed integer, "LEAK" leaks, "THROW" throws
// an exception that is not a gpuperf::Error. Each must fail a run of run_fuzz_target.sh; anything
// else is harmless.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace {
bool starts_with(const std::uint8_t* data, std::size_t size, const char* word) {
  const std::size_t n = std::strlen(word);
  return size >= n && std::memcmp(data, word, n) == 0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (starts_with(data, size, "ASAN")) {
    auto* buffer = new char[size];
    std::memcpy(buffer, data, size);
    volatile char past_the_end = buffer[size];
    (void)past_the_end;
    delete[] buffer;
  } else if (starts_with(data, size, "UBSAN")) {
    volatile int big = std::numeric_limits<int>::max();
    volatile int overflowed = big + static_cast<int>(size);
    (void)overflowed;
  } else if (starts_with(data, size, "LEAK")) {
    volatile char* lost = new char[64];
    lost[0] = 1;
  } else if (starts_with(data, size, "THROW")) {
    throw std::runtime_error("not a gpuperf::Error");
  }
  return 0;
}
