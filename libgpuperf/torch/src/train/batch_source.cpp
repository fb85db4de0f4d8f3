#include "gpuperf/train/batch_source.h"

#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/device/torch_choices.h"

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
