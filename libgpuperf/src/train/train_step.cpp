#include "gpuperf/train/train_step.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <string>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/error.h"
#include "gpuperf/train/torch_options.h"

namespace gpuperf {

LossFunction cross_entropy_loss() {
  return [](const torch::Tensor& output, const torch::Tensor& target) {
    return torch::nn::functional::cross_entropy(output, target);
  };
}

void TrainStepOptions::validate() const {
  if (!(learning_rate > 0)) {
    throw ConfigError("--lr: must be > 0, got " + std::to_string(learning_rate));
  }
  if (momentum < 0) throw ConfigError("--momentum: must be >= 0, got " + std::to_string(momentum));
  if (weight_decay < 0) {
    throw ConfigError("--weight-decay: must be >= 0, got " + std::to_string(weight_decay));
  }
  if (max_grad_norm < 0) {
    throw ConfigError("--max-grad-norm: must be >= 0, got " + std::to_string(max_grad_norm));
  }
  grad_scaler.validate();
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(OptimizerKind kind,
                                                        std::vector<torch::Tensor> parameters,
                                                        double learning_rate, double momentum,
                                                        double weight_decay) {
  switch (kind) {
    case OptimizerKind::kAdam:
      return std::make_unique<torch::optim::Adam>(
          std::move(parameters), torch::optim::AdamOptions(learning_rate).weight_decay(weight_decay));
    case OptimizerKind::kAdamW:
      return std::make_unique<torch::optim::AdamW>(
          std::move(parameters), torch::optim::AdamWOptions(learning_rate).weight_decay(weight_decay));
    case OptimizerKind::kSgd:
      return std::make_unique<torch::optim::SGD>(
          std::move(parameters),
          torch::optim::SGDOptions(learning_rate).momentum(momentum).weight_decay(weight_decay));
  }
  throw ConfigError("unknown optimizer");
}

namespace {

GradScalerOptions scaler_options(const TrainStepOptions& options) {
  GradScalerOptions out = options.grad_scaler;
  // Only fp16 has a range narrow enough to need loss scaling.
  out.enabled(options.grad_scaler.enabled() && options.precision == Precision::kFp16);
  return out;
}

}  // namespace

TrainStep::TrainStep(torch::nn::AnyModule model, torch::Device device, TrainStepOptions options,
                     LossFunction loss)
    : model_(std::move(model)),
      device_(device),
      options_(std::move(options)),
      loss_(std::move(loss)),
      scaler_((options_.validate(), scaler_options(options_))) {
  if (model_.is_empty()) throw ConfigError("TrainStep: the model is empty");
  if (!loss_) throw ConfigError("TrainStep: the loss function is empty");
  check_precision_supported(options_.precision, device_);
  apply_backend_settings(options_.precision, options_.cudnn_benchmark);
  module().to(device_);
  convert_memory_format(module(), options_.memory_format);
  module().train();
  optimizer_ = make_optimizer(options_.optimizer, module().parameters(), options_.learning_rate,
                              options_.momentum, options_.weight_decay);
}

StepResult TrainStep::operator()(const torch::Tensor& input, const torch::Tensor& target) {
  // Both no-ops when the batch is already in place (the synthetic source makes it so).
  const torch::Tensor x = to_memory_format(input.to(device_, /*non_blocking=*/true), options_.memory_format);
  const torch::Tensor y = target.to(device_, /*non_blocking=*/true);

  optimizer_->zero_grad();
  torch::Tensor loss;
  {
    AutocastGuard autocast(device_.type(), autocast_dtype(options_.precision),
                           uses_autocast(options_.precision));
    const torch::Tensor output = model_.forward(x);
    loss = loss_(output, y);
  }
  scaler_.scale(loss).backward();
  if (options_.max_grad_norm > 0) {
    scaler_.unscale_(*optimizer_);
    torch::nn::utils::clip_grad_norm_(module().parameters(), options_.max_grad_norm);
  }
  const bool stepped = scaler_.step(*optimizer_);
  scaler_.update();

  ++steps_;
  if (!stepped) ++skipped_steps_;
  return {loss.detach(), stepped};
}

}  // namespace gpuperf
