// predict_training_memory(): the planner's request for a step as TrainStep runs it.
#include "gpuperf/train/training_memory.h"

#include <algorithm>
#include <cmath>

#include "../compat.h"
#include "gpuperf/base/error.h"
#include "gpuperf/device/torch_choices.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/transformer.h"

namespace gpuperf {
namespace {

PlanOptimizer plan_optimizer(const TrainStepOptions& o) {
  switch (o.optimizer) {
    case OptimizerKind::kSgd:
      return o.momentum > 0 ? PlanOptimizer::kSgd : PlanOptimizer::kSgdPlain;
    case OptimizerKind::kAdam:
      return PlanOptimizer::kAdam;
    case OptimizerKind::kAdamW:
      return PlanOptimizer::kAdamW;
  }
  return PlanOptimizer::kAdam;
}

}  // namespace

std::int64_t micro_batch_size(std::int64_t batch_size, int accumulation_steps) {
  const std::int64_t steps = std::max(1, accumulation_steps);
  return std::max<std::int64_t>(1, (batch_size + steps - 1) / steps);
}

TrainingMemoryPrediction predict_training_memory(const torch::nn::Module& model,
                                                 const TrainStepOptions& options,
                                                 const TrainingMemoryInput& input) {
  require_setting(input.batch_size >= 1, "TrainingMemoryInput::batch_size", input.batch_size,
                  ">= 1");
  MemoryPlanRequest request;
  const auto parameters = static_cast<double>(count_parameters(model));
  request.model.parameters = parameters;
  // Autocast keeps the weights, their gradients and the optimizer's states in fp32 (the fp32
  // layout of the planner) and casts the weights to 16 bits as the layers use them.
  request.precision = TrainingPrecision::kFp32;
  request.optimizer = plan_optimizer(options);
  request.fused_optimizer = options.fused_optimizer;
  // Gradient accumulation: the activations of one micro-batch at a time.
  request.micro_batch = micro_batch_size(input.batch_size, options.accumulation_steps);
  // TrainStep frees the gradients between steps where the optimizer's zero_grad() sets them to
  // None (the fused optimizer always, torch::optim on LibTorch 2.x) and a captured graph writes
  // them afresh in each backward pass; a later micro-batch's backward pass starts with the
  // earlier ones' gradients held.
  request.gradients_live_at_peak =
      request.micro_batch < input.batch_size ||
      !(options.fused_optimizer || options.cuda_graph || compat::kZeroGradSetsNone);
  request.strategy.activation_checkpointing = input.activation_checkpointing;
  request.strategy.gpus = input.ranks;
  if (const auto counted = transformer_activations(model, input.sequence, options.precision,
                                                   input.activation_checkpointing)) {
    require_setting(input.sequence >= 1, "TrainingMemoryInput::sequence", input.sequence,
                    ">= 1 for a language model");
    request.model.activation_bytes_per_sample = counted->bytes_per_sample;
    request.model.activation_source = counted->formula;
    request.model.cast_weight_bytes = counted->cast_weight_bytes;
  } else {
    if (input.activation_checkpointing) {
      throw ConfigError("TrainingMemoryInput::activation_checkpointing", "true",
                        "applies to gpuperf's language models (Gpt, Llama)");
    }
    request.model.activation_bytes_per_sample = input.activation_bytes_per_sample;
    // Every weight cast once, and kept until the backward pass has used it.
    request.model.cast_weight_bytes = uses_autocast(options.precision) ? 2 * parameters : 0;
  }
  if (!std::isnan(input.workspace_bytes)) {
    require_setting(input.workspace_bytes >= 0, "TrainingMemoryInput::workspace_bytes",
                    input.workspace_bytes, ">= 0");
    request.overheads.workspace_bytes = input.workspace_bytes;
  }
  TrainingMemoryPrediction out;
  out.plan = plan_memory(request);
  const double outside = request.overheads.cuda_context_bytes;
  const double fragmentation = out.plan.term("allocator fragmentation").bytes;
  out.allocated_bytes = out.plan.total_bytes - outside - fragmentation;
  out.reserved_bytes = out.allocated_bytes * request.overheads.fragmentation_factor;
  return out;
}

}  // namespace gpuperf
