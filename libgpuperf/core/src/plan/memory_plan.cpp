// The memory planner's arithmetic. Every term carries its formula with the numbers put in, so
// that a plan can be checked by hand (docs/memory.md).
#include "gpuperf/plan/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
namespace {

// Bytes per parameter of each model state under a precision. The mixed-precision layout is the
// one the ZeRO paper counts (Rajbhandari et al. 2020, §3.1): 16-bit weights and gradients (2 + 2
// bytes) and, as "optimizer states", an fp32 master copy (4) with Adam's fp32 moments (4 + 4):
// 16 bytes per parameter. PyTorch's autocast keeps fp32 weights and gradients instead (4 + 4,
// the weights being the master copy): the same 16 bytes split differently.
struct StateBytes {
  double weight = 4;
  double gradient = 4;
  double master = 0;
  double state_element = 4;  // one optimizer buffer's element
};

StateBytes state_bytes(TrainingPrecision p) {
  switch (p) {
    case TrainingPrecision::kFp32:
      return {4, 4, 0, 4};
    case TrainingPrecision::kAmpFp16:
    case TrainingPrecision::kAmpBf16:
      return {2, 2, 4, 4};
    case TrainingPrecision::kPureBf16:
      // torch.optim creates its buffers like the parameters: bf16 moments.
      return {2, 2, 0, 2};
  }
  return {};
}

int buffers_of(PlanOptimizer o) {
  switch (o) {
    case PlanOptimizer::kSgdPlain:
      return 0;
    case PlanOptimizer::kSgd:
      return 1;
    case PlanOptimizer::kAdam:
    case PlanOptimizer::kAdamW:
      return 2;
  }
  return 0;
}

std::string num(double v) { return format_number(v, 6); }

// "x B x P params / N GPUs": the per-parameter arithmetic of a model-state term.
std::string per_param(double bytes_per_param, double params, int shards, const char* why) {
  std::string text = num(bytes_per_param) + " B x " + num(params) + " params";
  if (shards > 1) text += " / " + std::to_string(shards) + " GPUs";
  return text + " (" + why + ")";
}

void add(MemoryPlan& plan, std::string name, double bytes, std::string reason) {
  plan.terms.push_back({std::move(name), bytes, std::move(reason)});
}

double parameters_of(const ModelFacts& m) {
  return std::isnan(m.parameters) ? m.transformer->parameters() : m.parameters;
}

// Korthikanti et al. 2022 count the embedding, the final norm, the output layer and the fp32
// logits of the loss beside the blocks: 4 s b h + 4 s b V.
double transformer_head_bytes(const TransformerShape& t, std::int64_t b) {
  const double sb = static_cast<double>(t.sequence) * static_cast<double>(b);
  return 4 * sb * static_cast<double>(t.hidden) + 4 * sb * static_cast<double>(t.vocab);
}

void add_activations(MemoryPlan& plan, const MemoryPlanRequest& r) {
  const MemoryStrategy& st = r.strategy;
  if (r.model.transformer) {
    const TransformerShape& t = *r.model.transformer;
    const double L = static_cast<double>(t.layers);
    const double s = static_cast<double>(t.sequence);
    const double h = static_cast<double>(t.hidden);
    const double b = static_cast<double>(r.micro_batch);
    const double block = transformer_block_activation_bytes(t, r.micro_batch);
    const double head = transformer_head_bytes(t, r.micro_batch);
    const std::string block_formula =
        t.flash_attention ? "s b h 34 + 4 a s b (flash attention: no a s^2 b scores)"
                          : "s b h (34 + 5 a s / h)";
    const std::string head_text =
        " + 4 s b h + 4 s b V (embedding, output layer, fp32 logits) " + format_gb(head);
    if (st.activation_checkpointing) {
      // Full recomputation per block: only each block's input (2 s b h in 16-bit) is kept; the
      // backward pass recomputes one block at a time, so one block's working set is live.
      const double inputs = L * 2 * s * b * h;
      add(plan, "activations", inputs + block + head,
          "checkpointed per block (Korthikanti et al. 2022): L x 2 s b h block inputs " +
              format_gb(inputs) + " + one block recomputed, " + block_formula + " " +
              format_gb(block) + head_text);
    } else {
      add(plan, "activations", L * block + head,
          "Korthikanti et al. 2022, 16-bit, no recomputation: L x " + block_formula + " = " +
              num(L) + " x " + format_gb(block) + head_text);
    }
    return;
  }
  if (!std::isnan(r.model.activation_bytes_per_sample)) {
    const double bytes = r.model.activation_bytes_per_sample * static_cast<double>(r.micro_batch);
    const std::string& source = r.model.activation_source;
    add(plan, "activations", bytes,
        (source.empty() ? std::string("measured slope ") : source + ": ") +
            num(r.model.activation_bytes_per_sample) + " B/sample x micro-batch " +
            std::to_string(r.micro_batch));
    if (st.activation_checkpointing && source.empty()) {
      plan.notes.emplace_back(
          "activations: checkpointing is not modelled for a measured slope; counted as measured "
          "without it");
    }
    return;
  }
  add(plan, "activations", 0, "not counted: no transformer shape or bytes per sample given");
  plan.notes.emplace_back(
      "activations: not counted (give the transformer shape or the measured activation bytes "
      "per sample); the plan is a lower bound");
}

// The model states, the optimizer step's temporaries and the communication buffers.
void add_model_states(MemoryPlan& plan, const MemoryPlanRequest& r, double params) {
  const StateBytes sb = state_bytes(r.precision);
  const MemoryStrategy& st = r.strategy;
  const int n = st.gpus;
  const int stage = static_cast<int>(st.zero);
  const int w_shards = stage >= 3 ? n : 1;
  const int g_shards = stage >= 2 ? n : 1;
  const int s_shards = stage >= 1 ? n : 1;
  const int buffers = buffers_of(r.optimizer);
  const double state_per_param = buffers * sb.state_element;

  add(plan, "weights", sb.weight * params / w_shards,
      per_param(sb.weight, params, w_shards,
                stage >= 3 ? "ZeRO-3 shards the weights" : "every GPU holds all weights"));
  if (r.gradients_live_at_peak) {
    add(plan, "gradients", sb.gradient * params / g_shards,
        per_param(sb.gradient, params, g_shards,
                  stage >= 2 ? "ZeRO-2/3 shard the gradients" : "one per weight"));
  } else {
    add(plan, "gradients", 0,
        "none at the peak: freed between steps, and the peak (the backward pass's start) comes "
        "before the first one is written");
  }
  const char* where = st.offload_optimizer ? "offloaded to host memory" : "";
  const double master = sb.master * params / s_shards;
  const double states = state_per_param * params / s_shards;
  if (st.offload_optimizer) {
    // ZeRO-Offload (Ren et al. 2021): the optimizer step runs on the host, which keeps the fp32
    // master weights (a copy of the weights when they are not 16-bit) and the states.
    const double host_weight = sb.master > 0 ? sb.master : sb.weight;
    plan.host_bytes = (host_weight + state_per_param) * params / s_shards;
    plan.host_transfer_bytes_per_step = (sb.gradient + sb.weight) * params / s_shards;
    if (st.host_link_bytes_per_s > 0) {
      plan.host_transfer_seconds_per_step =
          plan.host_transfer_bytes_per_step / st.host_link_bytes_per_s;
    }
    add(plan, "master weights", 0, std::string("none on the GPU: ") + where);
    add(plan, "optimizer states", 0, std::string("none on the GPU: ") + where);
    add(plan, "optimizer step temporaries", 0, "none on the GPU: the step runs on the host");
  } else {
    add(plan, "master weights", master,
        sb.master > 0 ? per_param(sb.master, params, s_shards, "fp32 copy updated by the step")
                      : std::string("none: the weights are updated in their own precision"));
    add(plan, "optimizer states", states,
        buffers == 0 ? std::string("none: SGD without momentum")
                     : per_param(state_per_param, params, s_shards,
                                 buffers == 2 ? "Adam's first and second moments"
                                              : "SGD's momentum buffer"));
    // torch.optim's foreach Adam computes sqrt(v) into a new tensor list before the update: one
    // state buffer's size, live during the step. The fused kernel and SGD's in-place foreach
    // update allocate nothing of that size.
    const bool temp = !r.fused_optimizer && buffers == 2;
    add(plan, "optimizer step temporaries", temp ? sb.state_element * params / s_shards : 0,
        temp ? per_param(sb.state_element, params, s_shards, "foreach Adam's sqrt(v) temporary")
             : std::string(r.fused_optimizer ? "none: fused step" : "none: in-place SGD step"));
  }
  const bool buckets = n > 1 && st.zero == ZeroStage::kNone;
  add(plan, "gradient buckets", buckets ? sb.gradient * params : 0,
      buckets ? per_param(sb.gradient, params, 1,
                          "the all-reduce buckets hold a flat copy of the gradients, as in "
                          "DataParallelSync and PyTorch DDP without gradient_as_bucket_view")
              : std::string("none: no all-reduce of whole gradients"));
  double gathered = 0;
  std::string gathered_reason = "none: weights are not sharded";
  if (stage >= 3 && n > 1) {
    double unit = r.model.largest_layer_parameters;
    if (std::isnan(unit) && r.model.transformer) {
      const TransformerShape& t = *r.model.transformer;
      unit = std::max(t.block_parameters(),
                      static_cast<double>(t.vocab) * static_cast<double>(t.hidden));
    }
    if (std::isnan(unit)) {
      gathered_reason = "not counted: the largest layer is not known";
      plan.notes.emplace_back(
          "ZeRO-3: the gathered layers are not counted (give the transformer shape)");
    } else {
      // The layer being computed and the next one prefetched, in full, and the full gradients
      // of one layer before they are reduce-scattered.
      gathered = (2 * sb.weight + sb.gradient) * unit;
      gathered_reason = "(2 x " + num(sb.weight) + " B + " + num(sb.gradient) + " B) x " +
                        num(unit) +
                        " params of the largest layer (computed + prefetched weights, its full "
                        "gradients before reduce-scatter)";
    }
  }
  add(plan, "ZeRO-3 gathered layers", gathered, gathered_reason);
  add(plan, "autocast weight copies", r.model.cast_weight_bytes,
      r.model.cast_weight_bytes > 0
          ? "given: " + format_gb(r.model.cast_weight_bytes) +
                " of 16-bit weight copies kept from the forward to the backward pass"
          : std::string("none: no autocast copies given"));
}

void add_overheads(MemoryPlan& plan, const MemoryOverheads& o) {
  add(plan, "cuDNN/cuBLAS workspaces", o.workspace_bytes, "given: " + format_gb(o.workspace_bytes));
  add(plan, "CUDA graph pool", o.cuda_graph_pool_bytes,
      o.cuda_graph_pool_bytes > 0 ? "given: " + format_gb(o.cuda_graph_pool_bytes)
                                  : std::string("none: no captured graph"));
  double allocated = 0;
  for (const auto& t : plan.terms) allocated += t.bytes;
  add(plan, "allocator fragmentation", (o.fragmentation_factor - 1) * allocated,
      "(" + num(o.fragmentation_factor) + " - 1) x " + format_gb(allocated) +
          " held by the caching allocator (reserved / allocated)");
  // Outside the allocator: not multiplied by the fragmentation factor.
  add(plan, "CUDA context", o.cuda_context_bytes, "given: " + format_gb(o.cuda_context_bytes));
}

void require_count(std::int64_t value, const char* field) {
  require_setting(value >= 1 && value <= (std::int64_t{1} << 40), field, value, ">= 1 and <= 2^40");
}

void require_bytes(double value, const char* field) {
  require_setting(value >= 0 && value <= 1e18, field, value, ">= 0 and <= 1e18 bytes");
}

}  // namespace

std::string to_string(TrainingPrecision value) {
  switch (value) {
    case TrainingPrecision::kFp32:
      return "fp32";
    case TrainingPrecision::kAmpFp16:
      return "amp-fp16";
    case TrainingPrecision::kAmpBf16:
      return "amp-bf16";
    case TrainingPrecision::kPureBf16:
      return "pure-bf16";
  }
  return "?";
}

std::string to_string(PlanOptimizer value) {
  switch (value) {
    case PlanOptimizer::kSgd:
      return "sgd";
    case PlanOptimizer::kSgdPlain:
      return "sgd-plain";
    case PlanOptimizer::kAdam:
      return "adam";
    case PlanOptimizer::kAdamW:
      return "adamw";
  }
  return "?";
}

std::string to_string(ZeroStage value) {
  return value == ZeroStage::kNone ? "none" : "ZeRO-" + std::to_string(static_cast<int>(value));
}

PlanOptimizer plan_optimizer(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return PlanOptimizer::kSgd;
    case OptimizerKind::kAdamW:
      return PlanOptimizer::kAdamW;
    case OptimizerKind::kAdam:
      break;
  }
  return PlanOptimizer::kAdam;
}

TrainingPrecision parse_training_precision(std::string_view text, std::string_view option) {
  if (text == "fp32" || text == "tf32") return TrainingPrecision::kFp32;
  if (text == "amp-fp16" || text == "fp16") return TrainingPrecision::kAmpFp16;
  if (text == "amp-bf16" || text == "bf16") return TrainingPrecision::kAmpBf16;
  if (text == "pure-bf16") return TrainingPrecision::kPureBf16;
  throw ConfigError(std::string(option),
                    "unknown value '" + std::string(text) +
                        "' (choose fp32, amp-fp16, amp-bf16 or pure-bf16; tf32, fp16 and bf16 "
                        "as the training programs run them)");
}

PlanOptimizer parse_plan_optimizer(std::string_view text, std::string_view option) {
  if (text == "sgd") return PlanOptimizer::kSgd;
  if (text == "sgd-plain") return PlanOptimizer::kSgdPlain;
  if (text == "adam") return PlanOptimizer::kAdam;
  if (text == "adamw") return PlanOptimizer::kAdamW;
  throw ConfigError(std::string(option), "unknown value '" + std::string(text) +
                                             "' (choose sgd, sgd-plain, adam or adamw)");
}

double TransformerShape::block_parameters() const {
  const double h = static_cast<double>(hidden);
  return 12 * h * h + 13 * h;
}

double TransformerShape::parameters() const {
  const double h = static_cast<double>(hidden);
  return static_cast<double>(layers) * block_parameters() +
         (static_cast<double>(vocab) + static_cast<double>(sequence)) * h + 2 * h;
}

double transformer_block_activation_bytes(const TransformerShape& shape, std::int64_t micro_batch) {
  const double s = static_cast<double>(shape.sequence);
  const double b = static_cast<double>(micro_batch);
  const double h = static_cast<double>(shape.hidden);
  const double a = static_cast<double>(shape.heads);
  // 34 s b h: the 16-bit inputs of every matmul, norm and activation function, and 1-byte
  // dropout masks. 5 a s^2 b: the attention scores' softmax (2), its dropout mask (1) and the
  // dropped-out probabilities (2). Flash attention recomputes scores tile by tile in backward
  // from Q, K and V (already in the 34) and keeps only an fp32 logsumexp per row and head.
  if (shape.flash_attention) return s * b * h * 34 + 4 * a * s * b;
  return s * b * h * (34 + 5 * a * s / h);
}

void MemoryPlanRequest::validate() const {
  const bool has_params = !std::isnan(model.parameters);
  if (has_params) {
    require_setting(model.parameters > 0 && model.parameters <= 1e15, "ModelFacts::parameters",
                    model.parameters, "> 0 and <= 1e15");
  }
  if (model.transformer) {
    const TransformerShape& t = *model.transformer;
    require_count(t.layers, "TransformerShape::layers");
    require_count(t.hidden, "TransformerShape::hidden");
    require_count(t.heads, "TransformerShape::heads");
    require_count(t.sequence, "TransformerShape::sequence");
    require_count(t.vocab, "TransformerShape::vocab");
    if (t.hidden % t.heads != 0) {
      throw ConfigError(
          "TransformerShape::heads",
          "must divide {hidden} " + std::to_string(t.hidden) + ", got " + std::to_string(t.heads));
    }
  } else if (!has_params) {
    throw ConfigError("ModelFacts::parameters",
                      "give a parameter count or a transformer shape (neither given)");
  }
  if (!std::isnan(model.activation_bytes_per_sample)) {
    require_bytes(model.activation_bytes_per_sample, "ModelFacts::activation_bytes_per_sample");
  }
  require_bytes(model.cast_weight_bytes, "ModelFacts::cast_weight_bytes");
  if (!std::isnan(model.largest_layer_parameters)) {
    require_setting(model.largest_layer_parameters > 0 && model.largest_layer_parameters <= 1e15,
                    "ModelFacts::largest_layer_parameters", model.largest_layer_parameters,
                    "> 0 and <= 1e15");
  }
  require_count(micro_batch, "MemoryPlanRequest::micro_batch");
  require_setting(strategy.gpus >= 1 && strategy.gpus <= 4096, "MemoryStrategy::gpus",
                  strategy.gpus, "1..4096");
  if (!std::isnan(strategy.host_link_bytes_per_s)) {
    require_setting(strategy.host_link_bytes_per_s > 0 && strategy.host_link_bytes_per_s <= 1e15,
                    "MemoryStrategy::host_link_bytes_per_s", strategy.host_link_bytes_per_s,
                    "> 0 and <= 1e15 bytes/s");
  }
  require_bytes(overheads.cuda_context_bytes, "MemoryOverheads::cuda_context_bytes");
  require_bytes(overheads.workspace_bytes, "MemoryOverheads::workspace_bytes");
  require_bytes(overheads.cuda_graph_pool_bytes, "MemoryOverheads::cuda_graph_pool_bytes");
  require_setting(overheads.fragmentation_factor >= 1 && overheads.fragmentation_factor <= 10,
                  "MemoryOverheads::fragmentation_factor", overheads.fragmentation_factor,
                  ">= 1 and <= 10");
}

const MemoryTerm& MemoryPlan::dominant() const {
  if (terms.empty()) throw std::out_of_range("memory plan: no terms");
  return *std::max_element(terms.begin(), terms.end(),
                           [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
}

const MemoryTerm& MemoryPlan::term(std::string_view name) const {
  for (const auto& t : terms) {
    if (t.name == name) return t;
  }
  throw std::out_of_range("memory plan: no term '" + std::string(name) + "'");
}

MemoryPlan plan_memory(const MemoryPlanRequest& request) {
  request.validate();
  MemoryPlan plan;
  const double params = parameters_of(request.model);
  add_model_states(plan, request, params);
  add_activations(plan, request);
  add_overheads(plan, request.overheads);
  for (const auto& t : plan.terms) plan.total_bytes += t.bytes;
  return plan;
}

}  // namespace gpuperf
