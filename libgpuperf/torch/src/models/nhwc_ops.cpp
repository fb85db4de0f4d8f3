// Channel padding and global average pooling on gpuperf's kernels (nhwc_kernels.cu) where they
// apply, ATen's ops elsewhere.

#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>
#include <c10/core/GradMode.h>

#include <cstdint>
#include <cstdlib>  // EXPERIMENT switch

#include "gpuperf/models/fusion.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "models/nhwc_kernels.h"
#endif

namespace gpuperf {
namespace {

constexpr std::int64_t kPaddedChannels = 4;

[[maybe_unused]] bool kernel_dtype(c10::ScalarType t) {
  return t == torch::kFloat || t == torch::kHalf || t == torch::kBFloat16;
}

// A CUDA fp32/fp16/bf16 [N, C, H, W] tensor in channels_last that autograd does not record, on a
// GPU that gpuperf's kernels run on.
[[maybe_unused]] bool kernel_input(const torch::Tensor& x) {
#if GPUPERF_WITH_CUDA_KERNELS
  return x.defined() && x.is_cuda() && x.dim() == 4 && kernel_dtype(x.scalar_type()) &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) &&
         !(c10::GradMode::is_enabled() && x.requires_grad()) &&
         detail::own_kernels_run_on(x.device().index());
#else
  (void)x;
  return false;
#endif
}

#if GPUPERF_WITH_CUDA_KERNELS
detail::NhwcDtype nhwc_dtype(c10::ScalarType t) {
  switch (t) {
    case torch::kHalf:
      return detail::NhwcDtype::kHalf;
    case torch::kBFloat16:
      return detail::NhwcDtype::kBFloat16;
    default:
      return detail::NhwcDtype::kFloat;
  }
}
#endif

}  // namespace

bool pad_channels_kernel_applies(const torch::Tensor& x, c10::ScalarType dtype) {
  return std::getenv("GPUPERF_EXPERIMENT_BASELINE") == nullptr &&  // EXPERIMENT switch
         kernel_input(x) && kernel_dtype(dtype) && x.size(1) >= 1 &&
         x.size(1) <= kPaddedChannels;
}

torch::Tensor pad_channels_to_4(const torch::Tensor& x, c10::ScalarType dtype) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (pad_channels_kernel_applies(x, dtype)) {
    torch::Tensor out = at::empty({x.size(0), kPaddedChannels, x.size(2), x.size(3)},
                                  x.options().dtype(dtype), at::MemoryFormat::ChannelsLast);
    C10_CUDA_CHECK(detail::pad_channels_to_4(nhwc_dtype(x.scalar_type()), x.data_ptr(), x.size(1),
                                             nhwc_dtype(dtype), out.data_ptr(),
                                             x.size(0) * x.size(2) * x.size(3),
                                             at::cuda::getCurrentCUDAStream()));
    return out;
  }
#endif
  TORCH_CHECK(x.dim() == 4 && x.size(1) <= kPaddedChannels,
              "pad_channels_to_4: needs [N, C, H, W] with C <= 4, got ", x.sizes());
  return at::constant_pad_nd(x.to(dtype), {0, 0, 0, 0, 0, kPaddedChannels - x.size(1)})
      .contiguous(at::MemoryFormat::ChannelsLast);
}

bool average_pool_kernel_applies(const torch::Tensor& x) {
  return std::getenv("GPUPERF_EXPERIMENT_BASELINE") == nullptr &&  // EXPERIMENT switch
         kernel_input(x) && x.size(2) * x.size(3) > 0;
}

torch::Tensor global_average_pool(const torch::Tensor& x, bool fused) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused && average_pool_kernel_applies(x)) {
    torch::Tensor out = at::empty({x.size(0), x.size(1)}, x.options());
    C10_CUDA_CHECK(detail::global_average_pool(nhwc_dtype(x.scalar_type()), x.data_ptr(),
                                               out.data_ptr(), x.size(0), x.size(2) * x.size(3),
                                               x.size(1), at::cuda::getCurrentCUDAStream()));
    return out;
  }
#endif
  (void)fused;
  return at::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
}

}  // namespace gpuperf
