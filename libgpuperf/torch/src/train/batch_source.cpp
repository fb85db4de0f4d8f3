#include "gpuperf/train/batch_source.h"

#include <ATen/CPUGeneratorImpl.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/base/log.h"
#include "gpuperf/device/torch_choices.h"
#include "gpuperf/input/geometry.h"

namespace gpuperf {

void SyntheticBatchOptions::validate() const {
  if (batch_size <= 0) {
    throw ConfigError("SyntheticBatchOptions::batch_size",
                      "must be > 0, got " + std::to_string(batch_size));
  }
  if (sample_shape.empty()) throw ConfigError("SyntheticBatchOptions::sample_shape", "is empty");
  for (std::int64_t d : sample_shape) {
    if (d <= 0)
      throw ConfigError("SyntheticBatchOptions::sample_shape",
                        "has a dimension " + std::to_string(d));
  }
  if (num_classes <= 0) {
    throw ConfigError("SyntheticBatchOptions::num_classes",
                      "must be > 0, got " + std::to_string(num_classes));
  }
}

SyntheticBatches::SyntheticBatches(SyntheticBatchOptions options) : options_(std::move(options)) {
  options_.validate();
  batch_ = make();
}

Batch SyntheticBatches::make() {
  std::vector<std::int64_t> shape{options_.batch_size};
  shape.insert(shape.end(), options_.sample_shape.begin(), options_.sample_shape.end());
  const auto on = torch::TensorOptions().device(options_.device);
  auto input = torch::randn(shape, on.dtype(torch::kFloat));
  auto target =
      torch::randint(0, options_.num_classes, {options_.batch_size}, on.dtype(torch::kLong));
  return {to_memory_format(input, options_.memory_format), target};
}

Batch SyntheticBatches::next() { return options_.fresh_every_step ? make() : batch_; }

void TokenBatchOptions::validate() const {
  require_setting(batch_size > 0, "TokenBatchOptions::batch_size", batch_size, "> 0");
  require_setting(sequence > 0, "TokenBatchOptions::sequence", sequence, "> 0");
  require_setting(vocabulary > 0, "TokenBatchOptions::vocabulary", vocabulary, "> 0");
}

namespace {

// [batch, sequence + 1] ids -> (input, target shifted by one).
Batch shifted(const torch::Tensor& ids) {
  const std::int64_t sequence = ids.size(1) - 1;
  return {ids.narrow(1, 0, sequence).contiguous(), ids.narrow(1, 1, sequence).contiguous()};
}

constexpr std::int32_t kLlmcMagic = 20240520;
constexpr std::size_t kLlmcHeaderBytes = 256 * sizeof(std::int32_t);

// The position of the first token >= vocabulary in tokens[0, count), or -1. A branch-free maximum
// per chunk (the compiler vectorises it) and a search only in a chunk that holds such a token:
// memory speed, so a whole file is checked before anything runs. Progress every 2^30 tokens.
std::int64_t first_token_outside(const std::uint16_t* tokens, std::int64_t count,
                                 std::int64_t vocabulary, const std::string& path) {
  if (vocabulary > 0xFFFF) return -1;
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  constexpr std::int64_t kProgressEvery = std::int64_t{1} << 30;
  const auto limit = static_cast<std::uint16_t>(vocabulary);
  for (std::int64_t begin = 0; begin < count; begin += kChunk) {
    const std::int64_t end = std::min(count, begin + kChunk);
    std::uint16_t largest = 0;
    for (std::int64_t i = begin; i < end; ++i) largest = std::max(largest, tokens[i]);
    if (largest >= limit) {
      for (std::int64_t i = begin; i < end; ++i) {
        if (tokens[i] >= limit) return i;
      }
    }
    if (end % kProgressEvery == 0 && end < count) {
      log::info(log::cat("checking the token file ", path, ": ", end >> 20, " of ", count >> 20,
                         " Mi tokens"));
    }
  }
  return -1;
}

}  // namespace

SyntheticTokens::SyntheticTokens(TokenBatchOptions options) : options_(options) {
  options_.validate();
  const at::Generator generator = at::detail::createCPUGenerator(options_.seed);
  const torch::Tensor ids =
      torch::randint(0, options_.vocabulary, {options_.batch_size, options_.sequence + 1},
                     generator, torch::TensorOptions().dtype(torch::kLong));
  batch_ = shifted(ids.to(options_.device));
}

TokenFileBatches::TokenFileBatches(const std::string& path, TokenBatchOptions options)
    : path_(path), options_(options), state_(options_.seed) {
  options_.validate();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError("cannot open the token file " + path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw IoError("the token file " + path + " is not a regular file");
  }
  const auto bytes_in_file = static_cast<std::size_t>(info.st_size);
  void* mapped =
      bytes_in_file > 0 ? ::mmap(nullptr, bytes_in_file, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  ::close(fd);
  if (mapped == MAP_FAILED || mapped == nullptr) {
    throw ConfigError("TrainingRun::token_file", path,
                      bytes_in_file == 0 ? "is empty" : "cannot be mapped");
  }
  map_ = std::shared_ptr<const void>(
      mapped, [bytes_in_file](const void* p) { ::munmap(const_cast<void*>(p), bytes_in_file); });
  const auto* bytes = static_cast<const unsigned char*>(map_.get());
  std::int32_t header[3] = {0, 0, 0};
  if (bytes_in_file >= kLlmcHeaderBytes) std::memcpy(header, bytes, sizeof(header));
  std::size_t offset = 0;
  if (header[0] == kLlmcMagic) {
    if (header[1] != 1) {
      throw ConfigError("TrainingRun::token_file", path,
                        "has an llm.c header of version " + std::to_string(header[1]) +
                            " (only version 1, uint16 tokens, is read)");
    }
    offset = kLlmcHeaderBytes;
    tokens_ = header[2];
    if (offset + static_cast<std::size_t>(tokens_) * 2 > bytes_in_file || tokens_ < 0) {
      throw ConfigError(
          "TrainingRun::token_file", path,
          "is shorter than its llm.c header's " + std::to_string(header[2]) + " tokens");
    }
  } else {
    // An odd size is no uint16 file: cut short (an interrupted copy) or another format.
    if (bytes_in_file % 2 != 0) {
      throw ConfigError("TrainingRun::token_file", path,
                        "holds " + std::to_string(bytes_in_file) +
                            " bytes, not a whole number of uint16 tokens (cut short?)");
    }
    tokens_ = static_cast<std::int64_t>(bytes_in_file / 2);
  }
  data_ = reinterpret_cast<const std::uint16_t*>(bytes + offset);
  if (tokens_ < options_.sequence + 1) {
    throw ConfigError(
        "TrainingRun::token_file", path,
        "holds " + std::to_string(tokens_) +
            " tokens, fewer than {sequence_length} + 1 = " + std::to_string(options_.sequence + 1));
  }
  const std::int64_t outside = first_token_outside(data_, tokens_, options_.vocabulary, path);
  if (outside >= 0) {
    throw ConfigError("TrainingRun::token_file", path,
                      "has token " + std::to_string(data_[outside]) + " at position " +
                          std::to_string(outside) + ", outside the vocabulary of " +
                          std::to_string(options_.vocabulary));
  }
}

Batch TokenFileBatches::next() {
  const std::int64_t window = options_.sequence + 1;
  const auto starts = static_cast<std::uint64_t>(tokens_ - window + 1);
  torch::Tensor ids = torch::empty({options_.batch_size, window}, torch::kLong);
  auto* out = ids.data_ptr<std::int64_t>();
  for (std::int64_t b = 0; b < options_.batch_size; ++b) {
    // SplitMix64: the same windows on every standard library.
    state_ += 0x9E3779B97F4A7C15ULL;
    const std::uint64_t start = mix64(state_) % starts;
    for (std::int64_t t = 0; t < window; ++t) {
      out[b * window + t] = data_[start + static_cast<std::uint64_t>(t)];
    }
  }
  return shifted(ids.to(options_.device));
}

FunctionBatches::FunctionBatches(std::function<Batch()> next, std::int64_t batch_size,
                                 std::string name)
    : next_(std::move(next)), batch_size_(batch_size), name_(std::move(name)) {
  if (!next_) throw ConfigError("FunctionBatches: the batch function is empty");
  if (batch_size_ <= 0) {
    throw ConfigError("FunctionBatches: batch_size must be > 0, got " +
                      std::to_string(batch_size_));
  }
}

}  // namespace gpuperf
