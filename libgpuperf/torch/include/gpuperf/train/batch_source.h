#pragma once
// Where training batches come from: synthetic tensors made once on the device (like the seed),
// or any user function.

#include <torch/types.h>

#include <cstdint>
#include <functional>
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
