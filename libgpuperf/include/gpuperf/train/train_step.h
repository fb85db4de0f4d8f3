#pragma once
// One object that runs a full training step for any module and loss:
//   zero_grad -> forward under autocast -> loss -> scaled backward -> unscale -> optimizer step
//   -> scaler update.
// It works inside your own loop:
//
//   gpuperf::TrainStepOptions options;
//   options.precision = gpuperf::Precision::kFp16;
//   gpuperf::TrainStep step(torch::nn::AnyModule(MyNet()), torch::kCUDA, options);
//   for (auto& [x, y] : my_loader) {
//     auto result = step(x, y);                       // no host sync unless fp16 scaling
//     if (i % 100 == 0) std::cout << result.loss.item<float>() << "\n";
//   }

#include <torch/nn/modules/container/any.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "gpuperf/amp/grad_scaler.h"
#include "gpuperf/train/batch_source.h"
#include "gpuperf/train/options.h"

namespace gpuperf {

/// Loss of a batch: (model output, target) -> scalar.
using LossFunction = std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;

/// Cross-entropy over class logits (the seed's loss).
[[nodiscard]] LossFunction cross_entropy_loss();

/// Options of TrainStep.
struct TrainStepOptions {
  Precision precision = Precision::kFp32;
  MemoryFormat memory_format = MemoryFormat::kContiguous;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 1e-3;  ///< the seed's Adam rate
  double momentum = 0.9;        ///< SGD only
  double weight_decay = 0;      ///< L2 (Adam, SGD) or decoupled (AdamW)
  bool cudnn_benchmark = true;  ///< let cuDNN time its algorithms for each new shape
  double max_grad_norm = 0;     ///< clip gradients to this L2 norm after unscaling; 0 = off
  /// Loss scaling; used for fp16 only, ignored (disabled) for other precisions.
  GradScalerOptions grad_scaler;

  /// Throws ConfigError naming the bad field.
  void validate() const;
};

/// What one step returns.
struct StepResult {
  torch::Tensor loss;    ///< detached scalar loss (read it with .item() when you need it)
  bool stepped = true;   ///< false when the GradScaler skipped the optimizer step (inf/NaN)
};

/// A full training step (see the file comment). Owns the model's optimizer and GradScaler.
class TrainStep {
 public:
  /// Moves the model to `device` and the memory format, and builds the optimizer.
  /// Throws ConfigError for a precision the device or LibTorch cannot run.
  TrainStep(torch::nn::AnyModule model, torch::Device device, TrainStepOptions options = {},
            LossFunction loss = cross_entropy_loss());

  /// Runs one step on (input, target); moves them to the device and memory format if needed.
  StepResult operator()(const torch::Tensor& input, const torch::Tensor& target);
  /// Runs one step on a batch.
  StepResult operator()(const Batch& batch) { return (*this)(batch.input, batch.target); }

  [[nodiscard]] torch::nn::AnyModule& model() { return model_; }
  [[nodiscard]] torch::nn::Module& module() { return *model_.ptr(); }
  [[nodiscard]] torch::optim::Optimizer& optimizer() { return *optimizer_; }
  [[nodiscard]] GradScaler& scaler() { return scaler_; }
  [[nodiscard]] const TrainStepOptions& options() const { return options_; }
  [[nodiscard]] const torch::Device& device() const { return device_; }
  /// Steps run so far.
  [[nodiscard]] std::int64_t steps() const { return steps_; }
  /// Steps whose optimizer update the GradScaler skipped for inf/NaN gradients.
  [[nodiscard]] std::int64_t skipped_steps() const { return skipped_steps_; }

 private:
  torch::nn::AnyModule model_;
  torch::Device device_;
  TrainStepOptions options_;
  LossFunction loss_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  GradScaler scaler_;
  std::int64_t steps_ = 0;
  std::int64_t skipped_steps_ = 0;
};

/// Builds the optimizer an OptimizerKind names over `parameters`.
[[nodiscard]] std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    OptimizerKind kind, std::vector<torch::Tensor> parameters, double learning_rate,
    double momentum, double weight_decay);

}  // namespace gpuperf
