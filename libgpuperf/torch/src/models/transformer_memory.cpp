// transformer_activations(): what gpuperf's Gpt and Llama keep for the backward pass, counted
// tensor by tensor from their forward code (transformer.cpp) as it runs on CUDA. docs/memory.md
// has the derivation.
#include <algorithm>
#include <string>

#include "gpuperf/base/format.h"
#include "gpuperf/device/torch_choices.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/transformer.h"

namespace gpuperf {
namespace {

// Bytes per element: r of the residual stream (the embeddings' fp32 output, to which every
// block adds), e of what the matrix products read and write (the autocast dtype, else fp32).
struct Widths {
  double r = 4;
  double e = 4;
  bool autocast = false;
};

Widths widths_of(Precision precision) {
  Widths w;
  w.autocast = uses_autocast(precision);
  if (w.autocast) w.e = 2;
  return w;
}

double parameters_of(const torch::nn::Module& module) {
  return static_cast<double>(count_parameters(module));
}

std::string n(double v) { return format_number(v, 6); }

// The parts of a count per token: one block's kept bytes, everything outside the blocks at the
// peak, and the 16-bit weight copies.
struct PerToken {
  double block = 0;  // one block, kept for its backward pass
  double head = 0;   // final norm, output layer input, logits and their gradient
  double input = 0;  // one block's input (what checkpointing keeps)
  double rerun = 0;  // a block rerun in the backward pass: its working set and gradients
  std::string block_formula;
  std::string head_formula;
};

TransformerActivations finish(const PerToken& t, double layers, double sequence, bool checkpointing,
                              double cast_all, double cast_checkpointed) {
  TransformerActivations out;
  // Token ids and next tokens (int64), and the captured step's copies of both.
  const double ids = 4 * 8;
  if (!checkpointing) {
    out.bytes_per_sample = sequence * (layers * t.block + t.head + ids);
    out.cast_weight_bytes = cast_all;
    out.formula = "gpuperf's blocks as run, per token: L x (" + t.block_formula + ") + " +
                  t.head_formula + " + 32 (ids) = " + n(out.bytes_per_sample / sequence) + " B x " +
                  n(sequence) + " tokens";
    return out;
  }
  // The peak is the larger of the backward pass's start (block inputs and the head) and the
  // rerun of the last block (block inputs, its working set, its gradients).
  const double at_head = layers * t.input + t.head;
  const double at_rerun = layers * t.input + t.block + t.rerun;
  out.bytes_per_sample = sequence * (std::max(at_head, at_rerun) + ids);
  out.cast_weight_bytes = cast_checkpointed;
  out.formula = "checkpointed blocks, per token: L x " + n(t.input) + " (block inputs) + max(" +
                t.head_formula + ", " + t.block_formula + " + " + n(t.rerun) +
                " (rerun gradients)) + 32 (ids) = " + n(out.bytes_per_sample / sequence) + " B x " +
                n(sequence) + " tokens";
  return out;
}

TransformerActivations gpt_activations(const GptImpl& gpt, double sequence, Precision precision,
                                       bool checkpointing) {
  const GptOptions& o = gpt.options();
  const Widths w = widths_of(precision);
  const double h = static_cast<double>(o.width);
  const double a = static_cast<double>(o.heads);
  const double V = static_cast<double>(o.vocabulary);
  PerToken t;
  // Per block: ln_1's input x (r), the input of c_attn (e: autocast's cast of ln_1's fp32
  // output, or that output), q/k/v (3e, one tensor that attention reads as views), attention's
  // output (e; the fused kernels write it in [batch, sequence, heads, head width] order, so the
  // merged heads are a view of it) and its fp32 logsumexp per head (4a), ln_2's input h (r),
  // c_fc's input (e), GELU's input (4e) and output (4e): 2r + 14e per width, 4a per token.
  t.block = (2 * w.r + 14 * w.e) * h + 4 * a;
  t.block_formula = n(2 * w.r + 14 * w.e) + " h + 4 a";
  // After the blocks: ln_f's input (r), the output layer's input (e), the logits (e V) and their
  // gradient (e V; next_token_loss writes it with the loss, while the logits are still held).
  t.head = (w.r + w.e) * h + 2 * w.e * V;
  t.head_formula = n(w.r + w.e) + " h + " + n(2 * w.e) + " V";
  t.input = w.r * h;
  // The rerun block's output gradient and input gradient (fp32 residual), beside its working set.
  t.rerun = 2 * w.r * h;
  const double blocks_params = parameters_of(*gpt.blocks->ptr(0));
  const double total = parameters_of(gpt);
  // Autocast casts every linear layer's weight and bias (the tied output layer's too), and not
  // the position embedding or the LayerNorms.
  const double cast = w.autocast ? w.e * (total - static_cast<double>(o.context) * h -
                                          (4 * static_cast<double>(o.layers) + 2) * h)
                                 : 0;
  const double cast_rerun = w.autocast ? w.e * (V * h + blocks_params) : 0;
  return finish(t, static_cast<double>(o.layers), sequence, checkpointing, cast, cast_rerun);
}

TransformerActivations llama_activations(const LlamaImpl& llama, double sequence,
                                         Precision precision, bool checkpointing) {
  const LlamaOptions& o = llama.options();
  const Widths w = widths_of(precision);
  const double h = static_cast<double>(o.width);
  const double a = static_cast<double>(o.heads);
  const double H = static_cast<double>(o.hidden);
  const double V = static_cast<double>(o.vocabulary);
  PerToken t;
  // Per block: each RMSNorm (one node with the residual add before it, residual_rms_norm) keeps
  // its fp32 input (x, then h: r each) and writes its output in autocast's dtype (e each; r in
  // fp32), which the linear layers after it share (wq, wk, wv; w1, w3); rotary q, k and v (k and
  // v at kv width g, or widened to h where causal_attention widens them) and the attention output
  // (the merged heads are a view of it, as for GPT-2) with the fp32 logsumexp (4a); the MLP keeps
  // w1's output and w3's output (swiglu()'s node keeps them for its backward pass, not SiLU's
  // output) and their gated product (3e per inner width).
  const double normalized = w.autocast ? w.e : w.r;
  const std::int64_t head_width = o.width / o.heads;
  const double g = static_cast<double>(head_width * o.kv_heads);
  const auto head_options = torch::TensorOptions()
                                .dtype(w.autocast ? autocast_dtype(precision) : torch::kFloat)
                                .device(llama.norm.device());
  const bool widened = causal_attention_widens(
      torch::empty({1, o.heads, static_cast<std::int64_t>(sequence), head_width}, head_options),
      torch::empty({1, o.kv_heads, static_cast<std::int64_t>(sequence), head_width}, head_options));
  const double kv = widened ? h : g;
  t.block = (2 * w.r + 2 * normalized + 2 * w.e) * h + 2 * w.e * kv + 3 * w.e * H + 4 * a;
  t.block_formula = n(2 * w.r + 2 * normalized + 2 * w.e) + " h + " + n(2 * w.e) +
                    (widened ? " h" : " g") + " + " + n(3 * w.e) + " H + 4 a";
  // The final RMSNorm's input (r) and output, the output layer's input (e; r in fp32), the
  // logits and their gradient (2e V).
  t.head = (w.r + normalized) * h + 2 * w.e * V;
  t.head_formula = n(w.r + normalized) + " h + " + n(2 * w.e) + " V";
  t.input = w.r * h;
  t.rerun = 2 * w.r * h;
  const double blocks_params = parameters_of(*llama.blocks->ptr(0));
  const double total = parameters_of(llama);
  // Autocast casts the linear layers' weights, the tied output layer's too; not the norms.
  const double norms = (2 * static_cast<double>(o.layers) + 1) * h;
  const double embedding = V * h;
  const double cast = w.autocast ? w.e * (total - norms - (o.tie_embeddings ? 0 : embedding)) : 0;
  const double cast_rerun = w.autocast ? w.e * (embedding + blocks_params) : 0;
  return finish(t, static_cast<double>(o.layers), sequence, checkpointing, cast, cast_rerun);
}

}  // namespace

std::optional<TransformerActivations> transformer_activations(const torch::nn::Module& model,
                                                              std::int64_t sequence,
                                                              Precision precision,
                                                              bool checkpointing) {
  const auto s = static_cast<double>(sequence);
  if (const auto* gpt = dynamic_cast<const GptImpl*>(&model)) {
    return gpt_activations(*gpt, s, precision, checkpointing);
  }
  if (const auto* llama = dynamic_cast<const LlamaImpl*>(&model)) {
    return llama_activations(*llama, s, precision, checkpointing);
  }
  return std::nullopt;
}

}  // namespace gpuperf
