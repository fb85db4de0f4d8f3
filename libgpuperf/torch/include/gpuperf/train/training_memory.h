#pragma once
// Will this training step fit? The memory planner (plan/memory_plan.h) asked about a step as
// TrainStep runs it on CUDA, with the facts only the torch side knows: the model's parameters,
// what autocast keeps, and the activations (counted for gpuperf's transformers, a measured slope
// for other models). run_training() records the prediction beside the measured peaks.
//
//   gpuperf::TrainingMemoryInput input;
//   input.batch_size = 16;
//   input.sequence = 1024;                       // a Gpt or a Llama: activations counted
//   const auto p = gpuperf::predict_training_memory(*model.ptr(), step_options, input);
//   std::cout << p.allocated_bytes << " bytes at the peak, mostly " << p.plan.dominant().name;

#include <torch/nn/module.h>

#include <cstdint>
#include <limits>

#include "gpuperf/plan/memory_plan.h"
#include "gpuperf/train/train_step.h"

namespace gpuperf {

/// What predict_training_memory() needs beside the model and the step's options.
struct TrainingMemoryInput {
  std::int64_t batch_size = 1;            ///< samples per step (micro-batches: one step's share)
  std::int64_t sequence = 0;              ///< a language model's tokens per sample
  bool activation_checkpointing = false;  ///< a language model's blocks checkpointed
  int ranks = 1;  ///< data-parallel ranks (more than one: the all-reduce buckets' copy)
  /// Activation bytes per sample of a model that is not a Gpt or a Llama: the slope of the
  /// measured peak over the batch size (NaN: not counted; the prediction is then a lower bound).
  double activation_bytes_per_sample = std::numeric_limits<double>::quiet_NaN();
  /// The bytes a step holds beside its weights, states and activations (cuDNN's and cuBLAS's
  /// workspaces on every stream the step runs on), measured; NaN: the planner's default.
  double workspace_bytes = std::numeric_limits<double>::quiet_NaN();
};

/// A predicted step, as the caching allocator will see it.
struct TrainingMemoryPrediction {
  MemoryPlan plan;             ///< every term, per GPU
  double allocated_bytes = 0;  ///< the terms the allocator holds, fragmentation not added
  double reserved_bytes = 0;   ///< allocated_bytes x the plan's fragmentation factor
};

/// Samples per forward/backward pass of a step of `batch_size` samples split into
/// `accumulation_steps` micro-batches (the largest chunk, as TrainStep splits it; at least 1).
[[nodiscard]] std::int64_t micro_batch_size(std::int64_t batch_size, int accumulation_steps);

/// The plan of one TrainStep step of `model` under `options` on one GPU: weights, gradients and
/// optimizer states from the parameters (autocast keeps them in fp32 and adds 16-bit copies of
/// the weights; the fused or foreach optimizer step), activations, workspaces and fragmentation
/// at the planner's defaults. Throws ConfigError for a bad input.
[[nodiscard]] TrainingMemoryPrediction predict_training_memory(const torch::nn::Module& model,
                                                               const TrainStepOptions& options,
                                                               const TrainingMemoryInput& input);

}  // namespace gpuperf
