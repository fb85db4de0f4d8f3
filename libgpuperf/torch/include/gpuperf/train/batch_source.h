#pragma once
// Where training batches come from: synthetic tensors made once on the device (like the seed),
// token sequences for language models (synthetic, or random windows of a token file), or any
// user function.

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/base/choices.h"

namespace gpuperf {

/// One batch: inputs and integer class targets.
struct Batch {
  torch::Tensor input;
  torch::Tensor target;
};

/// A source of batches; next() is called once per training step.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// The next batch (on any device; TrainStep moves it).
  virtual Batch next() = 0;
  /// Samples per batch.
  [[nodiscard]] virtual std::int64_t batch_size() const = 0;
  /// Short description for results, e.g. "synthetic".
  [[nodiscard]] virtual std::string name() const = 0;
};

/// Options of SyntheticBatches.
struct SyntheticBatchOptions {
  std::int64_t batch_size = 256;
  std::vector<std::int64_t> sample_shape{3, 32, 32};  ///< one input sample
  std::int64_t num_classes = 10;
  torch::Device device = torch::kCPU;
  MemoryFormat memory_format = MemoryFormat::kContiguous;
  std::uint64_t seed = 0;
  /// Draw new random tensors for every batch (costs a kernel launch or two per step) instead of
  /// returning the same batch every time, as the seed does.
  bool fresh_every_step = false;

  /// Throws ConfigError naming the bad field.
  void validate() const;
};

/// Random normal inputs and uniform class targets, generated on the device.
class SyntheticBatches final : public BatchSource {
 public:
  explicit SyntheticBatches(SyntheticBatchOptions options);
  Batch next() override;
  [[nodiscard]] std::int64_t batch_size() const override { return options_.batch_size; }
  [[nodiscard]] std::string name() const override { return "synthetic"; }

 private:
  Batch make();
  SyntheticBatchOptions options_;
  Batch batch_;
};

/// Options of the language-model batch sources: `batch_size` sequences of `sequence` tokens.
struct TokenBatchOptions {
  std::int64_t batch_size = 16;
  std::int64_t sequence = 1024;
  std::int64_t vocabulary = 50304;  ///< token ids are < vocabulary
  torch::Device device = torch::kCPU;
  std::uint64_t seed = 0;

  /// Throws ConfigError naming the bad field.
  void validate() const;
};

/// Uniform random token ids, made once on the device and returned every step (as the synthetic
/// image batches are): input [batch, sequence], target the same sequences shifted by one token.
class SyntheticTokens final : public BatchSource {
 public:
  explicit SyntheticTokens(TokenBatchOptions options);
  Batch next() override { return batch_; }
  [[nodiscard]] std::int64_t batch_size() const override { return options_.batch_size; }
  [[nodiscard]] std::string name() const override { return "synthetic tokens"; }

 private:
  TokenBatchOptions options_;
  Batch batch_;
};

/// Random windows of a pre-tokenised file: input [batch, sequence] and the target shifted by one,
/// each window at a uniformly drawn offset (seeded). The file is nanoGPT's layout (raw
/// little-endian uint16 tokens) or llm.c's (a 256 x int32 header with magic 20240520, version 1,
/// the token count, then uint16 tokens); it is memory-mapped, not read whole.
class TokenFileBatches final : public BatchSource {
 public:
  /// IoError when the file cannot be opened or mapped; ConfigError when it holds fewer than
  /// sequence + 1 tokens, an odd number of bytes (no llm.c header), an llm.c header it cannot
  /// read (a version other than 1), or a token >= the vocabulary anywhere in the file (named
  /// with its position: the embedding would read out of bounds). The whole file is read once
  /// here for that check, at memory or disk speed, so a bad token stops the run before it starts.
  TokenFileBatches(const std::string& path, TokenBatchOptions options);
  /// The next windows.
  Batch next() override;
  [[nodiscard]] std::int64_t batch_size() const override { return options_.batch_size; }
  [[nodiscard]] std::string name() const override { return "token file " + path_; }
  /// Tokens in the file.
  [[nodiscard]] std::int64_t tokens() const { return tokens_; }

 private:
  std::string path_;
  TokenBatchOptions options_;
  std::shared_ptr<const void> map_;  ///< the mapping, unmapped by its deleter
  const std::uint16_t* data_ = nullptr;
  std::int64_t tokens_ = 0;
  std::uint64_t state_;
};

/// Adapts a user function to BatchSource.
class FunctionBatches final : public BatchSource {
 public:
  FunctionBatches(std::function<Batch()> next, std::int64_t batch_size, std::string name = "user");
  Batch next() override { return next_(); }
  [[nodiscard]] std::int64_t batch_size() const override { return batch_size_; }
  [[nodiscard]] std::string name() const override { return name_; }

 private:
  std::function<Batch()> next_;
  std::int64_t batch_size_;
  std::string name_;
};

}  // namespace gpuperf
