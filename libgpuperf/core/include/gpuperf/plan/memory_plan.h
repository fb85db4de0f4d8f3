#pragma once
// Will it fit? The memory a training step needs on each GPU, term by term, from the model's
// facts, the precision, the optimizer and the strategy (data parallel, ZeRO-1/2/3 sharding,
// activation checkpointing, CPU offload of the optimizer), before anything runs. Torch-free
// arithmetic: the torch side supplies measured facts (the activation bytes per sample of a CNN)
// and checks the prediction against measured peaks. docs/memory.md gives the formulas and their
// sources.
//
//   gpuperf::MemoryPlanRequest request;
//   request.model.parameters = 10e9;
//   request.precision = gpuperf::TrainingPrecision::kAmpBf16;
//   request.strategy.gpus = 8;
//   request.strategy.zero = gpuperf::ZeroStage::kStage3;
//   const gpuperf::MemoryPlan plan = gpuperf::plan_memory(request);
//   std::cout << plan.total_bytes << " bytes per GPU, mostly " << plan.dominant().name << "\n";

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/base/choices.h"

namespace gpuperf {

/// How a training run keeps its weights, gradients and optimizer states.
enum class TrainingPrecision {
  kFp32,      ///< fp32 weights, gradients and states (also TF32 math: the same bytes)
  kAmpFp16,   ///< mixed precision: fp16 weights and gradients, fp32 master weights and states
  kAmpBf16,   ///< the same with bf16
  kPureBf16,  ///< bf16 weights, gradients and states; no fp32 master copy
};

/// The optimizer, for its state per parameter.
enum class PlanOptimizer {
  kSgd,       ///< SGD with momentum: one buffer
  kSgdPlain,  ///< SGD without momentum: no state
  kAdam,      ///< Adam: first and second moments
  kAdamW,     ///< AdamW: the same state as Adam
};

/// ZeRO stage (Rajbhandari et al. 2020): which model states are sharded over the GPUs.
enum class ZeroStage {
  kNone = 0,    ///< plain data parallel: every GPU holds everything
  kStage1 = 1,  ///< optimizer states (with the fp32 master weights) sharded
  kStage2 = 2,  ///< + gradients sharded
  kStage3 = 3,  ///< + weights sharded, gathered layer by layer (FSDP's FULL_SHARD)
};

/// "fp32", "amp-fp16", "amp-bf16", "pure-bf16".
[[nodiscard]] std::string to_string(TrainingPrecision value);
/// "sgd", "sgd-plain", "adam", "adamw".
[[nodiscard]] std::string to_string(PlanOptimizer value);
/// "none", "ZeRO-1", "ZeRO-2", "ZeRO-3".
[[nodiscard]] std::string to_string(ZeroStage value);

/// Parses "fp32", "amp-fp16", "amp-bf16", "pure-bf16", and the run precisions "tf32" (as fp32),
/// "fp16" and "bf16" (autocast keeps fp32 master weights: as amp-fp16 / amp-bf16). Throws
/// ConfigError naming `option` and the value.
[[nodiscard]] TrainingPrecision parse_training_precision(std::string_view text,
                                                         std::string_view option = "precision");
/// Parses "sgd" (with momentum, as the training programs mean it), "sgd-plain", "adam",
/// "adamw"; throws ConfigError naming `option` and the value.
[[nodiscard]] PlanOptimizer parse_plan_optimizer(std::string_view text,
                                                 std::string_view option = "optimizer");

/// The planner's optimizer of a training program's one (their SGD has momentum).
[[nodiscard]] PlanOptimizer plan_optimizer(OptimizerKind kind);

/// A decoder-only transformer's shape (GPT-2 style blocks), for its parameter count and its
/// activations (Korthikanti et al. 2022).
struct TransformerShape {
  std::int64_t layers = 0;    ///< L: transformer blocks
  std::int64_t hidden = 0;    ///< h: model width
  std::int64_t heads = 0;     ///< a: attention heads
  std::int64_t sequence = 0;  ///< s: tokens per sample
  std::int64_t vocab = 0;     ///< V: vocabulary size
  /// Flash (fused, tiled) attention: the a x s x s scores are never stored, only a logsumexp per
  /// row and head.
  bool flash_attention = true;

  /// 12 L h^2 + 13 L h (blocks: weights, biases, two layer norms) + V h + s h (token and
  /// position embeddings, the output layer tied to the token embedding) + 2 h (final norm).
  [[nodiscard]] double parameters() const;
  /// 12 h^2 + 13 h: one block's parameters.
  [[nodiscard]] double block_parameters() const;
};

/// What the planner knows about the model.
struct ModelFacts {
  /// Trainable parameters; NaN: from `transformer` (then required).
  double parameters = std::numeric_limits<double>::quiet_NaN();
  /// The transformer's shape, for its activations and its layer size; none for other models.
  std::optional<TransformerShape> transformer;
  /// Activation bytes per sample: the slope of the measured peak over the batch size (a CNN), or
  /// a count of what a known implementation keeps (the torch side's transformers, checkpointing
  /// included when the strategy asks for it); NaN: not known. Ignored when `transformer` is given.
  double activation_bytes_per_sample = std::numeric_limits<double>::quiet_NaN();
  /// How activation_bytes_per_sample was obtained, for the plan's reason; "" means a measured
  /// slope (then checkpointing is not modelled and the plan says so).
  std::string activation_source;
  /// Bytes of the 16-bit weight copies PyTorch's autocast makes and the backward pass keeps (the
  /// weights themselves stay fp32: plan such a run in fp32 precision with this term); 0: none.
  double cast_weight_bytes = 0;
  /// Parameters of the largest unit ZeRO-3 gathers at once (a block, or the embedding); NaN:
  /// the larger of a block and the embedding of `transformer`, else not counted.
  double largest_layer_parameters = std::numeric_limits<double>::quiet_NaN();
};

/// How the training is spread and what it trades for memory.
struct MemoryStrategy {
  int gpus = 1;                           ///< data-parallel ranks the model states are spread over
  ZeroStage zero = ZeroStage::kNone;      ///< what is sharded over the `gpus`
  bool activation_checkpointing = false;  ///< per block: keep block inputs, recompute the rest
  bool offload_optimizer =
      false;  ///< master weights and optimizer states in host memory (ZeRO-Offload)
  /// Host-device bandwidth, bytes/s per direction (measured: micro's host copy); NaN: offload
  /// transfer time not computed.
  double host_link_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
};

/// Memory that does not scale with the model, each a named term of the plan.
struct MemoryOverheads {
  /// CUDA context and loaded kernels (outside the caching allocator; nvidia-smi sees it).
  double cuda_context_bytes = 500e6;
  /// cuBLAS and cuDNN workspaces held through the caching allocator.
  double workspace_bytes = 256.0 * 1024 * 1024;
  /// The private memory pool of a captured CUDA graph (0: no graph).
  double cuda_graph_pool_bytes = 0;
  /// Reserved / allocated bytes of the caching allocator (>= 1): splitting and rounding of
  /// blocks; applied to everything the allocator holds.
  double fragmentation_factor = 1.1;
};

/// Everything plan_memory() needs.
struct MemoryPlanRequest {
  ModelFacts model;              ///< parameters, shape or measured slope
  std::int64_t micro_batch = 1;  ///< samples per GPU per forward/backward
  TrainingPrecision precision = TrainingPrecision::kAmpBf16;  ///< how the states are kept
  PlanOptimizer optimizer = PlanOptimizer::kAdam;             ///< its state per parameter
  /// Fused optimizer step (one kernel, no temporaries); false: foreach kernels, whose Adam step
  /// holds a temporary the size of one state buffer.
  bool fused_optimizer = true;
  /// Whether the gradients are live at the step's peak. True for a loop that zeroes them in
  /// place; false where they are freed between steps (PyTorch 2.x's zero_grad() sets them to
  /// None, a captured graph allocates them in backward): the peak is then the backward pass's
  /// start, before the first gradient exists, and the term counts none.
  bool gradients_live_at_peak = true;
  MemoryStrategy strategy;    ///< GPUs, ZeRO stage, checkpointing, offload
  MemoryOverheads overheads;  ///< context, workspaces, graph pool, fragmentation

  /// Throws ConfigError naming the first bad field (e.g. "MemoryStrategy::gpus") with its rule
  /// and value.
  void validate() const;
};

/// One term of a plan, per GPU.
struct MemoryTerm {
  std::string name;    ///< "weights", "activations", "CUDA context", ...
  double bytes = 0;    ///< per GPU
  std::string reason;  ///< one line: what is counted and the formula with its numbers
};

/// The memory one GPU needs for a training step, term by term.
struct MemoryPlan {
  std::vector<MemoryTerm> terms;  ///< device memory, in a fixed order (zero terms included)
  double total_bytes = 0;         ///< sum of the terms
  /// Host memory per GPU for offloaded states (0 without offload).
  double host_bytes = 0;
  /// Bytes each GPU moves over the host link per step with offload: gradients down, updated
  /// weights up (0 without offload).
  double host_transfer_bytes_per_step = 0;
  /// host_transfer_bytes_per_step / the host link bandwidth (NaN: no offload or no bandwidth).
  double host_transfer_seconds_per_step = std::numeric_limits<double>::quiet_NaN();
  /// Model facts the plan could not count (e.g. "activations: not counted ..."), one per line.
  std::vector<std::string> notes;

  /// The largest term.
  [[nodiscard]] const MemoryTerm& dominant() const;
  /// The term called `name`; throws std::out_of_range when there is none.
  [[nodiscard]] const MemoryTerm& term(std::string_view name) const;
};

/// The per-GPU plan of `request`; validates it first (ConfigError).
[[nodiscard]] MemoryPlan plan_memory(const MemoryPlanRequest& request);

/// Korthikanti et al. 2022, eq. (1): activation bytes of one transformer block for `micro_batch`
/// samples in 16-bit without recomputation, s b h (34 + 5 a s / h); with flash attention the
/// 5 a s^2 b bytes of scores, softmax and its dropout are replaced by a fp32 logsumexp per row
/// and head, 4 a s b.
[[nodiscard]] double transformer_block_activation_bytes(const TransformerShape& shape,
                                                        std::int64_t micro_batch);

}  // namespace gpuperf
