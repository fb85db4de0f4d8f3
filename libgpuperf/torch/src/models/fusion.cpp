#include "gpuperf/models/fusion.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/cudnn_convolution_add_relu.h>
#include <ATen/ops/cudnn_convolution_relu.h>
#include <ATen/ops/threshold_backward.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "compat.h"
#include "gpuperf/base/error.h"
#include "models/conv_statistics.h"

namespace gpuperf {
namespace {

struct ConvGeometry {
  std::vector<std::int64_t> stride, padding, dilation;
  std::int64_t groups = 1;
};

std::vector<std::int64_t> to_vector(const torch::ExpandingArray<2>& a) {
  return {a->begin(), a->end()};
}

// The module's geometry when its padding is explicit (an ExpandingArray) and zero-filled: the
// form cuDNN's fused calls take. 'valid'/'same' padding or another padding mode: nothing.
bool explicit_geometry(const torch::nn::Conv2dImpl& conv, ConvGeometry* out) {
  const auto& o = conv.options;
  const auto* padding = compat::variant_get_if<torch::ExpandingArray<2>>(o.padding());
  if (padding == nullptr ||
      compat::variant_get_if<torch::enumtype::kZeros>(o.padding_mode()) == nullptr) {
    return false;
  }
  out->stride = to_vector(o.stride());
  out->padding = to_vector(*padding);
  out->dilation = to_vector(o.dilation());
  out->groups = o.groups();
  return true;
}

// Whether cuDNN's fused calls can run on `x`: a CUDA tensor, cuDNN built in and enabled.
bool cudnn_usable(const torch::Tensor& x) {
  return x.is_cuda() && at::globalContext().userEnabledCuDNN() && at::Context::hasCuDNN();
}

// The geometry for cuDNN's fused calls when they apply to `x` and `conv` (see
// cudnn_fusion_applies); false otherwise.
bool fusion_geometry(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv, ConvGeometry* out) {
  return cudnn_usable(x) && explicit_geometry(conv, out);
}

// A channels_last [N, C, H, W] tensor's memory as the [N*H*W, C] matrix it is (a view).
torch::Tensor as_pixel_rows(const torch::Tensor& t) {
  return t.permute({0, 2, 3, 1}).reshape({-1, t.size(1)});
}

// The [N*H*W, C] matrix `rows` as the channels_last [N, C, H, W] tensor it is (a view).
torch::Tensor as_channels_last(const torch::Tensor& rows, const torch::Tensor& like) {
  return rows.view({like.size(0), like.size(2), like.size(3), rows.size(1)}).permute({0, 3, 1, 2});
}

// Autocast does not know the fused op: cast its operands as autocast casts conv2d's (to the
// autocast dtype, weights through autocast's per-region cache), so the gradient flows back to
// the fp32 parameters through the casts.
torch::Tensor autocast_operand(const torch::Tensor& t) {
  if (!t.defined() || !compat::autocast_enabled(c10::DeviceType::CUDA)) return t;
  return at::autocast::cached_cast(compat::autocast_dtype(c10::DeviceType::CUDA), t,
                                   c10::DeviceType::CUDA);
}

// relu(conv(x, w) + b) from one forward call, as two autograd nodes: FusedConvBias runs the call
// and returns the activation; its backward takes the incoming gradient as the pre-activation's
// and runs the convolution's backward (input, weight and bias). ReluFromOutput passes the
// activation through and masks the gradient with it (ReLU's derivative from its output, as
// autograd's ReluBackward does). One node doing both would hold the activation-sized incoming
// gradient through the convolution's backward: +0.12 GiB of peak memory on the seed's step
// (measured on the H200); with two, the engine frees it between them, as for the separate ops.
struct FusedConvBias : public torch::autograd::Function<FusedConvBias> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const ConvGeometry& g, bool cudnn) {
    torch::Tensor out;
    if (cudnn) {
      out = at::cudnn_convolution_relu(x, weight, bias, g.stride, g.padding, g.dilation, g.groups);
    } else {
      out = torch::relu(torch::conv2d(x, weight, bias, g.stride, g.padding, g.dilation, g.groups));
    }
    ctx->save_for_backward({x, weight});
    ctx->saved_data["stride"] = g.stride;
    ctx->saved_data["padding"] = g.padding;
    ctx->saved_data["dilation"] = g.dilation;
    ctx->saved_data["groups"] = g.groups;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& weight = saved[1];
    const std::vector<std::int64_t> bias_sizes{weight.size(0)};
    const std::vector<std::int64_t> output_padding(weight.dim() - 2, 0);
    const torch::Tensor& grad = grad_outputs[0];
    // The bias gradient of a channels_last gradient as one GEMM, ones[1, N*H*W] x grad[N*H*W,
    // C]: ATen's sum over (N, H, W) took 137 us of the seed's 1.17 ms step on the H200.
    const bool bias_by_gemm = ctx->needs_input_grad(2) && grad.is_cuda() && grad.dim() == 4 &&
                              grad.is_contiguous(at::MemoryFormat::ChannelsLast);
    auto [grad_x, grad_weight, grad_bias] = at::convolution_backward(
        grad, saved[0], weight, bias_sizes, ctx->saved_data["stride"].toIntVector(),
        ctx->saved_data["padding"].toIntVector(), ctx->saved_data["dilation"].toIntVector(),
        /*transposed=*/false, output_padding, ctx->saved_data["groups"].toInt(),
        {ctx->needs_input_grad(0), ctx->needs_input_grad(1),
         ctx->needs_input_grad(2) && !bias_by_gemm});
    if (bias_by_gemm) {
      const torch::Tensor rows = as_pixel_rows(grad);
      grad_bias = at::mm(at::ones({1, rows.size(0)}, rows.options()), rows).view({rows.size(1)});
    }
    return {grad_x, grad_weight, grad_bias, {}, {}};
  }
};

struct ReluFromOutput : public torch::autograd::Function<ReluFromOutput> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx,
                               const torch::Tensor& activation) {
    ctx->save_for_backward({activation});
    return activation;  // autograd returns it as a view carrying this node
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    return {at::threshold_backward(grad_outputs[0], ctx->get_saved_variables()[0], 0)};
  }
};

// conv1x1(x) and x itself as one autograd node. Forward: one GEMM, [N*H*W, C] x [C, K]. Backward:
// the gradient reaching x from both outputs in one GEMM, dx = dshortcut + dy W (cuBLAS adds the
// shortcut's gradient in its epilogue), and dW = dy^T x.
// With a `statistics` plan, the forward is cuDNN's convolution + statistics graph instead of the
// GEMM (conv_statistics.h), and a third output holds the sums (no gradient reaches them).
struct Conv1x1AndShortcut : public torch::autograd::Function<Conv1x1AndShortcut> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& weight,
                                                const detail::ConvStatisticsPlan* statistics) {
    ctx->save_for_backward({x, weight});
    if (statistics != nullptr) {
      // std::tie, not a structured binding: clang-tidy 14's analyzer reads that pair's second
      // tensor as uninitialized when it is destroyed (clang-analyzer-core).
      torch::Tensor y;
      torch::Tensor sums;
      std::tie(y, sums) = detail::conv_with_statistics(*statistics, x, weight);
      ctx->mark_non_differentiable({sums});
      ctx->set_materialize_grads(false);  // the backward checks which gradients it got
      return {y, x, sums};
    }
    const torch::Tensor w = weight.view({weight.size(0), weight.size(1)});
    const torch::Tensor y = as_channels_last(at::mm(as_pixel_rows(x), w.t()), x);
    return {y, x};  // autograd returns x as a view carrying this node
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor w = weight.view({weight.size(0), weight.size(1)});
    torch::Tensor grad_x;
    torch::Tensor grad_weight;
    const torch::Tensor& grad_shortcut = grad_outputs[1];
    if (grad_outputs[0].defined()) {
      const torch::Tensor dy =
          as_pixel_rows(grad_outputs[0].contiguous(at::MemoryFormat::ChannelsLast));
      if (ctx->needs_input_grad(1)) {
        grad_weight = at::mm(dy.t(), as_pixel_rows(x)).view(weight.sizes());
      }
      // The shortcut's gradient buffer becomes x's when nothing else holds it: autograd hands
      // it over in this call's argument and the list it was copied from (use count 2); another
      // holder, e.g. an add node that passed one gradient to both its inputs, must not see it
      // change. (An out-of-place addmm would copy it first: 1.4 ms more per ResNet-50 step on
      // the H200 than this.)
      const bool own_shortcut_grad = grad_shortcut.defined() && grad_shortcut.use_count() <= 2 &&
                                     grad_shortcut.scalar_type() == dy.scalar_type();
      if (!grad_shortcut.defined()) {
        grad_x = as_channels_last(at::mm(dy, w), x);
      } else if (own_shortcut_grad) {
        grad_x = grad_shortcut.contiguous(at::MemoryFormat::ChannelsLast);
        as_pixel_rows(grad_x).addmm_(dy, w);
      } else {
        grad_x = grad_shortcut + as_channels_last(at::mm(dy, w), x);
      }
    } else {
      grad_x = grad_shortcut;
    }
    return {grad_x, grad_weight, torch::Tensor()};
  }
};

// conv(x, weight) and its output's per-channel sums from one cuDNN graph (conv_statistics.h).
// The sums take no gradient: the batch norm that reads them computes x's full gradient itself.
struct ConvWithStatistics : public torch::autograd::Function<ConvWithStatistics> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& weight,
                                                const ConvGeometry& g,
                                                const detail::ConvStatisticsPlan* plan) {
    auto [y, sums] = detail::conv_with_statistics(*plan, x, weight);
    ctx->save_for_backward({x, weight});
    ctx->saved_data["stride"] = g.stride;
    ctx->saved_data["padding"] = g.padding;
    ctx->saved_data["dilation"] = g.dilation;
    ctx->mark_non_differentiable({sums});
    // No zeros made up for the sums' gradient, which the backward never reads.
    ctx->set_materialize_grads(false);
    return {y, sums};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& weight = saved[1];
    if (!grad_outputs[0].defined()) return {torch::Tensor(), torch::Tensor(), {}, {}};
    const std::vector<std::int64_t> output_padding(weight.dim() - 2, 0);
    auto [grad_x, grad_weight, unused] = at::convolution_backward(
        grad_outputs[0], saved[0], weight, c10::nullopt, ctx->saved_data["stride"].toIntVector(),
        ctx->saved_data["padding"].toIntVector(), ctx->saved_data["dilation"].toIntVector(),
        /*transposed=*/false, output_padding, /*groups=*/1,
        {ctx->needs_input_grad(0), ctx->needs_input_grad(1), false});
    return {grad_x, grad_weight, {}, {}};
  }
};

torch::Tensor bias_or_zeros(const torch::Tensor& bias, const torch::Tensor& weight) {
  return bias.defined() ? bias : torch::zeros({weight.size(0)}, weight.options());
}

// Whether autograd records the call: a fused call that no gradient flows through skips the
// autograd nodes and calls cuDNN directly.
bool records_grad(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                  const torch::Tensor& z = {}) {
  return c10::GradMode::is_enabled() &&
         (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()) ||
          (z.defined() && z.requires_grad()));
}

// relu(conv(x, conv_weight) + bias) in geometry `g`: with `fused` and cuDNN usable for x, one
// cuDNN call (under autocast on its operands cast as conv2d's are); otherwise the separate ops.
torch::Tensor conv_bias_relu(const torch::Tensor& x, const torch::Tensor& conv_weight,
                             const torch::Tensor& bias, const ConvGeometry& g, bool fused) {
  if (fused && cudnn_usable(x)) {
    const torch::Tensor input = autocast_operand(x);
    const torch::Tensor weight = autocast_operand(conv_weight);
    const torch::Tensor b = autocast_operand(bias_or_zeros(bias, conv_weight));
    if (!records_grad(x, conv_weight, bias)) {
      // Not through the autograd nodes: ReluFromOutput hands its input back as a view, and a
      // view of an N=1 tensor gets a stride for the batch dimension from which the next op
      // reads NCHW, not channels_last. Measured on the H200: every following op then converted
      // layouts, and ResNet-50's batch-1 inference took 0.69 ms instead of about 0.38.
      return at::cudnn_convolution_relu(input, weight, b, g.stride, g.padding, g.dilation,
                                        g.groups);
    }
    return ReluFromOutput::apply(FusedConvBias::apply(input, weight, b, g, /*cudnn=*/true));
  }
  return torch::relu(at::conv2d(x, conv_weight, bias, g.stride, g.padding, g.dilation, g.groups));
}

}  // namespace

void release_fused_convolution_plans() { detail::release_conv_statistics_plans(); }

bool cudnn_fusion_applies(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv) {
  ConvGeometry unused;
  return fusion_geometry(x, conv, &unused);
}

torch::Tensor conv2d_bias(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                          const torch::Tensor& bias) {
  ConvGeometry g;
  if (explicit_geometry(conv, &g)) {
    return at::conv2d(x, conv.weight, bias, g.stride, g.padding, g.dilation, g.groups);
  }
  // Other padding forms ('same', 'valid', reflect, ...): the module's own forward (not const in
  // LibTorch, though it changes nothing), then the given bias in place of its own.
  torch::Tensor out = const_cast<torch::nn::Conv2dImpl&>(conv).forward(x);
  if (conv.bias.defined()) out = out - conv.bias.view({1, -1, 1, 1});
  return bias.defined() ? out + bias.view({1, -1, 1, 1}) : out;
}

bool explicit_zero_padding(const torch::nn::Conv2dImpl& conv) {
  ConvGeometry unused;
  return explicit_geometry(conv, &unused);
}

torch::Tensor conv2d_weight_bias(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                 const torch::Tensor& weight, const torch::Tensor& bias) {
  ConvGeometry g;
  TORCH_CHECK(explicit_geometry(conv, &g),
              "conv2d_weight_bias: the convolution needs explicit zero padding");
  return at::conv2d(x, weight, bias, g.stride, g.padding, g.dilation, g.groups);
}

torch::Tensor conv2d_bias_relu(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                               const torch::Tensor& bias, bool fused) {
  ConvGeometry g;
  if (!explicit_geometry(conv, &g)) return torch::relu(conv2d_bias(x, conv, bias));
  return conv_bias_relu(x, conv.weight, bias, g, fused);
}

torch::Tensor conv2d_bias_relu(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                               const torch::Tensor& weight, const torch::Tensor& bias, bool fused) {
  ConvGeometry g;
  TORCH_CHECK(explicit_geometry(conv, &g),
              "conv2d_bias_relu: a weight of its own needs explicit zero padding");
  return conv_bias_relu(x, weight, bias, g, fused);
}

bool conv1x1_shortcut_applies(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv) {
  ConvGeometry g;
  if (!explicit_geometry(conv, &g) || conv.bias.defined() || g.groups != 1) return false;
  const std::vector<std::int64_t> ones{1, 1};
  const std::vector<std::int64_t> zeros{0, 0};
  if (g.stride != ones || g.padding != zeros || g.dilation != ones) return false;
  if (conv.weight.dim() != 4 || conv.weight.size(2) != 1 || conv.weight.size(3) != 1) return false;
  if (!x.defined() || x.dim() != 4 || !x.is_floating_point() ||
      !x.is_contiguous(at::MemoryFormat::ChannelsLast) || x.size(1) != conv.weight.size(1))
    return false;
  // Under autocast the GEMM runs in the autocast dtype: x must already be in it (it is handed on
  // as the shortcut unchanged); without autocast, in the weight's.
  const auto device = x.device().type();
  if (device == c10::DeviceType::CUDA && compat::autocast_enabled(c10::DeviceType::CUDA)) {
    return x.scalar_type() == compat::autocast_dtype(c10::DeviceType::CUDA);
  }
  return x.scalar_type() == conv.weight.scalar_type() && x.device() == conv.weight.device();
}

std::pair<torch::Tensor, torch::Tensor> conv1x1_and_shortcut(const torch::Tensor& x,
                                                             const torch::nn::Conv2dImpl& conv,
                                                             bool fused) {
  if (!fused || !conv1x1_shortcut_applies(x, conv) || !c10::GradMode::is_enabled()) {
    return {const_cast<torch::nn::Conv2dImpl&>(conv).forward(x), x};
  }
  return conv1x1_and_shortcut(x, conv, conv.weight, fused);
}

std::pair<torch::Tensor, torch::Tensor> conv1x1_and_shortcut(const torch::Tensor& x,
                                                             const torch::nn::Conv2dImpl& conv,
                                                             const torch::Tensor& conv_weight,
                                                             bool fused) {
  if (!fused || !conv1x1_shortcut_applies(x, conv) || !c10::GradMode::is_enabled()) {
    return {conv2d_weight_bias(x, conv, conv_weight, {}), x};
  }
  const torch::Tensor weight = x.is_cuda() ? autocast_operand(conv_weight) : conv_weight;
  const detail::ConvStatisticsPlan* no_statistics = nullptr;  // the GEMM
  auto outputs = Conv1x1AndShortcut::apply(x, weight, no_statistics);
  return {outputs[0], outputs[1]};
}

namespace {

// The geometry and the plan for the fused convolution + statistics graph where it applies (see
// conv_statistics_fusion_applies); null otherwise.
const detail::ConvStatisticsPlan* statistics_plan(const torch::Tensor& x,
                                                  const torch::nn::Conv2dImpl& conv,
                                                  const torch::Tensor& weight, ConvGeometry* g) {
  if (!explicit_geometry(conv, g) || g->groups != 1 || !detail::conv_statistics_applies(x, weight))
    return nullptr;
  return detail::conv_statistics_plan(x, weight, g->stride, g->padding, g->dilation);
}

}  // namespace

bool conv_statistics_fusion_applies(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                    const torch::Tensor& weight) {
  ConvGeometry g;
  return statistics_plan(x, conv, weight, &g) != nullptr;
}

namespace detail {

torch::Tensor conv2d_statistics_into(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                     const torch::Tensor& weight, const torch::Tensor& sums) {
  ConvGeometry g;
  const ConvStatisticsPlan* plan = statistics_plan(x, conv, weight, &g);
  if (plan == nullptr || !sums.defined()) {
    throw Error("conv2d_statistics_into: the fused convolution + statistics does not apply");
  }
  return conv_with_statistics(*plan, x, weight, sums).first;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv1x1_and_shortcut_with_statistics(
    const at::Tensor& x, const torch::nn::Conv2dImpl& conv, const at::Tensor& conv_weight) {
  if (!conv1x1_shortcut_applies(x, conv) || !c10::GradMode::is_enabled()) return {};
  const torch::Tensor weight = autocast_operand(conv_weight);
  ConvGeometry g;
  const ConvStatisticsPlan* plan = statistics_plan(x, conv, weight, &g);
  if (plan == nullptr) return {};
  auto outputs = Conv1x1AndShortcut::apply(x, weight, plan);
  return {outputs[0], outputs[1], outputs[2]};
}

std::pair<at::Tensor, at::Tensor> conv2d_with_statistics(const at::Tensor& x,
                                                         const torch::nn::Conv2dImpl& conv,
                                                         const at::Tensor& weight) {
  ConvGeometry g;
  const ConvStatisticsPlan* plan = statistics_plan(x, conv, weight, &g);
  if (plan == nullptr) return {};
  if (!records_grad(x, weight, {})) return conv_with_statistics(*plan, x, weight);
  const auto outputs = ConvWithStatistics::apply(x, weight, g, plan);
  return {outputs[0], outputs[1]};
}

torch::Tensor conv2d_bias_relu_two_nodes(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                         const torch::Tensor& bias) {
  ConvGeometry g;
  if (!explicit_geometry(conv, &g)) {
    throw std::invalid_argument("conv2d_bias_relu_two_nodes: needs explicit zero padding");
  }
  return ReluFromOutput::apply(
      FusedConvBias::apply(x, conv.weight, bias_or_zeros(bias, conv.weight), g, /*cudnn=*/false));
}

}  // namespace detail

torch::Tensor conv2d_bias_add_relu(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                   const torch::Tensor& bias, const torch::Tensor& z, bool fused) {
  ConvGeometry g;
  if (fused && !records_grad(x, conv.weight, bias, z) && z.scalar_type() == x.scalar_type() &&
      fusion_geometry(x, conv, &g)) {
    return at::cudnn_convolution_add_relu(x, conv.weight, z, /*alpha=*/1,
                                          bias_or_zeros(bias, conv.weight), g.stride, g.padding,
                                          g.dilation, g.groups);
  }
  return torch::relu(conv2d_bias(x, conv, bias) + z);
}

torch::Tensor fold_batch_norm(torch::nn::Conv2dImpl& conv, const torch::nn::BatchNorm2dImpl& bn) {
  torch::NoGradGuard no_grad;
  const auto f64 = [](const torch::Tensor& t) { return t.to(torch::kDouble); };
  const torch::Tensor gamma =
      bn.options.affine() ? f64(bn.weight) : torch::ones_like(f64(bn.running_var));
  const torch::Tensor beta = bn.options.affine() ? f64(bn.bias) : torch::zeros_like(gamma);
  const torch::Tensor scale = gamma / torch::sqrt(f64(bn.running_var) + bn.options.eps());
  torch::Tensor shift = beta - f64(bn.running_mean) * scale;
  if (conv.bias.defined()) shift = shift + f64(conv.bias) * scale;
  conv.weight.copy_(f64(conv.weight) * scale.view({-1, 1, 1, 1}));
  return shift.to(conv.weight.scalar_type());
}

}  // namespace gpuperf
