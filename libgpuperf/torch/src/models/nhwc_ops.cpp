// Channel padding and global average pooling (with its gradient) on gpuperf's kernels
// (nhwc_kernels.cu) where they apply, ATen's ops elsewhere.

#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <vector>

#include "gpuperf/models/fusion.h"
#include "models/kernel_dtype.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace gpuperf {
namespace {

constexpr std::int64_t kPaddedChannels = 4;

bool recorded(const torch::Tensor& x) { return c10::GradMode::is_enabled() && x.requires_grad(); }

// A CUDA fp32/fp16/bf16 [N, C, H, W] tensor in channels_last on a GPU that gpuperf's kernels run
// on.
[[maybe_unused]] bool kernel_input(const torch::Tensor& x) {
#if GPUPERF_WITH_CUDA_KERNELS
  return x.defined() && x.is_cuda() && x.dim() == 4 && detail::own_kernel_dtype(x.scalar_type()) &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) &&
         detail::own_kernels_run_on(x.device().index());
#else
  (void)x;
  return false;
#endif
}

#if GPUPERF_WITH_CUDA_KERNELS
torch::Tensor average_pool(const torch::Tensor& x) {
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor out = at::empty({x.size(0), x.size(1)}, x.options());
  C10_CUDA_CHECK(detail::global_average_pool(detail::nhwc_dtype(x.scalar_type()), x.data_ptr(),
                                             out.data_ptr(), x.size(0), x.size(2) * x.size(3),
                                             x.size(1), at::cuda::getCurrentCUDAStream()));
  return out;
}

struct GlobalAveragePool : public torch::autograd::Function<GlobalAveragePool> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    ctx->saved_data["sizes"] = x.sizes().vec();
    return average_pool(x);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const torch::Tensor grad_y = grad_outputs[0].contiguous();
    const c10::cuda::CUDAGuard guard(grad_y.device());
    const std::vector<std::int64_t> sizes = ctx->saved_data["sizes"].toIntVector();
    torch::Tensor grad_x = at::empty(sizes, grad_y.options(), at::MemoryFormat::ChannelsLast);
    C10_CUDA_CHECK(detail::global_average_pool_backward(
        detail::nhwc_dtype(grad_y.scalar_type()), grad_y.data_ptr(), grad_x.data_ptr(), sizes[0],
        sizes[2] * sizes[3], sizes[1], at::cuda::getCurrentCUDAStream()));
    return {grad_x};
  }
};
#endif

}  // namespace

bool pad_channels_kernel_applies(const torch::Tensor& x, c10::ScalarType dtype) {
  return kernel_input(x) && !recorded(x) && detail::own_kernel_dtype(dtype) && x.size(1) >= 1 &&
         x.size(1) <= kPaddedChannels;
}

torch::Tensor pad_channels_to_4(const torch::Tensor& x, c10::ScalarType dtype) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (pad_channels_kernel_applies(x, dtype)) {
    const c10::cuda::CUDAGuard guard(x.device());
    torch::Tensor out = at::empty({x.size(0), kPaddedChannels, x.size(2), x.size(3)},
                                  x.options().dtype(dtype), at::MemoryFormat::ChannelsLast);
    C10_CUDA_CHECK(detail::pad_channels_to_4(
        detail::nhwc_dtype(x.scalar_type()), x.data_ptr(), x.size(1), detail::nhwc_dtype(dtype),
        out.data_ptr(), x.size(0) * x.size(2) * x.size(3), at::cuda::getCurrentCUDAStream()));
    return out;
  }
#endif
  TORCH_CHECK(x.dim() == 4 && x.size(1) <= kPaddedChannels,
              "pad_channels_to_4: needs [N, C, H, W] with C <= 4, got ", x.sizes());
  return at::constant_pad_nd(x.to(dtype), {0, 0, 0, 0, 0, kPaddedChannels - x.size(1)})
      .contiguous(at::MemoryFormat::ChannelsLast);
}

bool average_pool_kernel_applies(const torch::Tensor& x) {
  return kernel_input(x) && x.size(2) * x.size(3) > 0;
}

torch::Tensor global_average_pool(const torch::Tensor& x, bool fused) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused && average_pool_kernel_applies(x)) {
    return recorded(x) ? GlobalAveragePool::apply(x) : average_pool(x);
  }
#endif
  (void)fused;
  return at::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
}

}  // namespace gpuperf
