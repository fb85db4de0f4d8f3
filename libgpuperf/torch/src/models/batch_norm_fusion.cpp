// relu(batch_norm(x) + z) in training mode, fused each way: on gpuperf's own kernels
// (batch_norm_kernels.cu) where they run, else as one cuDNN call each way: cuDNN's NHWC batch norm
// with its add and ReLU epilogue (cudnnBatchNormalizationForwardTrainingEx / BackwardEx with
// CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION), the kernels PyTorch's own BatchNorm runs, less the
// separate ReLU, residual add and ReLU-backward kernels.

#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <climits>
#include <cstdint>
#include <exception>
#include <tuple>

#include "gpuperf/base/error.h"
#include "gpuperf/models/fusion.h"
#include "models/conv_statistics.h"
#include "models/kernel_dtype.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "models/batch_norm_kernels.h"
#endif

#if GPUPERF_WITH_CUDNN
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/Exceptions.h>
#include <c10/cuda/CUDAGuard.h>
#include <ATen/cudnn/Descriptors.h>
#include <ATen/cudnn/Handle.h>
#endif

namespace gpuperf {
namespace {

torch::Tensor separate_ops(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn,
                           const torch::Tensor& z) {
  torch::Tensor out = bn.forward(x);
  return torch::relu(z.defined() ? out + z : out);
}

[[maybe_unused]] bool float_vector(const torch::Tensor& t, std::int64_t channels,
                                   const torch::Tensor& x) {
  return t.defined() && t.scalar_type() == torch::kFloat && t.dim() == 1 && t.size(0) == channels &&
         t.is_contiguous() && t.device() == x.device();
}

// bn in training mode with affine fp32 parameters, running statistics and a momentum, for x's
// channels on x's device.
[[maybe_unused]] bool training_parameters(const torch::Tensor& x,
                                          const torch::nn::BatchNorm2dImpl& bn) {
  const auto& o = bn.options;
  if (!bn.is_training() || !o.affine() || !o.track_running_stats() || !o.momentum().has_value())
    return false;
  const std::int64_t channels = x.size(1);
  return float_vector(bn.weight, channels, x) && float_vector(bn.bias, channels, x) &&
         float_vector(bn.running_mean, channels, x) && float_vector(bn.running_var, channels, x);
}

// z (if defined) of x's shape, dtype, device and strides.
[[maybe_unused]] bool same_layout(const torch::Tensor& x, const torch::Tensor& z) {
  return !z.defined() || (z.sizes() == x.sizes() && z.scalar_type() == x.scalar_type() &&
                          z.device() == x.device() && z.strides() == x.strides());
}

#if GPUPERF_WITH_CUDA_KERNELS

torch::Tensor floats(std::int64_t n, const torch::Tensor& like) {
  return at::empty({n}, like.options().dtype(torch::kFloat));
}

struct OwnBatchNorm : public torch::autograd::Function<OwnBatchNorm> {
  // As BatchNormAddRelu (and, without `relu`, BatchNorm alone), on gpuperf's kernels: saves x,
  // the ReLU mask and the batch's statistics. `add` implies `relu`. `sums` (fp32 [2, C], or
  // empty): x's per-channel sums and sums of squares from the convolution that wrote x; no
  // gradient flows to them (the backward's formula already counts the statistics' dependence on
  // x).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const torch::Tensor& z, bool add, bool relu,
                               torch::Tensor running_mean, torch::Tensor running_var,
                               double momentum, double eps, const torch::Tensor& sums) {
    const c10::cuda::CUDAGuard guard(x.device());
    const std::int64_t channels = x.size(1);
    const std::int64_t pixels = x.numel() / channels;
    const detail::NhwcDtype dtype = detail::nhwc_dtype(x.scalar_type());
    const int device = x.device().index();
    const detail::BatchNormWorkspace sizes =
        detail::batch_norm_workspace(dtype, pixels, channels, device);
    torch::Tensor y = at::empty_like(x);
    torch::Tensor mask = at::empty({relu ? sizes.mask_bytes : 0}, x.options().dtype(torch::kByte));
    const bool given = sums.numel() > 0;
    // With the convolution's sums, the partials serve the recheck of ill-conditioned channels.
    torch::Tensor partial = floats(sizes.partial_floats, x);
    torch::Tensor recheck = at::empty({given ? channels : 0}, x.options().dtype(torch::kInt));
    torch::Tensor save_mean = floats(channels, x);
    torch::Tensor save_invstd = floats(channels, x);
    torch::Tensor scale_shift = floats(2 * channels, x);
    const detail::BatchNormChannels c{
        weight.data_ptr<float>(),       bias.data_ptr<float>(),
        running_mean.data_ptr<float>(), running_var.data_ptr<float>(),
        save_mean.data_ptr<float>(),    save_invstd.data_ptr<float>(),
        scale_shift.data_ptr<float>(),  scale_shift.data_ptr<float>() + channels};
    C10_CUDA_CHECK(detail::batch_norm_forward(
        dtype, x.data_ptr(), add ? z.data_ptr() : nullptr, y.data_ptr(),
        relu ? mask.data_ptr<std::uint8_t>() : nullptr, partial.data_ptr<float>(),
        given ? sums.data_ptr<float>() : nullptr, given ? recheck.data_ptr<int>() : nullptr, c,
        momentum, eps, pixels, channels, device, at::cuda::getCurrentCUDAStream()));
    ctx->save_for_backward({x, weight, mask, save_mean, save_invstd});
    ctx->saved_data["add"] = add;
    ctx->saved_data["relu"] = relu;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const c10::cuda::CUDAGuard guard(x.device());
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& mask = saved[2];
    const bool add = ctx->saved_data["add"].toBool();
    const bool relu = ctx->saved_data["relu"].toBool();
    const torch::Tensor grad_y = grad_outputs[0].contiguous(at::MemoryFormat::ChannelsLast);
    const std::int64_t channels = x.size(1);
    const std::int64_t pixels = x.numel() / channels;
    const detail::NhwcDtype dtype = detail::nhwc_dtype(x.scalar_type());
    const int device = x.device().index();
    torch::Tensor grad_x = at::empty_like(x);
    torch::Tensor grad_z = add ? at::empty_like(x) : torch::Tensor();
    torch::Tensor grad_weight = at::empty_like(weight);
    torch::Tensor grad_bias = at::empty_like(weight);
    torch::Tensor partial =
        floats(detail::batch_norm_workspace(dtype, pixels, channels, device).partial_floats, x);
    torch::Tensor coefficients = floats(3 * channels, x);
    const detail::BatchNormChannels c{weight.data_ptr<float>(),
                                      nullptr,
                                      nullptr,
                                      nullptr,
                                      saved[3].data_ptr<float>(),
                                      saved[4].data_ptr<float>(),
                                      coefficients.data_ptr<float>(),
                                      coefficients.data_ptr<float>() + channels};
    C10_CUDA_CHECK(detail::batch_norm_backward(
        dtype, grad_y.data_ptr(), x.data_ptr(), relu ? mask.data_ptr<std::uint8_t>() : nullptr,
        grad_x.data_ptr(), add ? grad_z.data_ptr() : nullptr, grad_weight.data_ptr<float>(),
        grad_bias.data_ptr<float>(), partial.data_ptr<float>(), c, pixels, channels, device,
        at::cuda::getCurrentCUDAStream()));
    return {grad_x, grad_weight, grad_bias, grad_z, {}, {}, {}, {}, {}, {}, {}};
  }
};

#endif  // GPUPERF_WITH_CUDA_KERNELS

#if GPUPERF_WITH_CUDNN

// Persistent spatial mode: the one cuDNN's fused add/activation ops support, and the one PyTorch's
// cuDNN BatchNorm uses in training.
constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;

// Descriptors and handle for one call on `x` (NHWC) with per-channel parameters like `weight`.
struct CudnnBatchNorm {
  CudnnBatchNorm(const torch::Tensor& x, const torch::Tensor& weight, bool add)
      : guard(x.device()),
        handle(at::native::getCudnnHandle()),
        data(x, /*pad=*/4),
        params(weight.view({1, -1, 1, 1}), /*pad=*/4),
        ops(add ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION) {
    AT_CUDNN_CHECK(cudnnSetStream(handle, at::cuda::getCurrentCUDAStream()));
    // NaNs propagate, as torch::relu's do.
    AT_CUDNN_CHECK(cudnnSetActivationDescriptor(relu.mut_desc(), CUDNN_ACTIVATION_RELU,
                                                CUDNN_PROPAGATE_NAN, /*coef=*/0.0));
  }
  cudnnTensorDescriptor_t add_desc() const {
    return ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION ? data.desc() : nullptr;
  }

  c10::cuda::CUDAGuard guard;  // x's device current for the handle, the stream and the calls
  cudnnHandle_t handle;
  at::native::TensorDescriptor data;    // x, z, y and their gradients: one shape and layout
  at::native::TensorDescriptor params;  // weight, bias, running and saved statistics: [1, C, 1, 1]
  at::native::ActivationDescriptor relu;
  cudnnBatchNormOps_t ops;
};

torch::Tensor bytes(std::size_t size, const torch::Tensor& like) {
  return at::empty({static_cast<std::int64_t>(size)}, like.options().dtype(torch::kByte));
}

void* data_or_null(const torch::Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

struct BatchNormAddRelu : public torch::autograd::Function<BatchNormAddRelu> {
  // relu(bn(x) + z) with `add`, relu(bn(x)) without (then `z` is a placeholder: autograd takes
  // no undefined tensor inputs). Updates running_mean / running_var in place, as BatchNorm does.
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const torch::Tensor& z, bool add, torch::Tensor running_mean,
                               torch::Tensor running_var, double momentum, double eps) {
    const CudnnBatchNorm call(x, weight, add);
    std::size_t workspace_size = 0;
    std::size_t reserve_size = 0;
    AT_CUDNN_CHECK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        call.handle, kMode, call.ops, call.data.desc(), call.add_desc(), call.data.desc(),
        call.params.desc(), call.relu.desc(), &workspace_size));
    AT_CUDNN_CHECK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
        call.handle, kMode, call.ops, call.relu.desc(), call.data.desc(), &reserve_size));
    torch::Tensor y = at::empty_like(x);
    torch::Tensor workspace = bytes(workspace_size, x);
    torch::Tensor reserve = bytes(reserve_size, x);
    torch::Tensor save_mean = at::empty({x.size(1)}, weight.options());
    torch::Tensor save_inv_var = at::empty({x.size(1)}, weight.options());
    const float one = 1;
    const float zero = 0;
    AT_CUDNN_CHECK(cudnnBatchNormalizationForwardTrainingEx(
        call.handle, kMode, call.ops, &one, &zero, call.data.desc(), x.data_ptr(), call.add_desc(),
        add ? z.data_ptr() : nullptr, call.data.desc(), y.data_ptr(), call.params.desc(),
        weight.data_ptr(), bias.data_ptr(), momentum, running_mean.data_ptr(),
        running_var.data_ptr(), eps, save_mean.data_ptr(), save_inv_var.data_ptr(),
        call.relu.desc(), workspace.data_ptr(), workspace_size, reserve.data_ptr(), reserve_size));
    ctx->save_for_backward({x, y, weight, bias, save_mean, save_inv_var, reserve});
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["add"] = add;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& y = saved[1];
    const torch::Tensor& weight = saved[2];
    const torch::Tensor& bias = saved[3];
    const torch::Tensor& reserve = saved[6];
    const bool add = ctx->saved_data["add"].toBool();
    const torch::Tensor grad_y = grad_outputs[0].contiguous(x.suggest_memory_format());
    const CudnnBatchNorm call(x, weight, add);
    std::size_t workspace_size = 0;
    AT_CUDNN_CHECK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(
        call.handle, kMode, call.ops, call.data.desc(), call.data.desc(), call.data.desc(),
        call.add_desc(), call.data.desc(), call.params.desc(), call.relu.desc(), &workspace_size));
    torch::Tensor workspace = bytes(workspace_size, x);
    torch::Tensor grad_x = at::empty_like(x);
    torch::Tensor grad_z = add ? at::empty_like(x) : torch::Tensor();
    torch::Tensor grad_weight = at::empty_like(weight);
    torch::Tensor grad_bias = at::empty_like(weight);
    const float one = 1;
    const float zero = 0;
    AT_CUDNN_CHECK(cudnnBatchNormalizationBackwardEx(
        call.handle, kMode, call.ops, &one, &zero, &one, &zero, call.data.desc(), x.data_ptr(),
        call.data.desc(), y.data_ptr(), call.data.desc(), grad_y.data_ptr(), call.add_desc(),
        data_or_null(grad_z), call.data.desc(), grad_x.data_ptr(), call.params.desc(),
        weight.data_ptr(), bias.data_ptr(), grad_weight.data_ptr(), grad_bias.data_ptr(),
        ctx->saved_data["eps"].toDouble(), saved[4].data_ptr(), saved[5].data_ptr(),
        call.relu.desc(), workspace.data_ptr(), workspace_size, reserve.data_ptr(),
        static_cast<std::size_t>(reserve.numel())));
    return {grad_x, grad_weight, grad_bias, grad_z, {}, {}, {}, {}, {}};
  }
};

#endif  // GPUPERF_WITH_CUDNN

}  // namespace

namespace {
thread_local BatchCountScope* open_scope = nullptr;
}  // namespace

BatchCountScope::BatchCountScope() : outer_(open_scope), exceptions_(std::uncaught_exceptions()) {
  open_scope = this;
}

BatchCountScope::~BatchCountScope() noexcept(false) {
  open_scope = outer_;
  if (counters_.empty()) return;
  if (outer_ != nullptr) {
    outer_->counters_.insert(outer_->counters_.end(), counters_.begin(), counters_.end());
    return;
  }
  // Unwinding from a failed forward pass: its counts do not matter, and throwing here would end
  // the program.
  if (std::uncaught_exceptions() > exceptions_) return;
  torch::NoGradGuard no_grad;
  at::_foreach_add_(counters_, 1);
}

bool BatchCountScope::defer(const torch::Tensor& counter) {
  if (open_scope == nullptr) return false;
  open_scope->counters_.push_back(counter);
  return true;
}

bool cudnn_batch_norm_fusion_applies(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& bn,
                                     const torch::Tensor& z) {
#if GPUPERF_WITH_CUDNN
  if (!x.defined() || !x.is_cuda() || !at::globalContext().userEnabledCuDNN() ||
      !at::Context::hasCuDNN())
    return false;
  if (x.dim() != 4 || x.scalar_type() != torch::kHalf || x.numel() >= INT_MAX) return false;
  if (!x.is_contiguous(at::MemoryFormat::ChannelsLast)) return false;
  // cuDNN's fused NHWC kernels want the channels in groups of 4 (8-byte vectors of fp16).
  if (x.size(1) % 4 != 0) return false;
  return training_parameters(x, bn) && same_layout(x, z);
#else
  (void)x;
  (void)bn;
  (void)z;
  return false;
#endif
}

bool batch_norm_kernel_applies(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& bn,
                               const torch::Tensor& z) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (!x.defined() || !x.is_cuda() || x.dim() != 4 || !detail::own_kernel_dtype(x.scalar_type()))
    return false;
  if (!x.is_contiguous(at::MemoryFormat::ChannelsLast) || !detail::aligned16(x) ||
      !detail::aligned16(z))
    return false;
  const std::int64_t channels = x.size(1);
  const int width = detail::batch_norm_vector_width(detail::nhwc_dtype(x.scalar_type()));
  // More than one value per channel, as BatchNorm wants in training; int-sized channel counts.
  if (channels == 0 || channels % width != 0 || channels > INT_MAX / width ||
      x.numel() / channels < 2)
    return false;
  return training_parameters(x, bn) && same_layout(x, z) &&
         detail::own_kernels_run_on(x.device().index());
#else
  (void)x;
  (void)bn;
  (void)z;
  return false;
#endif
}

namespace {

// As BatchNorm's forward does before the statistics it updates with the momentum: counts the
// batch, at the end of the open BatchCountScope if there is one.
void count_batch(torch::nn::BatchNorm2dImpl& bn) {
  if (BatchCountScope::defer(bn.num_batches_tracked)) return;
  torch::NoGradGuard no_grad;
  bn.num_batches_tracked += 1;
}

}  // namespace

torch::Tensor batch_norm_add_relu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn,
                                  const torch::Tensor& z, bool fused, bool* ran_fused) {
  if (ran_fused) *ran_fused = false;
  if (!fused) return separate_ops(x, bn, z);
  const bool own = batch_norm_kernel_applies(x, bn, z);
  if (!own && !cudnn_batch_norm_fusion_applies(x, bn, z)) return separate_ops(x, bn, z);
  if (ran_fused) *ran_fused = true;
  count_batch(bn);
  const bool add = z.defined();
  const torch::Tensor addend = add ? z : at::empty({0}, x.options());
#if GPUPERF_WITH_CUDA_KERNELS
  if (own) {
    return OwnBatchNorm::apply(x, bn.weight, bn.bias, addend, add, /*relu=*/true, bn.running_mean,
                               bn.running_var, *bn.options.momentum(), bn.options.eps(),
                               at::empty({0}, x.options().dtype(torch::kFloat)));
  }
#endif
#if GPUPERF_WITH_CUDNN
  return BatchNormAddRelu::apply(x, bn.weight, bn.bias, addend, add, bn.running_mean,
                                 bn.running_var, *bn.options.momentum(), bn.options.eps());
#else
  return separate_ops(x, bn, z);
#endif
}

torch::Tensor fused_batch_norm(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn, bool fused,
                               bool* ran_fused) {
  if (ran_fused) *ran_fused = false;
  if (!fused || !batch_norm_kernel_applies(x, bn, {})) return bn.forward(x);
#if GPUPERF_WITH_CUDA_KERNELS
  if (ran_fused) *ran_fused = true;
  count_batch(bn);
  return OwnBatchNorm::apply(x, bn.weight, bn.bias, at::empty({0}, x.options()), /*add=*/false,
                             /*relu=*/false, bn.running_mean, bn.running_var,
                             *bn.options.momentum(), bn.options.eps(),
                             at::empty({0}, x.options().dtype(torch::kFloat)));
#else
  return bn.forward(x);
#endif
}

namespace {

// bn(y), with `relu` relu(bn(y) + z), for a convolution's output `y`: where `sums` holds y's
// statistics from the convolution's epilogue (else undefined) and the batch norm runs on
// gpuperf's kernels, they take the sums and make no statistics pass; otherwise
// batch_norm_add_relu or fused_batch_norm.
// NOLINTBEGIN(readability-non-const-parameter): written in the CUDA kernels' branch
torch::Tensor batch_norm_of_conv(const torch::Tensor& y, const torch::Tensor& sums,
                                 torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& z, bool relu,
                                 bool fused, bool* ran_fused, bool* statistics_from_conv) {
  // NOLINTEND(readability-non-const-parameter)
#if GPUPERF_WITH_CUDA_KERNELS
  if (sums.defined() && batch_norm_kernel_applies(y, bn, z)) {
    if (ran_fused) *ran_fused = true;
    if (statistics_from_conv) *statistics_from_conv = true;
    count_batch(bn);
    const bool add = z.defined();
    return OwnBatchNorm::apply(y, bn.weight, bn.bias, add ? z : at::empty({0}, y.options()), add,
                               relu, bn.running_mean, bn.running_var, *bn.options.momentum(),
                               bn.options.eps(), sums);
  }
#else
  (void)sums;  // never defined: no kernels to take them
  (void)statistics_from_conv;
#endif
  return relu ? batch_norm_add_relu(y, bn, z, fused, ran_fused)
              : fused_batch_norm(y, bn, fused, ran_fused);
}

// bn(conv(x, weight)), with `relu` relu(bn(...) + z): the convolution with its statistics where
// conv2d_with_statistics applies, else alone; then batch_norm_of_conv.
torch::Tensor conv_then_batch_norm(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                   const torch::Tensor& weight, torch::nn::BatchNorm2dImpl& bn,
                                   const torch::Tensor& z, bool relu, bool fused, bool* ran_fused,
                                   bool* statistics_from_conv) {
  torch::Tensor y;
  torch::Tensor sums;
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused && bn.is_training())
    std::tie(y, sums) = detail::conv2d_with_statistics(x, conv, weight);
#endif
  if (!y.defined()) y = conv2d_weight_bias(x, conv, weight, {});
  return batch_norm_of_conv(y, sums, bn, z, relu, fused, ran_fused, statistics_from_conv);
}

}  // namespace

torch::Tensor conv2d_batch_norm_relu(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                     const torch::Tensor& weight, torch::nn::BatchNorm2dImpl& bn,
                                     const torch::Tensor& z, bool fused, bool* ran_fused,
                                     bool* statistics_from_conv) {
  if (ran_fused) *ran_fused = false;
  if (statistics_from_conv) *statistics_from_conv = false;
  return conv_then_batch_norm(x, conv, weight, bn, z, /*relu=*/true, fused, ran_fused,
                              statistics_from_conv);
}

torch::Tensor conv2d_batch_norm(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv,
                                const torch::Tensor& weight, torch::nn::BatchNorm2dImpl& bn,
                                bool fused, bool* ran_fused, bool* statistics_from_conv) {
  if (ran_fused) *ran_fused = false;
  if (statistics_from_conv) *statistics_from_conv = false;
  return conv_then_batch_norm(x, conv, weight, bn, {}, /*relu=*/false, fused, ran_fused,
                              statistics_from_conv);
}

std::pair<torch::Tensor, torch::Tensor> conv1x1_batch_norm_relu_and_shortcut(
    const torch::Tensor& x, const torch::nn::Conv2dImpl& conv, const torch::Tensor& weight,
    torch::nn::BatchNorm2dImpl& bn, bool fused, bool* ran_fused, bool* statistics_from_conv) {
  if (ran_fused) *ran_fused = false;
  if (statistics_from_conv) *statistics_from_conv = false;
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused && bn.is_training()) {
    auto [y, shortcut, sums] = detail::conv1x1_and_shortcut_with_statistics(x, conv, weight);
    if (y.defined()) {
      return {batch_norm_of_conv(y, sums, bn, {}, /*relu=*/true, fused, ran_fused,
                                 statistics_from_conv),
              shortcut};
    }
  }
#endif
  auto [y, shortcut] = conv1x1_and_shortcut(x, conv, weight, fused);
  return {batch_norm_add_relu(y, bn, {}, fused, ran_fused), shortcut};
}

namespace detail {

torch::Tensor batch_norm_from_sums(const torch::Tensor& y, const torch::Tensor& sums,
                                   torch::nn::BatchNorm2dImpl& bn) {
  if (!batch_norm_kernel_applies(y, bn, {})) {
    throw Error("batch_norm_from_sums: gpuperf's batch norm kernels do not apply to this tensor");
  }
  bool from_sums = false;
  torch::Tensor out =
      batch_norm_of_conv(y, sums, bn, {}, /*relu=*/false, /*fused=*/true, nullptr, &from_sums);
  if (!from_sums) throw Error("batch_norm_from_sums: the batch norm did not take the sums");
  return out;
}

}  // namespace detail
}  // namespace gpuperf
