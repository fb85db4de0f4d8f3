#pragma once
// Decoder-only language models for the language-model benchmark: GPT-2 (as nanoGPT and llm.c
// define it) and a Llama-style decoder (as torchtitan defines Llama 3).
//
//   gpuperf::Gpt gpt(gpuperf::GptOptions::gpt2_124m());
//   torch::Tensor logits = gpt(token_ids);            // [batch, sequence] -> [b, s, vocabulary]
//   gpuperf::Llama llama(gpuperf::LlamaOptions::llama_1b());
//
// Attention runs through LibTorch's scaled_dot_product_attention (flash, cuDNN or
// memory-efficient kernels, as LibTorch picks; attention_kernel() says which), on LibTorch 1.13
// through the same arithmetic written out.

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/choices.h"

namespace gpuperf {

/// Shape of a GPT-2 model. The presets are OpenAI's four sizes with the vocabulary padded from
/// 50,257 to 50,304 (a multiple of 64), as nanoGPT and llm.c train them.
struct GptOptions {
  std::int64_t vocabulary = 50304;
  std::int64_t context = 1024;  ///< longest sequence (rows of the position embedding)
  std::int64_t layers = 12;
  std::int64_t heads = 12;
  std::int64_t width = 768;  ///< embedding width; a multiple of heads

  static GptOptions gpt2_124m() { return {}; }
  static GptOptions gpt2_355m() { return {50304, 1024, 24, 16, 1024}; }
  static GptOptions gpt2_774m() { return {50304, 1024, 36, 20, 1280}; }
  static GptOptions gpt2_1558m() { return {50304, 1024, 48, 25, 1600}; }

  /// Throws ConfigError naming the bad field ("GptOptions::heads").
  void validate() const;
};

/// Parameters of a GPT-2 model of this shape (tied input and output embeddings counted once).
[[nodiscard]] std::int64_t parameter_count(const GptOptions& options);

/// Shape of a Llama-style decoder: RMSNorm, SwiGLU, rotary position embeddings, grouped-query
/// attention, no biases. The presets are Llama 3.2 1B and 3B (tied embeddings).
struct LlamaOptions {
  std::int64_t vocabulary = 128256;
  std::int64_t context = 8192;  ///< longest sequence (rows of the rotary tables)
  std::int64_t layers = 16;
  std::int64_t heads = 32;
  std::int64_t kv_heads = 8;   ///< key/value heads; a divisor of heads
  std::int64_t width = 2048;   ///< a multiple of heads, with an even head width
  std::int64_t hidden = 8192;  ///< SwiGLU inner width
  double rope_theta = 500000;
  double norm_eps = 1e-5;
  bool tie_embeddings = true;

  static LlamaOptions llama_1b() { return {}; }
  static LlamaOptions llama_3b() {
    LlamaOptions o;
    o.layers = 28;
    o.heads = 24;
    o.width = 3072;
    return o;
  }

  /// Throws ConfigError naming the bad field ("LlamaOptions::kv_heads").
  void validate() const;
};

/// Parameters of a Llama-style model of this shape.
[[nodiscard]] std::int64_t parameter_count(const LlamaOptions& options);

/// Causal self-attention of q, k, v [batch, heads, sequence, head width]:
/// scaled_dot_product_attention(is_causal) where LibTorch has it, else written out. k and v may
/// have fewer heads than q (grouped-query attention: kv head i serves query heads i x heads /
/// kv heads onwards), handed to LibTorch as they are (2.5+: its fused kernels read them in place,
/// its math path widens them), widened first before 2.5. ConfigError when the head counts do not
/// divide.
[[nodiscard]] torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v);
/// Whether k's (and v's) heads are widened to q's in causal_attention() for these inputs: where
/// they differ and no fused kernel of LibTorch's takes them as they are.
[[nodiscard]] bool causal_attention_widens(const torch::Tensor& q, const torch::Tensor& k);
/// The kernel LibTorch picks for causal_attention on these inputs (for the widened k and v where
/// they are widened): "flash", "efficient",
/// "cudnn", "math" (scaled_dot_product_attention's own names), or "written out" (LibTorch 1.13).
[[nodiscard]] std::string attention_kernel(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v);

/// A language model's loss: cross-entropy of logits [..., vocabulary] against the next tokens
/// [...], averaged over every token. On CUDA (fp32, fp16 or bf16 logits) gpuperf's fused kernels
/// run it in float32 math, the gradient in the logits' dtype, without the float32 copy and
/// log-softmax ATen's path writes under autocast: where the logits need a gradient, the forward
/// launch writes it with the loss, for the incoming gradient LossGradientScope expects (1 without
/// one), and the backward pass rescales it only when another arrives; under
/// LossGradientScope(std::nullopt) the backward pass computes it. Elsewhere ATen's cross_entropy.
/// ConfigError when the shapes disagree.
[[nodiscard]] torch::Tensor next_token_loss(const torch::Tensor& logits,
                                            const torch::Tensor& targets);
/// The incoming gradient that next_token_loss()'s losses on this thread will be back-propagated
/// with while it lives (TrainStep: 1 / micro-batches; none with a gradient scaler, whose scale
/// lives on the device). A wrong guess costs one more pass over the logits' gradient, never a
/// wrong gradient. ConfigError unless finite and > 0.
class LossGradientScope {
 public:
  explicit LossGradientScope(std::optional<double> expected);
  ~LossGradientScope();
  LossGradientScope(const LossGradientScope&) = delete;
  LossGradientScope& operator=(const LossGradientScope&) = delete;

 private:
  double previous_;
};

/// Whether next_token_loss() runs gpuperf's fused kernels for these logits.
[[nodiscard]] bool fused_cross_entropy_applies(const torch::Tensor& logits);
/// Whether it runs them for logits of `dtype` on `device`.
[[nodiscard]] bool fused_cross_entropy_applies(const torch::Device& device,
                                               torch::ScalarType dtype);

/// A pre-LayerNorm block's residual add and the LayerNorm after it: sum = x + branch (x when
/// `branch` is undefined; x + branch + branch_bias with a branch bias, the bias of the layer that
/// made the branch, left out of that layer), normalized = LayerNorm(sum; weight, bias, eps) over
/// the last dimension.
struct ResidualNorm {
  torch::Tensor sum;
  torch::Tensor normalized;
};
/// On CUDA (x float32, width a multiple of 4 up to 2,048, branch in autocast's dtype) gpuperf's
/// kernels run it in one pass forward and one backward, writing `normalized` in autocast's 16-bit
/// dtype (float32 without autocast), which is what ATen's add, float32 layer_norm and the next
/// projection's cast give; a branch bias (float32) is added in the same pass and its gradient
/// (the column sums of the branch's gradient, as the layer's own bias gradient) summed in the
/// backward one. Elsewhere ATen's adds (branch + branch_bias first) and layer_norm.
[[nodiscard]] ResidualNorm residual_layer_norm(const torch::Tensor& x, const torch::Tensor& branch,
                                               const torch::Tensor& weight,
                                               const torch::Tensor& bias, double eps,
                                               const torch::Tensor& branch_bias = {});
/// Whether residual_layer_norm() runs gpuperf's kernels for these tensors.
[[nodiscard]] bool fused_residual_layer_norm_applies(const torch::Tensor& x,
                                                     const torch::Tensor& branch,
                                                     const torch::Tensor& weight,
                                                     const torch::Tensor& bias,
                                                     const torch::Tensor& branch_bias = {});
/// residual_layer_norm() with RMSNorm: normalized = sum / sqrt(mean(sum^2) + eps) x weight, in
/// float32 at least, as torchtitan's RMSNorm computes it; the same kernels where they apply.
[[nodiscard]] ResidualNorm residual_rms_norm(const torch::Tensor& x, const torch::Tensor& branch,
                                             const torch::Tensor& weight, double eps);
/// Whether residual_rms_norm() runs gpuperf's kernels for these tensors.
[[nodiscard]] bool fused_residual_rms_norm_applies(const torch::Tensor& x,
                                                   const torch::Tensor& branch,
                                                   const torch::Tensor& weight);

/// What follows a linear layer in linear_activation(): nothing, or GELU's tanh approximation.
enum class Activation { kNone, kGeluTanh };

/// activation(x W^T + b) as nn.Linear and GELU run it (at::linear: under autocast the weight and
/// bias cast, the bias added in the GEMM's epilogue); `bias` may be undefined (none). On CUDA
/// with an output width that is a multiple of 8, one autograd node whose backward pass takes the
/// bias gradient, and GELU's gradient with it, in one pass of gpuperf's kernels where ATen runs
/// a GELU backward pass and a strided column reduction, and writes the weight's gradient in the
/// weight's dtype from the GEMM (autocast's cast of a float32 weight would cast the 16-bit
/// gradient back in a kernel of its own); ATen's operations elsewhere.
/// `cast`: the weight and bias already in the compute dtype (Gpt casts every layer's at once, in
/// one kernel, without a gradient of their own): the products read them and the gradients still
/// go to `weight` and `bias`; ignored where they do not match (dtype, shape, device), and off
/// gpuperf's kernels.
struct CastLinear {
  torch::Tensor weight, bias;
};
[[nodiscard]] torch::Tensor linear_activation(const torch::Tensor& x, const torch::Tensor& weight,
                                              const torch::Tensor& bias, Activation activation,
                                              const CastLinear& cast = {});
/// GPT-2's attention input: x W^T + b ([batch, sequence, width] x [3 width, width]) split into
/// q, k and v, each [batch, heads, sequence, width / heads], views of the one product. On CUDA
/// with gpuperf's kernels (fused_attention_heads_applies) its backward pass joins the three
/// gradients for the projection and sums the bias gradient in one pass, where autograd's split
/// copies them together and the bias gradient reads the join again. Elsewhere
/// linear_activation() and views.
[[nodiscard]] std::vector<torch::Tensor> attention_heads(const torch::Tensor& x,
                                                         const torch::Tensor& weight,
                                                         const torch::Tensor& bias,
                                                         std::int64_t heads,
                                                         const CastLinear& cast = {});
/// Whether attention_heads() runs gpuperf's kernels (x 3-D, a bias, head width a multiple of 8,
/// and what linear_activation's kernels take).
[[nodiscard]] bool fused_attention_heads_applies(const torch::Tensor& x,
                                                 const torch::Tensor& weight,
                                                 const torch::Tensor& bias, std::int64_t heads);
/// Whether linear_activation() runs gpuperf's kernels for these tensors.
[[nodiscard]] bool fused_linear_applies(const torch::Tensor& x, const torch::Tensor& weight,
                                        const torch::Tensor& bias);

/// How the matrix products of linear_activation(), attention_heads(), rotary_heads() and
/// swiglu_linear() on gpuperf's kernels run (process-wide). Timed (on): each goes to cuBLASLt
/// with the fastest of the heuristic's first eight candidate algorithms, timed at each product
/// shape's first call outside a CUDA graph's capture and kept for the process (the heuristic's
/// first unless another is at least 1% faster; that call waits for the stream); two processes
/// may pick differently and so differ in a product's last bits. Off (the default: Llama 1B's
/// step on an H100 at its power limit did not gain, docs/language_models.md): ATen's matmul, as
/// PyTorch runs it (cuBLAS's own choice).
void set_timed_gemm_algorithms(bool on);
[[nodiscard]] bool timed_gemm_algorithms();
/// Whether the products above time their algorithms for activations of `dtype` on `device`:
/// timed_gemm_algorithms() on, a GPU gpuperf's kernels run on, 16-bit `dtype`.
[[nodiscard]] bool timed_gemm_algorithms_apply(const torch::Device& device,
                                               torch::ScalarType dtype);
/// set_timed_gemm_algorithms(on) for the scope's life, then back as it was (also when an
/// exception leaves the scope).
class TimedGemmAlgorithmsScope {
 public:
  explicit TimedGemmAlgorithmsScope(bool on) : before_(timed_gemm_algorithms()) {
    set_timed_gemm_algorithms(on);
  }
  TimedGemmAlgorithmsScope(const TimedGemmAlgorithmsScope&) = delete;
  TimedGemmAlgorithmsScope& operator=(const TimedGemmAlgorithmsScope&) = delete;
  ~TimedGemmAlgorithmsScope() { set_timed_gemm_algorithms(before_); }

 private:
  bool before_;
};

/// Llama's attention input: x [batch, sequence, width] through wq, wk and wv (no biases) split
/// into heads, q [batch, heads, sequence, head width] and k and v with `kv_heads`, q and k rotated
/// by rotary_embedding() with the tables cos and sin. On gpuperf's kernels
/// (fused_rotary_heads_applies) one autograd node: the three products one GEMM of the joined
/// weight (a view where the 16-bit copies lie back to back, as the optimizer's WeightCopies keep
/// them), q, k and v views of it, q and k rotated in place; backward rotates q's and k's
/// gradients back into one joined gradient, then one GEMM for x's gradient and one for the three
/// weights' (each float32 in its own rows). Elsewhere linear_activation() per weight, views and
/// rotary_embedding(). `casts`: empty, or wq, wk and wv in the compute dtype (as CastLinear's).
[[nodiscard]] std::vector<torch::Tensor> rotary_heads(
    const torch::Tensor& x, const torch::Tensor& wq, const torch::Tensor& wk,
    const torch::Tensor& wv, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t heads,
    std::int64_t kv_heads, const std::vector<torch::Tensor>& casts = {});
/// Whether rotary_heads() runs gpuperf's kernels (x 3-D; each weight as linear_activation() takes
/// it, one dtype, `heads` or `kv_heads` rows of one head width, a multiple of 8; the tables as
/// rotary_embedding()'s kernel takes them).
[[nodiscard]] bool fused_rotary_heads_applies(const torch::Tensor& x, const torch::Tensor& wq,
                                              const torch::Tensor& wk, const torch::Tensor& wv,
                                              const torch::Tensor& cos, const torch::Tensor& sin,
                                              std::int64_t heads, std::int64_t kv_heads);

/// Llama's gated MLP input: swiglu(x W1^T, x W3^T) (no biases). On gpuperf's kernels
/// (fused_swiglu_linear_applies) one autograd node: both products one GEMM of [W1; W3] (as
/// rotary_heads()'s) whose halves the SwiGLU kernel reads in place; backward writes both gates'
/// gradients into one, then one GEMM for x's gradient and one for both weights'. Elsewhere
/// linear_activation() per weight and swiglu(). `casts`: empty, or w1 and w3 in the compute dtype.
[[nodiscard]] torch::Tensor swiglu_linear(const torch::Tensor& x, const torch::Tensor& w1,
                                          const torch::Tensor& w3,
                                          const std::vector<torch::Tensor>& casts = {});
/// Whether swiglu_linear() runs gpuperf's kernels (w1 and w3 one shape and dtype, each as
/// linear_activation() takes it).
[[nodiscard]] bool fused_swiglu_linear_applies(const torch::Tensor& x, const torch::Tensor& w1,
                                               const torch::Tensor& w3);

/// A token embedding whose weight the output layer shares (tied embeddings: GPT-2's, Llama 3.2
/// 1B's and 3B's): {weight[ids], the weight for the output layer to read}. On CUDA, training, one
/// autograd node takes both uses' gradients and adds the looked-up rows' into the output layer's
/// in place (sorted by token: deterministic), where autograd would zero a [vocabulary, width]
/// gradient for the lookup, scatter into it and add the two. Elsewhere nn::Embedding's lookup and
/// `weight` itself.
[[nodiscard]] std::pair<torch::Tensor, torch::Tensor> tied_embedding(const torch::Tensor& ids,
                                                                     const torch::Tensor& weight);

/// silu(a) x b, the Llama MLP's gate: one kernel forward and one backward on CUDA (a and b of one
/// shape and dtype, contiguous, a multiple of 8 elements), keeping a and b for the backward pass
/// (ATen's silu and mul keep silu's output too); ATen's silu and mul elsewhere.
[[nodiscard]] torch::Tensor swiglu(const torch::Tensor& a, const torch::Tensor& b);
/// Whether swiglu() runs gpuperf's kernels for these tensors.
[[nodiscard]] bool fused_swiglu_applies(const torch::Tensor& a, const torch::Tensor& b);

/// The rotary position embedding of x [batch, heads, sequence, head width] in the rotate_half
/// layout: x cos + rotate_half(x) sin, with cos and sin float32 [>= sequence, head width] rows by
/// position. One kernel each way on CUDA (head width a multiple of 8; the result in
/// [batch, sequence, heads, head width] memory order, as the projections write it); elsewhere
/// ATen's operations, the tables cast to x's dtype first.
[[nodiscard]] torch::Tensor rotary_embedding(const torch::Tensor& x, const torch::Tensor& cos,
                                             const torch::Tensor& sin);
/// Whether rotary_embedding() runs gpuperf's kernels for these tensors.
[[nodiscard]] bool fused_rotary_applies(const torch::Tensor& x, const torch::Tensor& cos,
                                        const torch::Tensor& sin);

/// attention_kernel() for the attention of `model` (a Gpt or a Llama) over `sequence` tokens at
/// the activations' dtype under `precision`; "" for any other module.
[[nodiscard]] std::string attention_kernel_of(const torch::nn::Module& model, std::int64_t sequence,
                                              Precision precision, const torch::Device& device);

/// Turns per-block activation checkpointing of a Gpt or a Llama on or off: each block keeps only
/// its input and runs again in the backward pass (the reentrant scheme of
/// torch.utils.checkpoint; autocast's state of the forward pass is restored for the rerun).
/// Returns false, changing nothing, for any other module.
bool set_activation_checkpointing(torch::nn::Module& model, bool on);

/// What a training step of a Gpt or a Llama keeps on the device per sample of `sequence` tokens,
/// as gpuperf runs it on CUDA under `precision` (fused attention keeping a logsumexp instead of
/// the scores, the fused cross-entropy), at the step's peak: the start of the backward pass,
/// when the logits' gradient joins everything the forward pass kept (with checkpointing, the
/// larger of that and a block's rerun). docs/memory.md derives the counts.
struct TransformerActivations {
  double bytes_per_sample = 0;
  /// Bytes of the 16-bit weight copies autocast keeps for the backward pass (0 in fp32/tf32).
  double cast_weight_bytes = 0;
  std::string formula;  ///< the count with its numbers, for the plan's reason
};
/// The count for `model`; nullopt for a module that is neither a Gpt nor a Llama.
[[nodiscard]] std::optional<TransformerActivations> transformer_activations(
    const torch::nn::Module& model, std::int64_t sequence, Precision precision, bool checkpointing);

/// A residual add a GPT-2 block leaves to the LayerNorm after it: the branch's output and, where
/// that LayerNorm runs gpuperf's kernels, the bias of the layer that made it, left out of that
/// layer for residual_layer_norm() to add (and to sum its gradient) in its own pass.
struct PendingBranch {
  PendingBranch() = default;
  PendingBranch(torch::Tensor output, torch::Tensor bias = {})  // NOLINT: a tensor is a branch
      : output(std::move(output)), bias(std::move(bias)) {}
  torch::Tensor output;
  torch::Tensor bias;  ///< undefined: none left out
  /// output + bias (output where no bias was left out).
  [[nodiscard]] torch::Tensor value() const { return bias.defined() ? output + bias : output; }
};

/// One GPT-2 block: x + attention(LayerNorm(x)), then x + MLP(LayerNorm(x)) with GELU (tanh).
class GptBlockImpl : public torch::nn::Module {
 public:
  explicit GptBlockImpl(const GptOptions& options);
  /// [batch, sequence, width] -> the same shape.
  torch::Tensor forward(const torch::Tensor& x);
  /// The block over a residual stream whose last add is still pending, as Gpt runs its blocks:
  /// from x and `pending` (the previous block's MLP output, or none), returns the stream after
  /// the attention's add and this block's MLP output, whose add the next LayerNorm makes. Each
  /// add and the LayerNorm after it are one residual_layer_norm(), which also adds the
  /// projection's bias where its kernels run. `cast`: null, or kCastCount tensors, c_attn's,
  /// attn_proj's, c_fc's and mlp_proj's weight and bias in that order, already in the compute
  /// dtype (linear_activation's CastLinear).
  std::pair<torch::Tensor, PendingBranch> forward_pending(const torch::Tensor& x,
                                                          const PendingBranch& pending,
                                                          const torch::Tensor* cast = nullptr);
  /// The linear layers' weights and biases in forward_pending's `cast` order.
  [[nodiscard]] std::vector<torch::Tensor> linear_parameters() const;
  static constexpr std::size_t kCastCount = 8;
  /// forward() keeping only x for the backward pass, which runs the block again.
  torch::Tensor forward_checkpointed(const torch::Tensor& x);

  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  torch::nn::Linear c_attn{nullptr}, attn_proj{nullptr}, c_fc{nullptr}, mlp_proj{nullptr};

 private:
  // forward_pending(), with mlp_proj's bias left in the layer unless `mlp_bias_pending`.
  std::pair<torch::Tensor, PendingBranch> run(const torch::Tensor& x, const PendingBranch& pending,
                                              const torch::Tensor* cast, bool mlp_bias_pending);
  std::int64_t heads_;
};
TORCH_MODULE(GptBlock);

/// GPT-2 (pre-LayerNorm, learned positions, tied embeddings), initialised as nanoGPT does:
/// weights N(0, 0.02), the residual projections N(0, 0.02 / sqrt(2 x layers)), biases 0.
class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(GptOptions options = {});
  /// Token ids [batch, sequence <= context] (int64) -> logits [batch, sequence, vocabulary].
  torch::Tensor forward(const torch::Tensor& ids);
  [[nodiscard]] const GptOptions& options() const { return options_; }
  /// Per-block activation checkpointing (off by default).
  void set_checkpointing(bool on) { checkpointing_ = on; }
  [[nodiscard]] bool checkpointing() const { return checkpointing_; }

  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};

 private:
  GptOptions options_;
  bool checkpointing_ = false;
};
TORCH_MODULE(Gpt);

/// One Llama block: x + attention(RMSNorm(x)) with rotary q and k, then x + SwiGLU(RMSNorm(x)).
class LlamaBlockImpl : public torch::nn::Module {
 public:
  explicit LlamaBlockImpl(const LlamaOptions& options);
  /// [batch, sequence, width] -> the same shape; cos and sin [sequence, head width].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  /// The block with its residual adds pending, as GptBlockImpl::forward_pending (each add made
  /// with the RMSNorm after it by residual_rms_norm()). `cast`: null, or kCastCount weights in
  /// linear_parameters()'s order already in the compute dtype (linear_activation's CastLinear).
  std::pair<torch::Tensor, torch::Tensor> forward_pending(const torch::Tensor& x,
                                                          const torch::Tensor& pending,
                                                          const torch::Tensor& cos,
                                                          const torch::Tensor& sin,
                                                          const torch::Tensor* cast = nullptr);
  /// wq, wk, wv, wo, w1, w3 and w2's weights: forward_pending's `cast` order (the weights that
  /// read one input side by side: rotary_heads() and swiglu_linear() multiply their copies as one
  /// matrix where they lie back to back).
  [[nodiscard]] std::vector<torch::Tensor> linear_parameters() const;
  static constexpr std::size_t kCastCount = 7;
  /// forward() keeping only x for the backward pass, which runs the block again.
  torch::Tensor forward_checkpointed(const torch::Tensor& x, const torch::Tensor& cos,
                                     const torch::Tensor& sin);

  torch::Tensor attention_norm, ffn_norm;  ///< RMSNorm weights
  torch::nn::Linear wq{nullptr}, wk{nullptr}, wv{nullptr}, wo{nullptr};
  torch::nn::Linear w1{nullptr}, w2{nullptr}, w3{nullptr};

 private:
  LlamaOptions options_;
};
TORCH_MODULE(LlamaBlock);

/// A Llama-style decoder (see LlamaOptions), initialised with N(0, 0.02) weights and the output
/// projections of each block at N(0, 0.02 / sqrt(2 x layers)).
class LlamaImpl : public torch::nn::Module {
 public:
  explicit LlamaImpl(LlamaOptions options = {});
  /// Token ids [batch, sequence <= context] (int64) -> logits [batch, sequence, vocabulary].
  torch::Tensor forward(const torch::Tensor& ids);
  [[nodiscard]] const LlamaOptions& options() const { return options_; }
  /// Per-block activation checkpointing (off by default).
  void set_checkpointing(bool on) { checkpointing_ = on; }
  [[nodiscard]] bool checkpointing() const { return checkpointing_; }

  torch::nn::Embedding tok_embeddings{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::Tensor norm;                 ///< the final RMSNorm's weight
  torch::nn::Linear output{nullptr};  ///< null when the embeddings are tied
  torch::Tensor rope_cos, rope_sin;   ///< buffers [context, head width]

 private:
  LlamaOptions options_;
  bool checkpointing_ = false;
};
TORCH_MODULE(Llama);

}  // namespace gpuperf
