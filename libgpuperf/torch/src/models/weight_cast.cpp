// A model's weights cast for a mixed-precision forward pass in one kernel, and their gradients
// cast back in one (cast_kernels.cu), where autocast casts each weight in its own kernel both ways.

#include <ATen/ops/empty_like.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <vector>

#include "gpuperf/models/fusion.h"
#include "gpuperf/optim/weight_copies.h"
#include "models/kernel_dtype.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "models/cast_kernels.h"
#endif

namespace gpuperf {
namespace {

#if GPUPERF_WITH_CUDA_KERNELS

// Whether `a` and `b` (one shape) hold their elements in the same order in dense memory: the
// same strides except along dimensions of size 1, whose stride never counts (a 1x1 convolution's
// gradient from a GEMM is contiguous, its channels_last weight has other strides there).
bool same_memory_order(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.sizes() != b.sizes() || !a.is_non_overlapping_and_dense() ||
      !b.is_non_overlapping_and_dense())
    return false;
  for (std::int64_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) > 1 && a.stride(d) != b.stride(d)) return false;
  }
  return true;
}

// `from` into `to` tensor by tensor, in one kernel per 48 (all of `from` in one dtype, all of
// `to` in one, each pair dense with the same strides).
void cast_all(const std::vector<torch::Tensor>& from, const std::vector<torch::Tensor>& to) {
  if (from.empty()) return;
  const c10::cuda::CUDAGuard guard(from[0].device());
  std::vector<const void*> in;
  std::vector<void*> out;
  std::vector<std::int64_t> numel;
  for (std::size_t i = 0; i < from.size(); ++i) {
    in.push_back(from[i].data_ptr());
    out.push_back(to[i].data_ptr());
    numel.push_back(from[i].numel());
  }
  C10_CUDA_CHECK(detail::cast_tensors(
      detail::nhwc_dtype(from[0].scalar_type()), in.data(), detail::nhwc_dtype(to[0].scalar_type()),
      out.data(), numel.data(), static_cast<int>(from.size()), at::cuda::getCurrentCUDAStream()));
}

// The cast as one autograd node: forward, the weights in `dtype` (each with its weight's strides);
// backward, the gradients cast back to the weights' dtype in one kernel too (each into its
// weight's strides). A gradient laid out unlike its weight is cast on its own (ATen's
// conversion).
struct CastWeights : public torch::autograd::Function<CastWeights> {
  // A TensorList, not a vector: autograd takes each tensor of a TensorList argument as an input
  // (and a vector as an opaque value, leaving the outputs without a gradient function).
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                at::TensorList weights, c10::ScalarType dtype) {
    const std::vector<torch::Tensor> cast = empty_back_to_back(weights.vec(), dtype);
    cast_all(weights.vec(), cast);
    ctx->save_for_backward(weights.vec());
    ctx->saved_data["dtype"] = dtype;
    // A weight whose cast took no part in the loss gets no gradient (as with autocast's own
    // casts), not a cast of zeros.
    ctx->set_materialize_grads(false);
    return cast;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto weights = ctx->get_saved_variables();
    const c10::ScalarType dtype = ctx->saved_data["dtype"].toScalarType();
    torch::autograd::variable_list result(weights.size() + 1);  // the last: dtype's, none
    std::vector<torch::Tensor> from, to;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const torch::Tensor& g = grads[i];
      if (!g.defined() || !ctx->needs_input_grad(i)) continue;
      if (g.scalar_type() == dtype && g.device() == weights[i].device() &&
          same_memory_order(g, weights[i])) {
        result[i] = at::empty_like(weights[i]);
        from.push_back(g);
        to.push_back(result[i]);
      } else {
        result[i] = g.to(weights[i].scalar_type());
      }
    }
    cast_all(from, to);
    return result;
  }
};

#endif  // GPUPERF_WITH_CUDA_KERNELS

}  // namespace

bool cast_kernel_applies(const std::vector<torch::Tensor>& weights, c10::ScalarType dtype) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (weights.empty() || !detail::own_kernel_dtype(dtype)) return false;
  const torch::Tensor& first = weights[0];
  if (!first.defined() || !first.is_cuda() || !detail::own_kernel_dtype(first.scalar_type()) ||
      !detail::own_kernels_run_on(first.device().index()))
    return false;
  for (const auto& w : weights) {
    if (!w.defined() || w.device() != first.device() || w.scalar_type() != first.scalar_type() ||
        !w.is_non_overlapping_and_dense())
      return false;
  }
  return true;
#else
  (void)weights;
  (void)dtype;
  return false;
#endif
}

std::vector<torch::Tensor> cast_weights(const std::vector<torch::Tensor>& weights,
                                        c10::ScalarType dtype) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (cast_kernel_applies(weights, dtype)) {
    return CastWeights::apply(at::TensorList(weights), dtype);
  }
#endif
  std::vector<torch::Tensor> cast;
  cast.reserve(weights.size());
  for (const auto& w : weights) cast.push_back(w.to(dtype));
  return cast;
}

}  // namespace gpuperf
