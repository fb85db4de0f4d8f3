#pragma once
// Fewer kernels for the same arithmetic: a convolution, its bias and a ReLU (and, for inference,
// a residual add) in one cuDNN call; a training-mode BatchNorm, a residual add and a ReLU fused
// on gpuperf's own kernels or in one cuDNN call; BatchNorm folded into the convolution before it
// for inference. The functions fall back to the separate ATen ops wherever the fused kernels do
// not apply (CPU tensors, cuDNN disabled, asymmetric or non-zero padding modes; for BatchNorm:
// other than channels_last on CUDA).
// On CUDA each makes its input's GPU current for its own launches, so the GPU the caller has
// current does not matter.
//
//   x = gpuperf::conv2d_bias_relu(x, *conv1, conv1->bias, /*fused=*/true);   // training or not
//   x = gpuperf::batch_norm_add_relu(conv3->forward(x), *bn3, shortcut, /*fused=*/true);
//
// Models opt in through FusableModel; TrainStep and InferenceSession switch it on.

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpuperf {

/// A model with kernel-fusion switches (the built-in SimpleModel and ResNets implement it).
class FusableModel {
 public:
  virtual ~FusableModel() = default;
  /// Training-safe fusion, the same function and gradients in fewer kernels: convolution + bias +
  /// ReLU, channels_last inside (SimpleModel); BatchNorm (+ residual add) + ReLU, conv1 + shortcut
  /// as one GEMM node, gpuperf's kernels for the pools, the stem's padded input and the weights'
  /// casts (ResNet). Returns whether the model has anything to fuse this way.
  virtual bool set_training_fusion(bool on) = 0;
  /// What the training-safe fusion fused in the latest forward pass, e.g. "conv+bias+relu";
  /// "none" when it is off or cuDNN's fused kernels did not apply to those inputs.
  [[nodiscard]] virtual std::string training_fusion() const = 0;
  /// Whether the latest forward pass ran its convolutions channels_last whatever the input's
  /// layout (so that a record says what ran inside, not what it was given).
  [[nodiscard]] virtual bool ran_channels_last() const { return false; }
  /// Inference only, irreversible: folds each BatchNorm's running statistics into the convolution
  /// before it and fuses bias, residual add and ReLU. Call on an eval-mode model in fp32, before
  /// any conversion to fp16/bf16. Returns what was fused, e.g. "conv+bias+relu".
  virtual std::string fuse_for_inference() = 0;
};

/// Destroys the fused convolutions' cuDNN plans kept for each shape on the calling thread, and the
/// kernels cuDNN compiled for them, which the CUDA context holds outside the caching allocator (a
/// search over many batch sizes builds plans for each). Only while no captured CUDA graph that
/// ran them will be replayed; the next call per shape builds its plan again.
void release_fused_convolution_plans();

/// Whether conv2d_bias_relu / conv2d_bias_add_relu can use cuDNN's fused kernels for `x` and
/// `conv`: a CUDA tensor, cuDNN built in and enabled, zero padding mode, symmetric padding.
[[nodiscard]] bool cudnn_fusion_applies(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv);

/// relu(conv(x) + bias) (`bias` may be undefined). With `fused` and where cuDNN's fusion applies,
/// one cuDNN call whose backward is the ReLU mask followed by the convolution's backward
/// (input, weight and bias gradients); under CUDA autocast the operands are cast as conv2d's are.
/// Otherwise the separate ops.
[[nodiscard]] torch::Tensor conv2d_bias_relu(const torch::Tensor& x,
                                             const torch::nn::Conv2dImpl& conv,
                                             const torch::Tensor& bias, bool fused);

/// As conv2d_bias_relu, with `weight` in place of the module's (e.g. one padded to more input
/// channels), the module's geometry kept; it must have explicit zero padding.
[[nodiscard]] torch::Tensor conv2d_bias_relu(const torch::Tensor& x,
                                             const torch::nn::Conv2dImpl& conv,
                                             const torch::Tensor& weight, const torch::Tensor& bias,
                                             bool fused);

/// Whether the module has explicit zero padding (not 'same', 'valid' or another padding mode):
/// the geometry conv2d_bias_relu's `weight` form and conv2d_weight_bias need.
[[nodiscard]] bool explicit_zero_padding(const torch::nn::Conv2dImpl& conv);

/// conv(x, weight) + bias with the module's geometry (explicit zero padding; `bias` may be
/// undefined).
[[nodiscard]] torch::Tensor conv2d_weight_bias(const torch::Tensor& x,
                                               const torch::nn::Conv2dImpl& conv,
                                               const torch::Tensor& weight,
                                               const torch::Tensor& bias);

/// relu(conv(x) + bias + z) for inference (no gradient through the fused call: used only when
/// autograd is off, e.g. under InferenceMode; otherwise the separate ops).
[[nodiscard]] torch::Tensor conv2d_bias_add_relu(const torch::Tensor& x,
                                                 const torch::nn::Conv2dImpl& conv,
                                                 const torch::Tensor& bias, const torch::Tensor& z,
                                                 bool fused);

/// Whether batch_norm_add_relu can use cuDNN's fused batch norm for these operands: gpuperf built
/// with cuDNN; `x` a CUDA fp16 [N, C, H, W] tensor in channels_last with C a multiple of 4; `bn` in
/// training mode with affine fp32 parameters, running statistics and a momentum; `z` (if defined)
/// of x's shape, dtype and layout.
[[nodiscard]] bool cudnn_batch_norm_fusion_applies(const torch::Tensor& x,
                                                   const torch::nn::BatchNorm2dImpl& bn,
                                                   const torch::Tensor& z);

/// Whether batch_norm_add_relu can run on gpuperf's own batch-norm kernels: gpuperf built with
/// them and `x` a CUDA fp32/fp16/bf16 [N, C, H, W] tensor in channels_last, 16-byte aligned, on a
/// GPU they run on, with C a multiple of 16 bytes' worth of channels (8 in fp16/bf16, 4 in fp32)
/// and more than one value per channel; `bn` and `z` as for cudnn_batch_norm_fusion_applies.
[[nodiscard]] bool batch_norm_kernel_applies(const torch::Tensor& x,
                                             const torch::nn::BatchNorm2dImpl& bn,
                                             const torch::Tensor& z);

/// relu(bn(x) + z), or relu(bn(x)) for an undefined `z`, with BatchNorm's training-mode side
/// effects (running statistics, num_batches_tracked: at the end of the open BatchCountScope, if
/// any, when fused). With `fused`: where batch_norm_kernel_applies, gpuperf's kernels (three
/// launches each way: statistics, their totals, the elementwise pass; the backward keeps a
/// one-bit ReLU mask, not the output); else where cudnn_batch_norm_fusion_applies, one cuDNN call
/// forward and one backward (dx, dweight, dbias, dz) instead of four kernels forward and three
/// backward; otherwise bn.forward and the separate ops. `ran_fused`, when given, says whether
/// either fused form ran.
[[nodiscard]] torch::Tensor batch_norm_add_relu(const torch::Tensor& x,
                                                torch::nn::BatchNorm2dImpl& bn,
                                                const torch::Tensor& z, bool fused,
                                                bool* ran_fused = nullptr);

/// bn(x) with BatchNorm's training-mode side effects, as bn.forward(x): with `fused` and where
/// batch_norm_kernel_applies, on gpuperf's batch-norm kernels (the batch count deferred to the open
/// BatchCountScope, if any); otherwise bn.forward. `ran_fused`, when given, says which ran.
[[nodiscard]] torch::Tensor fused_batch_norm(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn,
                                             bool fused, bool* ran_fused = nullptr);

/// Whether conv2d_batch_norm_relu and conv2d_batch_norm take the batch norm's statistics from
/// the convolution's epilogue for these operands (see there): the first call per shape asks cuDNN
/// for an engine (and, in cuDNN's benchmark mode, times its plans), later calls look it up.
[[nodiscard]] bool conv_statistics_fusion_applies(const torch::Tensor& x,
                                                  const torch::nn::Conv2dImpl& conv,
                                                  const torch::Tensor& weight);

/// relu(bn(conv(x, weight)) + z), or relu(bn(conv(x, weight))) for an undefined `z`, in training
/// mode, with the module's geometry (explicit zero padding). With `fused`, where cuDNN has an
/// engine for it and the batch norm runs on gpuperf's kernels (batch_norm_kernel_applies): the
/// convolution computes each output channel's sum and sum of squares in its epilogue (cuDNN's
/// graph API: convolution + GenStats, fp16/bf16 in channels_last, C and K multiples of 8, one
/// group), and the batch norm makes no statistics pass of its own; its backward is the
/// convolution's usual one. cuDNN adds the sums in fp32 in no fixed order (two runs differ in the
/// last bits, unlike gpuperf's statistics pass), so not where PyTorch is asked for determinism
/// (at::globalContext().deterministicCuDNN() or deterministicAlgorithms()); they are turned into
/// mean and variance in fp64. Otherwise conv2d_weight_bias, then batch_norm_add_relu.
/// `ran_fused` as for batch_norm_add_relu; `statistics_from_conv`, when given, says whether the
/// batch norm took its statistics from the convolution's epilogue.
[[nodiscard]] torch::Tensor conv2d_batch_norm_relu(
    const torch::Tensor& x, const torch::nn::Conv2dImpl& conv, const torch::Tensor& weight,
    torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& z, bool fused, bool* ran_fused = nullptr,
    bool* statistics_from_conv = nullptr);

/// bn(conv(x, weight)) in training mode, as conv2d_batch_norm_relu without the ReLU (the
/// fallback: conv2d_weight_bias, then fused_batch_norm).
[[nodiscard]] torch::Tensor conv2d_batch_norm(const torch::Tensor& x,
                                              const torch::nn::Conv2dImpl& conv,
                                              const torch::Tensor& weight,
                                              torch::nn::BatchNorm2dImpl& bn, bool fused,
                                              bool* ran_fused = nullptr,
                                              bool* statistics_from_conv = nullptr);

/// Whether conv1x1_and_shortcut can run as one GEMM node: `conv` 1x1, stride 1, no padding,
/// dilation or groups, no bias; `x` a floating [N, C, H, W] tensor in channels_last (in the
/// autocast dtype under CUDA autocast; else in the weight's dtype, on its device).
[[nodiscard]] bool conv1x1_shortcut_applies(const torch::Tensor& x,
                                            const torch::nn::Conv2dImpl& conv);

/// {conv(x), x} for a bottleneck's first 1x1 convolution and its residual shortcut: the same
/// values as conv->forward(x) and x. With `fused`, where conv1x1_shortcut_applies and autograd
/// records, both come from one autograd node whose backward computes the gradient reaching x
/// from both in one GEMM (dx = dshortcut + dy W: cuBLAS adds the shortcut's gradient in its
/// epilogue), where autograd would run the convolution's data gradient and then an add kernel.
[[nodiscard]] std::pair<torch::Tensor, torch::Tensor> conv1x1_and_shortcut(
    const torch::Tensor& x, const torch::nn::Conv2dImpl& conv, bool fused);

/// As above, with `weight` (e.g. from cast_weights) in place of conv's own; the module's
/// geometry must be explicit.
[[nodiscard]] std::pair<torch::Tensor, torch::Tensor> conv1x1_and_shortcut(
    const torch::Tensor& x, const torch::nn::Conv2dImpl& conv, const torch::Tensor& weight,
    bool fused);

/// {relu(bn(conv(x, weight))), x} for a bottleneck's first 1x1 convolution, its batch norm in
/// training mode and the residual shortcut: with `fused`, where conv1x1_shortcut_applies, autograd
/// records and conv_statistics_fusion_applies, the convolution runs as cuDNN's convolution +
/// statistics graph and the batch norm takes its sums (as conv2d_batch_norm_relu), inside
/// conv1x1_and_shortcut's one autograd node (its backward unchanged). Otherwise
/// conv1x1_and_shortcut, then batch_norm_add_relu. `ran_fused` and `statistics_from_conv` as for
/// conv2d_batch_norm_relu.
[[nodiscard]] std::pair<torch::Tensor, torch::Tensor> conv1x1_batch_norm_relu_and_shortcut(
    const torch::Tensor& x, const torch::nn::Conv2dImpl& conv, const torch::Tensor& weight,
    torch::nn::BatchNorm2dImpl& bn, bool fused, bool* ran_fused = nullptr,
    bool* statistics_from_conv = nullptr);

/// Whether max_pool2d can run on gpuperf's own max-pool kernels for `x`: gpuperf built with them
/// (a CUDA LibTorch and a CUDA compiler) for an architecture that includes x's GPU, `x` a CUDA
/// fp16, bf16 or fp32 [N, C, H, W] tensor in channels_last, a window PyTorch accepts of at most
/// 15 x 15.
[[nodiscard]] bool max_pool_kernels_apply(const torch::Tensor& x, std::int64_t kernel,
                                          std::int64_t stride, std::int64_t padding);

/// max_pool2d(x, kernel, stride, padding) with a square window, no dilation, floor mode: PyTorch's
/// function and gradient. With `fused` and where max_pool_kernels_apply, gpuperf's kernels:
/// the forward stores each window's maximum as a one-byte position (none when autograd does not
/// record), chosen as ATen chooses it (the first largest value, or the last NaN), and the
/// backward gathers each input's gradient through them. Otherwise ATen's max_pool2d.
[[nodiscard]] torch::Tensor max_pool2d(const torch::Tensor& x, std::int64_t kernel,
                                       std::int64_t stride, std::int64_t padding, bool fused);

/// Whether pad_channels_to_4 runs on gpuperf's kernel: gpuperf built with its CUDA kernels and
/// they run on x's GPU; `x` a CUDA fp32, fp16 or bf16 [N, C, H, W] tensor in channels_last with
/// 1 <= C <= 4, which autograd does not record; `dtype` fp32, fp16 or bf16.
[[nodiscard]] bool pad_channels_kernel_applies(const torch::Tensor& x, c10::ScalarType dtype);

/// `x` [N, C, H, W] (C <= 4) with zero channels appended up to 4, in `dtype` and channels_last:
/// the input of an image model's first convolution, whose fast cuDNN kernels take 4 channels
/// (on 3, cuDNN pads the input itself in each forward and weight-gradient call). One kernel of
/// gpuperf's where pad_channels_kernel_applies; ATen's conversion and pad otherwise.
[[nodiscard]] torch::Tensor pad_channels_to_4(const torch::Tensor& x, c10::ScalarType dtype);

/// Whether global_average_pool runs on gpuperf's kernels: as pad_channels_kernel_applies for `x`
/// (any channel count, recorded by autograd or not), with H * W > 0.
[[nodiscard]] bool average_pool_kernel_applies(const torch::Tensor& x);

/// The mean over H x W of `x` [N, C, H, W]: [N, C]. With `fused` and where
/// average_pool_kernel_applies, one kernel of gpuperf's (fp32 accumulation, as ATen's), and one
/// for the gradient, which it writes in channels_last; otherwise adaptive_avg_pool2d(x, 1)
/// flattened.
[[nodiscard]] torch::Tensor global_average_pool(const torch::Tensor& x, bool fused);

/// Whether cast_weights runs on gpuperf's kernel: gpuperf built with its CUDA kernels and they run
/// on the weights' GPU; the weights defined, on one CUDA device, all fp32 (or all fp16 or bf16),
/// each dense; `dtype` fp32, fp16 or bf16.
[[nodiscard]] bool cast_kernel_applies(const std::vector<torch::Tensor>& weights,
                                       c10::ScalarType dtype);

/// `weights` converted to `dtype` (each keeping its strides), as autocast casts a weight for its
/// op, with gradients flowing back to them. Where cast_kernel_applies, one autograd node whose
/// forward is one kernel and whose backward casts the gradients back in one more (autocast casts
/// each weight in its own kernel, both ways: 112 kernels in a ResNet-50 step), the casts back to
/// back in one allocation where the weights are contiguous (empty_back_to_back: Llama's joined
/// weights are views of them, as of the optimizer's copies); otherwise each weight's .to(dtype).
[[nodiscard]] std::vector<torch::Tensor> cast_weights(const std::vector<torch::Tensor>& weights,
                                                      c10::ScalarType dtype);

/// Counts the batch of every BatchNorm that batch_norm_add_relu runs fused on this thread while
/// the scope lives, in one multi-tensor add when it ends (one kernel, not one per layer: 53 per
/// ResNet-50 step). Scopes nest; the outermost one adds.
class BatchCountScope {
 public:
  BatchCountScope();
  /// Throws what the add throws, unless the scope ends by an exception.
  ~BatchCountScope() noexcept(false);
  BatchCountScope(const BatchCountScope&) = delete;
  BatchCountScope& operator=(const BatchCountScope&) = delete;

  /// Adds 1 to `counter` when the outermost scope ends; false when no scope is open.
  static bool defer(const torch::Tensor& counter);

 private:
  BatchCountScope* outer_;
  int exceptions_;  // std::uncaught_exceptions() when it opened
  std::vector<torch::Tensor> counters_;
};

/// conv(x) + bias with the module's stride, padding, dilation and groups (the module's own bias
/// is ignored: pass it, or a folded one, as `bias`).
[[nodiscard]] torch::Tensor conv2d_bias(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                        const torch::Tensor& bias);

/// Folds an eval-mode BatchNorm into the convolution before it: scales conv's weight in place by
/// gamma / sqrt(running_var + eps) per output channel and returns the bias that completes it,
/// beta - running_mean * gamma / sqrt(running_var + eps) (plus conv's own bias, scaled, if any).
/// Computed in fp64 and stored in the weight's dtype. conv(x) + bias then equals bn(conv(x)) in
/// eval mode up to rounding.
[[nodiscard]] torch::Tensor fold_batch_norm(torch::nn::Conv2dImpl& conv,
                                            const torch::nn::BatchNorm2dImpl& bn);

namespace detail {
/// conv2d_bias_relu's autograd structure (the two nodes around one forward call) with the forward
/// computed by the separate ATen ops instead of cuDNN's fused call: lets CPU tests check its
/// gradients against autograd's. Needs explicit zero padding (throws std::invalid_argument).
[[nodiscard]] torch::Tensor conv2d_bias_relu_two_nodes(const torch::Tensor& x,
                                                       const torch::nn::Conv2dImpl& conv,
                                                       const torch::Tensor& bias);

/// conv(x, weight) with the module's geometry through the fused cuDNN graph, its per-channel sums
/// written into `sums` (fp32 [2, K], contiguous, on x's device) as given, not zeroed first: lets
/// the tests compare the sums with fp64 and see whether cuDNN's GenStats overwrites its outputs.
/// Needs conv_statistics_fusion_applies (throws gpuperf::Error otherwise). No autograd.
[[nodiscard]] torch::Tensor conv2d_statistics_into(const torch::Tensor& x,
                                                   const torch::nn::Conv2dImpl& conv,
                                                   const torch::Tensor& weight,
                                                   const torch::Tensor& sums);

/// bn(y) in training mode on gpuperf's batch norm kernels with the statistics taken from `sums`
/// (fp32 [2, C]: y's per-channel sums and sums of squares, as conv2d_statistics_into gives them),
/// as the fused convolution + batch norm takes them: lets the tests hold the statistics the batch
/// norm ends with (running statistics, output) against fp64 for given sums. Needs
/// batch_norm_kernel_applies (throws gpuperf::Error otherwise).
[[nodiscard]] torch::Tensor batch_norm_from_sums(const torch::Tensor& y, const torch::Tensor& sums,
                                                 torch::nn::BatchNorm2dImpl& bn);
}  // namespace detail

}  // namespace gpuperf
