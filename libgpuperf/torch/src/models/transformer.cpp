// GPT-2 and the Llama-style decoder (models/transformer.h).
#include "gpuperf/models/transformer.h"

#include <ATen/ops/linear.h>
#include <c10/core/GradMode.h>
#include <torch/autograd.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "../compat.h"
#include "gpuperf/amp/autocast.h"
#include "gpuperf/base/error.h"
#include "gpuperf/models/fusion.h"
#include "gpuperf/optim/weight_copies.h"
#include "models/heads.h"

#if GPUPERF_HAS_SDPA
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#endif

namespace gpuperf {
namespace {

void require_positive(std::int64_t value, const char* field) {
  require_setting(value > 0, field, value, "> 0");
}

torch::nn::Linear linear(std::int64_t in, std::int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// x through a linear layer without a bias (Llama's) as PyTorch's nn.Linear runs it, through
// linear_activation(): on CUDA the weight's gradient in float32 from the GEMM. (LibTorch's own
// Linear::forward runs matmul and then `+= bias`: with a bias under autocast, a float32 bias
// added in place to a 16-bit output, a separate strided kernel per layer, 6 ms of a GPT-2 124M
// step on an H200.) `cast`: null, or the weight in the compute dtype.
torch::Tensor project(const torch::nn::Linear& layer, const torch::Tensor& x,
                      const torch::Tensor* cast = nullptr) {
  return linear_activation(x, layer->weight, layer->bias, Activation::kNone,
                           cast != nullptr ? CastLinear{*cast, {}} : CastLinear{});
}

// A layer's weight and bias already cast (`cast`: null, or the two in the compute dtype).
CastLinear cast_pair(const torch::Tensor* cast) {
  return cast != nullptr ? CastLinear{cast[0], cast[1]} : CastLinear{};
}

// A linear layer with a bias (GPT-2's) and the activation after it: linear_activation(), whose
// bias gradient gpuperf's kernels take on CUDA. `cast`: null, or the weight and bias in the
// compute dtype.
torch::Tensor with_bias(const torch::nn::Linear& layer, const torch::Tensor& x,
                        Activation activation = Activation::kNone,
                        const torch::Tensor* cast = nullptr) {
  return linear_activation(x, layer->weight, layer->bias, activation, cast_pair(cast));
}

// Every block's linear_parameters() in the autocast dtype, then `output` (the output layer's
// weight, a tied embedding's or its own): the copies the optimizer keeps where
// there are (WeightCopies), else cast in one kernel (cast_weights; one launch per 48 tensors
// where each layer's cast is a kernel of its own), without a gradient of their own:
// linear_activation sends each layer's gradients to its float32 parameters. Empty off CUDA, without
// autocast, without gradients (inference frees each layer's copy after its product; casting all at
// once would hold every copy through the pass), or where that kernel does not apply.
template <typename Block>
std::vector<torch::Tensor> cast_for_training(const torch::nn::ModuleList& blocks,
                                             const torch::Device& device,
                                             const torch::Tensor& output) {
  if (!device.is_cuda() || !compat::autocast_enabled(c10::DeviceType::CUDA) ||
      !c10::GradMode::is_enabled()) {
    return {};
  }
  std::vector<torch::Tensor> parameters;
  for (const auto& block : *blocks) {
    const auto own = block->as<Block>()->linear_parameters();
    parameters.insert(parameters.end(), own.begin(), own.end());
  }
  parameters.push_back(output);
  const c10::ScalarType dtype = compat::autocast_dtype(c10::DeviceType::CUDA);
  // Copies an optimizer keeps current (TrainStep's, under WeightCopies::Scope): no cast at all.
  if (WeightCopies* copies = WeightCopies::current()) {
    std::vector<torch::Tensor> kept = copies->get(parameters, dtype);
    if (!kept.empty()) return kept;
  }
  if (!cast_kernel_applies(parameters, dtype)) return {};
  const torch::NoGradGuard no_grad;
  return cast_weights(parameters, dtype);
}

// N(0, std) weights and zero biases for every Linear and Embedding below `module`.
void init_normal(torch::nn::Module& module, double std) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters()) {
    const std::string& name = p.key();
    if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
      p.value().zero_();
    } else if (p.value().dim() == 2) {
      p.value().normal_(0, std);
    }
  }
}

#if !GPUPERF_HAS_SDPA
// q, k, v [batch, heads, sequence, head width] -> the same for q, attention over earlier
// positions only, softmax in float32 as scaled_dot_product_attention's math path does.
torch::Tensor written_out_attention(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v) {
  const std::int64_t t = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
  const torch::Tensor later =
      torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu(1);
  scores = scores.masked_fill(later, -std::numeric_limits<double>::infinity());
  const torch::ScalarType at_least_float = at::promote_types(q.scalar_type(), torch::kFloat);
  return torch::matmul(torch::softmax(scores, -1, at_least_float).to(v.scalar_type()), v);
}
#endif

// Grouped-query attention's keys or values [batch, kv heads, sequence, head width] widened to
// `heads`: kv head i serves query heads i x heads / kv heads onwards.
torch::Tensor widen_heads(const torch::Tensor& t, std::int64_t heads) {
  const std::int64_t repeat = heads / t.size(1);
  return t.unsqueeze(2)
      .expand({t.size(0), t.size(1), repeat, t.size(2), t.size(3)})
      .reshape({t.size(0), heads, t.size(2), t.size(3)});
}

#if GPUPERF_HAS_SDPA
// sdp::SDPBackend's value for these inputs (stable since 2.0: cudnn from 2.2, overrideable from
// 2.5), asked as causal_attention asks.
std::int64_t sdp_choice(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
#if GPUPERF_HAS_SDPA_GQA
  return at::_fused_sdp_choice(q, k, v, {}, 0.0, /*is_causal=*/true, c10::nullopt,
                               /*enable_gqa=*/k.size(1) != q.size(1));
#else
  return at::_fused_sdp_choice(q, k, v, {}, 0.0, /*is_causal=*/true);
#endif
}

constexpr std::int64_t kSdpMath = 0;
#endif

using detail::merge_heads;

void check_ids(const torch::Tensor& ids, std::int64_t context, const char* model) {
  if (ids.dim() != 2 || ids.scalar_type() != torch::kLong) {
    throw ConfigError(std::string(model) + ": token ids must be a [batch, sequence] int64 tensor");
  }
  if (ids.size(1) > context || ids.size(1) < 1) {
    throw ConfigError(std::string(model) + ": a sequence of " + std::to_string(ids.size(1)) +
                      " tokens does not fit the context of " + std::to_string(context));
  }
}

// Per-block activation checkpointing, the reentrant scheme of torch.utils.checkpoint: the
// forward pass runs the block without recording it (LibTorch runs a custom function's forward
// without gradients) and keeps only its input; the backward pass runs the block again with
// gradients and back-propagates through the rerun, which accumulates the block's parameter
// gradients and yields the input's. Autocast's state is thread-local and the backward pass runs
// on autograd's threads: the forward's state is kept and restored for the rerun.
// A block's forward pass as a plain function of the block: what a checkpointed block reruns.
using BlockForward = torch::Tensor (*)(torch::nn::Module& block, const torch::Tensor& x,
                                       const torch::Tensor& cos, const torch::Tensor& sin);

struct CheckpointedBlock : public torch::autograd::Function<CheckpointedBlock> {
  // What the rerun needs beside the input: the block, its forward pass and the rotary tables
  // (none for GPT-2). The block outlives the graph: it is the model's.
  struct Call {
    torch::nn::Module* block;
    BlockForward forward;
    torch::Tensor cos, sin;
  };

  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const Call* call) {
    const c10::DeviceType device = x.device().type();
    ctx->saved_data["block"] =
        static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(call->block));
    ctx->saved_data["forward"] =
        static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(call->forward));
    ctx->saved_data["autocast"] = compat::autocast_enabled(device);
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(compat::autocast_dtype(device));
    if (call->cos.defined()) {
      ctx->saved_data["cos"] = call->cos;
      ctx->saved_data["sin"] = call->sin;
    }
    ctx->save_for_backward({x});
    return call->forward(*call->block, x, call->cos, call->sin);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    // NOLINTBEGIN(performance-no-int-to-ptr): saved_data holds IValues; forward stored the pointers
    auto* block = reinterpret_cast<torch::nn::Module*>(
        static_cast<std::intptr_t>(ctx->saved_data["block"].toInt()));
    const auto forward = reinterpret_cast<BlockForward>(
        static_cast<std::intptr_t>(ctx->saved_data["forward"].toInt()));
    // NOLINTEND(performance-no-int-to-ptr)
    const bool rotary = ctx->saved_data.count("cos") > 0;
    const torch::Tensor cos = rotary ? ctx->saved_data["cos"].toTensor() : torch::Tensor();
    const torch::Tensor sin = rotary ? ctx->saved_data["sin"].toTensor() : torch::Tensor();
    const torch::Tensor input = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    torch::Tensor output;
    {
      torch::AutoGradMode with_gradients(true);
      AutocastGuard autocast(input.device().type(),
                             static_cast<c10::ScalarType>(ctx->saved_data["dtype"].toInt()),
                             ctx->saved_data["autocast"].toBool(), /*cache_enabled=*/false);
      output = forward(*block, input, cos, sin);
    }
    torch::autograd::backward({output}, {grads[0]});
    return {input.grad(), torch::Tensor()};
  }
};

torch::Tensor run_checkpointed(torch::nn::Module& block, BlockForward forward,
                               const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin) {
  const CheckpointedBlock::Call call{&block, forward, cos, sin};
  return CheckpointedBlock::apply(x, &call);
}

}  // namespace

bool set_activation_checkpointing(torch::nn::Module& model, bool on) {
  if (auto* gpt = dynamic_cast<GptImpl*>(&model)) {
    gpt->set_checkpointing(on);
    return true;
  }
  if (auto* llama = dynamic_cast<LlamaImpl*>(&model)) {
    llama->set_checkpointing(on);
    return true;
  }
  return false;
}

void GptOptions::validate() const {
  require_positive(vocabulary, "GptOptions::vocabulary");
  require_positive(context, "GptOptions::context");
  require_positive(layers, "GptOptions::layers");
  require_positive(heads, "GptOptions::heads");
  require_positive(width, "GptOptions::width");
  require_setting(width % heads == 0, "GptOptions::heads", heads, "a divisor of {width}");
}

std::int64_t parameter_count(const GptOptions& o) {
  const std::int64_t c = o.width;
  const std::int64_t block = 4 * c                // two LayerNorms, weight and bias
                             + c * 3 * c + 3 * c  // q, k, v
                             + c * c + c          // attention output
                             + c * 4 * c + 4 * c  // MLP in
                             + 4 * c * c + c;     // MLP out
  return o.vocabulary * c + o.context * c + o.layers * block + 2 * c;
}

void LlamaOptions::validate() const {
  require_positive(vocabulary, "LlamaOptions::vocabulary");
  require_positive(context, "LlamaOptions::context");
  require_positive(layers, "LlamaOptions::layers");
  require_positive(heads, "LlamaOptions::heads");
  require_positive(kv_heads, "LlamaOptions::kv_heads");
  require_positive(width, "LlamaOptions::width");
  require_positive(hidden, "LlamaOptions::hidden");
  require_setting(width % heads == 0 && (width / heads) % 2 == 0, "LlamaOptions::heads", heads,
                  "a divisor of {width} leaving an even head width");
  require_setting(heads % kv_heads == 0, "LlamaOptions::kv_heads", kv_heads,
                  "a divisor of {heads}");
  require_setting(rope_theta > 0 && std::isfinite(rope_theta), "LlamaOptions::rope_theta",
                  rope_theta, "finite and > 0");
  require_setting(norm_eps > 0 && std::isfinite(norm_eps), "LlamaOptions::norm_eps", norm_eps,
                  "finite and > 0");
}

std::int64_t parameter_count(const LlamaOptions& o) {
  const std::int64_t kv_width = o.width / o.heads * o.kv_heads;
  const std::int64_t block = 2 * o.width                                       // two RMSNorms
                             + 2 * o.width * o.width + 2 * o.width * kv_width  // q, o; k, v
                             + 3 * o.width * o.hidden;                         // SwiGLU
  return o.vocabulary * o.width * (o.tie_embeddings ? 1 : 2) + o.layers * block + o.width;
}

bool causal_attention_widens(const torch::Tensor& q, const torch::Tensor& k) {
#if GPUPERF_HAS_SDPA_GQA
  // A fused kernel reads the shared heads in place: no widened copies forward, no sums of their
  // gradients backward. The math path widens them.
  return k.size(1) != q.size(1) && sdp_choice(q, k, k) == kSdpMath;
#else
  return k.size(1) != q.size(1);
#endif
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v) {
  const std::int64_t heads = q.size(1);
  if (k.size(1) != heads || v.size(1) != heads) {
    if (k.size(1) != v.size(1) || k.size(1) < 1 || heads % k.size(1) != 0) {
      throw ConfigError("causal_attention: " + std::to_string(heads) +
                        " query heads cannot share " + std::to_string(k.size(1)) + " key and " +
                        std::to_string(v.size(1)) + " value heads");
    }
#if GPUPERF_HAS_SDPA_GQA
    // LibTorch's fused kernels read the shared heads in place; its math path widens them itself
    // (causal_attention_widens() says which, for the memory count).
    return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, c10::nullopt,
                                            /*enable_gqa=*/true);
#else
    return causal_attention(q, widen_heads(k, heads), widen_heads(v, heads));
#endif
  }
#if GPUPERF_HAS_SDPA
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
#else
  return written_out_attention(q, k, v);
#endif
}

std::string attention_kernel(const torch::Tensor& q, const torch::Tensor& k,
                             const torch::Tensor& v) {
#if GPUPERF_HAS_SDPA
  if (causal_attention_widens(q, k)) {
    return attention_kernel(q, widen_heads(k, q.size(1)), widen_heads(v, q.size(1)));
  }
  switch (sdp_choice(q, k, v)) {
    case kSdpMath:
      return "math";
    case 1:
      return "flash";
    case 2:
      return "efficient";
    case 3:
      return "cudnn";
    default:
      return "other";
  }
#else
  (void)q, (void)k, (void)v;
  return "written out";
#endif
}

std::string attention_kernel_of(const torch::nn::Module& model, std::int64_t sequence,
                                Precision precision, const torch::Device& device) {
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t width = 0;
  if (const auto* gpt = dynamic_cast<const GptImpl*>(&model)) {
    heads = kv_heads = gpt->options().heads;
    width = gpt->options().width;
  } else if (const auto* llama = dynamic_cast<const LlamaImpl*>(&model)) {
    heads = llama->options().heads;
    kv_heads = llama->options().kv_heads;
    width = llama->options().width;
  } else {
    return "";
  }
  const torch::ScalarType dtype = precision == Precision::kFp16   ? torch::kHalf
                                  : precision == Precision::kBf16 ? torch::kBFloat16
                                                                  : torch::kFloat;
  const auto options = torch::dtype(dtype).device(device);
  const torch::Tensor q = torch::zeros({1, heads, sequence, width / heads}, options);
  const torch::Tensor kv = torch::zeros({1, kv_heads, sequence, width / heads}, options);
  return attention_kernel(q, kv, kv);
}

GptBlockImpl::GptBlockImpl(const GptOptions& o) : heads_(o.heads) {
  const std::int64_t c = o.width;
  ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c})));
  c_attn = register_module("c_attn", linear(c, 3 * c, true));
  attn_proj = register_module("attn_proj", linear(c, c, true));
  ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c})));
  c_fc = register_module("c_fc", linear(c, 4 * c, true));
  mlp_proj = register_module("mlp_proj", linear(4 * c, c, true));
}

std::pair<torch::Tensor, PendingBranch> GptBlockImpl::forward_pending(const torch::Tensor& x,
                                                                      const PendingBranch& pending,
                                                                      const torch::Tensor* cast) {
  return run(x, pending, cast, true);
}

std::pair<torch::Tensor, PendingBranch> GptBlockImpl::run(const torch::Tensor& x,
                                                          const PendingBranch& pending,
                                                          const torch::Tensor* cast,
                                                          bool mlp_bias_pending) {
  const auto part = [cast](std::size_t layer) {
    return cast != nullptr ? cast + 2 * layer : nullptr;
  };
  const ResidualNorm in = residual_layer_norm(x, pending.output, ln_1->weight, ln_1->bias,
                                              ln_1->options.eps(), pending.bias);
  const std::vector<torch::Tensor> qkv =
      attention_heads(in.normalized, c_attn->weight, c_attn->bias, heads_, cast_pair(part(0)));
  const torch::Tensor y = causal_attention(qkv[0], qkv[1], qkv[2]);
  // The projections' biases go to the LayerNorm after them where its kernels run (the bias added
  // in its pass and the bias gradient summed in its backward one: no pass of its own over the
  // projection's gradient). The residual stream after the projection is this x's kind.
  const bool bias_to_norm = fused_residual_layer_norm_applies(in.sum, {}, ln_2->weight, ln_2->bias);
  const auto projected = [&](const torch::nn::Linear& layer, const torch::Tensor& input,
                             const torch::Tensor* layer_cast, bool leave_bias) -> PendingBranch {
    if (!leave_bias) return {with_bias(layer, input, Activation::kNone, layer_cast)};
    return {linear_activation(input, layer->weight, {}, Activation::kNone,
                              CastLinear{cast_pair(layer_cast).weight, {}}),
            layer->bias};
  };
  const PendingBranch attention = projected(attn_proj, merge_heads(y), part(1), bias_to_norm);
  const ResidualNorm mid = residual_layer_norm(in.sum, attention.output, ln_2->weight, ln_2->bias,
                                               ln_2->options.eps(), attention.bias);
  const torch::Tensor gelu = with_bias(c_fc, mid.normalized, Activation::kGeluTanh, part(2));
  return {mid.sum, projected(mlp_proj, gelu, part(3), bias_to_norm && mlp_bias_pending)};
}

std::vector<torch::Tensor> GptBlockImpl::linear_parameters() const {
  return {c_attn->weight, c_attn->bias, attn_proj->weight, attn_proj->bias,
          c_fc->weight,   c_fc->bias,   mlp_proj->weight,  mlp_proj->bias};
}

torch::Tensor GptBlockImpl::forward(const torch::Tensor& x) {
  const auto [h, mlp] = run(x, {}, nullptr, false);
  return h + mlp.output;
}

torch::Tensor GptBlockImpl::forward_checkpointed(const torch::Tensor& x) {
  return run_checkpointed(
      *this,
      [](torch::nn::Module& block, const torch::Tensor& in, const torch::Tensor&,
         const torch::Tensor&) { return static_cast<GptBlockImpl&>(block).forward(in); },
      x, {}, {});
}

GptImpl::GptImpl(GptOptions options) : options_(options) {
  options_.validate();
  const GptOptions& o = options_;
  wte = register_module("wte", torch::nn::Embedding(o.vocabulary, o.width));
  wpe = register_module("wpe", torch::nn::Embedding(o.context, o.width));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < o.layers; ++i) blocks->push_back(GptBlock(o));
  ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width})));
  init_normal(*this, 0.02);
  torch::NoGradGuard no_grad;
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers));
  for (const auto& block : *blocks) {
    auto* b = block->as<GptBlockImpl>();
    b->attn_proj->weight.normal_(0, residual_std);
    b->mlp_proj->weight.normal_(0, residual_std);
  }
}

torch::Tensor GptImpl::forward(const torch::Tensor& ids) {
  check_ids(ids, options_.context, "Gpt");
  const torch::Tensor positions = torch::arange(ids.size(1), ids.options());
  auto [tokens, output_weight] = tied_embedding(ids, wte->weight);
  torch::Tensor x = tokens + wpe(positions);
  // The blocks pass the residual stream on with its last add pending, so that every add is made
  // together with the LayerNorm after it (residual_layer_norm); checkpointed blocks make theirs.
  const bool checkpointed = checkpointing_ && x.requires_grad();
  const std::vector<torch::Tensor> cast =
      checkpointed ? std::vector<torch::Tensor>{}
                   : cast_for_training<GptBlockImpl>(blocks, x.device(), wte->weight);
  const torch::Tensor* next = cast.empty() ? nullptr : cast.data();
  PendingBranch pending;
  for (const auto& block : *blocks) {
    auto* b = block->as<GptBlockImpl>();
    if (checkpointed) {
      if (pending.output.defined()) x = x + std::exchange(pending, {}).value();
      x = b->forward_checkpointed(x);
    } else {
      std::tie(x, pending) = b->forward_pending(x, pending, next);
      if (next != nullptr) next += GptBlockImpl::kCastCount;
    }
  }
  const ResidualNorm last = residual_layer_norm(x, pending.output, ln_f->weight, ln_f->bias,
                                                ln_f->options.eps(), pending.bias);
  // The tied output embedding (its 16-bit copy last in `cast`): its gradient in float32 from the
  // GEMM (linear_activation).
  return linear_activation(last.normalized, output_weight, {}, Activation::kNone,
                           {cast.empty() ? torch::Tensor() : cast.back(), {}});
}

LlamaBlockImpl::LlamaBlockImpl(const LlamaOptions& o) : options_(o) {
  const std::int64_t kv_width = o.width / o.heads * o.kv_heads;
  attention_norm = register_parameter("attention_norm", torch::ones({o.width}));
  wq = register_module("wq", linear(o.width, o.width, false));
  wk = register_module("wk", linear(o.width, kv_width, false));
  wv = register_module("wv", linear(o.width, kv_width, false));
  wo = register_module("wo", linear(o.width, o.width, false));
  ffn_norm = register_parameter("ffn_norm", torch::ones({o.width}));
  w1 = register_module("w1", linear(o.width, o.hidden, false));
  w2 = register_module("w2", linear(o.hidden, o.width, false));
  w3 = register_module("w3", linear(o.width, o.hidden, false));
}

std::pair<torch::Tensor, torch::Tensor> LlamaBlockImpl::forward_pending(
    const torch::Tensor& x, const torch::Tensor& pending, const torch::Tensor& cos,
    const torch::Tensor& sin, const torch::Tensor* cast) {
  const LlamaOptions& o = options_;
  const auto part = [cast](std::size_t layer) { return cast != nullptr ? cast + layer : nullptr; };
  const ResidualNorm in = residual_rms_norm(x, pending, attention_norm, o.norm_eps);
  const torch::Tensor& n = in.normalized;
  // wq, wk and wv (and w1 and w3 on the MLP's input) in one node each: one GEMM each way where
  // the kernels apply.
  const auto casts = [cast](std::initializer_list<std::size_t> layers) {
    std::vector<torch::Tensor> out;
    if (cast != nullptr) {
      for (const std::size_t i : layers) out.push_back(cast[i]);
    }
    return out;
  };
  // Grouped-query attention: causal_attention lets each key/value head serve heads / kv_heads
  // query heads.
  const std::vector<torch::Tensor> qkv = rotary_heads(n, wq->weight, wk->weight, wv->weight, cos,
                                                      sin, o.heads, o.kv_heads, casts({0, 1, 2}));
  const ResidualNorm mid = residual_rms_norm(
      in.sum, project(wo, merge_heads(causal_attention(qkv[0], qkv[1], qkv[2])), part(3)), ffn_norm,
      o.norm_eps);
  const torch::Tensor gate = swiglu_linear(mid.normalized, w1->weight, w3->weight, casts({4, 5}));
  return {mid.sum, project(w2, gate, part(6))};
}

std::vector<torch::Tensor> LlamaBlockImpl::linear_parameters() const {
  return {wq->weight, wk->weight, wv->weight, wo->weight, w1->weight, w3->weight, w2->weight};
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cos,
                                      const torch::Tensor& sin) {
  const auto [h, ffn] = forward_pending(x, {}, cos, sin);
  return h + ffn;
}

torch::Tensor LlamaBlockImpl::forward_checkpointed(const torch::Tensor& x, const torch::Tensor& cos,
                                                   const torch::Tensor& sin) {
  return run_checkpointed(
      *this,
      [](torch::nn::Module& block, const torch::Tensor& in, const torch::Tensor& c,
         const torch::Tensor& s) { return static_cast<LlamaBlockImpl&>(block).forward(in, c, s); },
      x, cos, sin);
}

LlamaImpl::LlamaImpl(LlamaOptions options) : options_(options) {
  options_.validate();
  const LlamaOptions& o = options_;
  tok_embeddings = register_module("tok_embeddings", torch::nn::Embedding(o.vocabulary, o.width));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < o.layers; ++i) blocks->push_back(LlamaBlock(o));
  norm = register_parameter("norm", torch::ones({o.width}));
  if (!o.tie_embeddings) output = register_module("output", linear(o.width, o.vocabulary, false));
  init_normal(*this, 0.02);
  {
    torch::NoGradGuard no_grad;
    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers));
    for (const auto& block : *blocks) {
      auto* b = block->as<LlamaBlockImpl>();
      b->wo->weight.normal_(0, residual_std);
      b->w2->weight.normal_(0, residual_std);
    }
  }
  // Rotary tables: position t, frequency theta^(-2i / head width), both halves alike.
  const std::int64_t head = o.width / o.heads;
  const torch::Tensor i = torch::arange(0, head, 2, torch::kDouble);
  const torch::Tensor frequencies = torch::pow(o.rope_theta, -i / static_cast<double>(head));
  const torch::Tensor angles =
      torch::outer(torch::arange(o.context, torch::kDouble), frequencies).repeat({1, 2});
  rope_cos = register_buffer("rope_cos", angles.cos().to(torch::kFloat));
  rope_sin = register_buffer("rope_sin", angles.sin().to(torch::kFloat));
}

torch::Tensor LlamaImpl::forward(const torch::Tensor& ids) {
  check_ids(ids, options_.context, "Llama");
  torch::Tensor x;
  torch::Tensor output_weight;
  if (output) {
    x = tok_embeddings(ids);
  } else {
    std::tie(x, output_weight) = tied_embedding(ids, tok_embeddings->weight);
  }
  // As in GptImpl::forward: adds pending, the block weights cast at once for a training step.
  const bool checkpointed = checkpointing_ && x.requires_grad();
  const std::vector<torch::Tensor> cast =
      checkpointed ? std::vector<torch::Tensor>{}
                   : cast_for_training<LlamaBlockImpl>(
                         blocks, x.device(), output ? output->weight : tok_embeddings->weight);
  const torch::Tensor* next = cast.empty() ? nullptr : cast.data();
  torch::Tensor pending;
  for (const auto& block : *blocks) {
    auto* b = block->as<LlamaBlockImpl>();
    if (checkpointed) {
      if (pending.defined()) x = x + std::exchange(pending, {});
      x = b->forward_checkpointed(x, rope_cos, rope_sin);
    } else {
      std::tie(x, pending) = b->forward_pending(x, pending, rope_cos, rope_sin, next);
      if (next != nullptr) next += LlamaBlockImpl::kCastCount;
    }
  }
  const torch::Tensor last = residual_rms_norm(x, pending, norm, options_.norm_eps).normalized;
  // The output layer's 16-bit weight is the last in `cast`.
  const torch::Tensor* output_cast = cast.empty() ? nullptr : &cast.back();
  return output ? project(output, last, output_cast)
                : linear_activation(last, output_weight, {}, Activation::kNone,
                                    {output_cast != nullptr ? *output_cast : torch::Tensor(), {}});
}

}  // namespace gpuperf
