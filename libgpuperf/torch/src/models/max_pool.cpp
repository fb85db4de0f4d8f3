// max_pool2d for channels_last tensors on gpuperf's own kernels (max_pool_kernels.cu): the forward
// writes a one-byte window position per output element where ATen's writes an int64 index, and
// the backward gathers each input's gradient through them. On the H200 the pooling of a
// ResNet-50 training step takes 0.73 ms against 2.03 ms on cuDNN's pooling (whose backward
// recomputes every window) and 2.66 ms on ATen's (docs/results/2026-12-01-h200-own-kernels).

#include <ATen/ops/empty.h>
#include <ATen/ops/max_pool2d.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <vector>

#include "gpuperf/models/fusion.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "models/max_pool_kernels.h"
#include "models/nhwc_kernels.h"
#endif

namespace gpuperf {
namespace {

// PyTorch's output size without ceil mode or dilation.
[[maybe_unused]] std::int64_t pooled_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                          std::int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

#if GPUPERF_WITH_CUDA_KERNELS

detail::PoolDtype pool_dtype(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kHalf:
      return detail::PoolDtype::kHalf;
    case torch::kBFloat16:
      return detail::PoolDtype::kBFloat16;
    default:
      return detail::PoolDtype::kFloat;
  }
}

detail::PoolShape pool_shape(at::IntArrayRef input, at::IntArrayRef output, std::int64_t kernel,
                             std::int64_t stride, std::int64_t padding) {
  detail::PoolShape s;
  s.n = input[0];
  s.channels = input[1];
  s.height = input[2];
  s.width = input[3];
  s.out_height = output[2];
  s.out_width = output[3];
  s.kernel = static_cast<int>(kernel);
  s.stride = static_cast<int>(stride);
  s.padding = static_cast<int>(padding);
  return s;
}

torch::Tensor pooled_like(const torch::Tensor& x, std::int64_t kernel, std::int64_t stride,
                          std::int64_t padding, c10::ScalarType dtype) {
  return at::empty({x.size(0), x.size(1), pooled_size(x.size(2), kernel, stride, padding),
                    pooled_size(x.size(3), kernel, stride, padding)},
                   x.options().dtype(dtype), at::MemoryFormat::ChannelsLast);
}

// The output, and with `index` its window positions.
torch::Tensor indexed_max_pool(const torch::Tensor& x, std::int64_t kernel, std::int64_t stride,
                               std::int64_t padding, torch::Tensor* index) {
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = pooled_like(x, kernel, stride, padding, x.scalar_type());
  std::uint8_t* positions = nullptr;
  if (index != nullptr) {
    *index = pooled_like(x, kernel, stride, padding, torch::kByte);
    positions = index->data_ptr<std::uint8_t>();
  }
  C10_CUDA_CHECK(detail::max_pool_forward(pool_dtype(x), x.data_ptr(), y.data_ptr(), positions,
                                          pool_shape(x.sizes(), y.sizes(), kernel, stride, padding),
                                          at::cuda::getCurrentCUDAStream()));
  return y;
}

struct IndexedMaxPool : public torch::autograd::Function<IndexedMaxPool> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
    torch::Tensor index;
    torch::Tensor y = indexed_max_pool(x, kernel, stride, padding, &index);
    // Only the byte indices are kept for the backward, not x or y.
    ctx->save_for_backward({index});
    ctx->saved_data["sizes"] = x.sizes().vec();
    ctx->saved_data["kernel"] = kernel;
    ctx->saved_data["stride"] = stride;
    ctx->saved_data["padding"] = padding;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const torch::Tensor index = ctx->get_saved_variables()[0];
    const torch::Tensor grad_y = grad_outputs[0].contiguous(at::MemoryFormat::ChannelsLast);
    const c10::cuda::CUDAGuard guard(grad_y.device());
    const std::vector<std::int64_t> sizes = ctx->saved_data["sizes"].toIntVector();
    torch::Tensor grad_x = at::empty(sizes, grad_y.options(), at::MemoryFormat::ChannelsLast);
    C10_CUDA_CHECK(detail::max_pool_backward(
        pool_dtype(grad_y), grad_y.data_ptr(), index.data_ptr<std::uint8_t>(), grad_x.data_ptr(),
        pool_shape(sizes, grad_y.sizes(), ctx->saved_data["kernel"].toInt(),
                   ctx->saved_data["stride"].toInt(), ctx->saved_data["padding"].toInt()),
        at::cuda::getCurrentCUDAStream()));
    return {grad_x, {}, {}, {}};
  }
};

#endif  // GPUPERF_WITH_CUDA_KERNELS

[[maybe_unused]] bool window_accepted(const torch::Tensor& x, std::int64_t kernel,
                                      std::int64_t stride, std::int64_t padding) {
  // Windows as PyTorch allows them (padding at most half the window), each output non-empty.
  if (kernel < 1 || stride < 1 || padding < 0 || 2 * padding > kernel) return false;
  return pooled_size(x.size(2), kernel, stride, padding) >= 1 &&
         pooled_size(x.size(3), kernel, stride, padding) >= 1;
}

[[maybe_unused]] bool cuda_channels_last(const torch::Tensor& x) {
  return x.defined() && x.is_cuda() && x.dim() == 4 &&
         (x.scalar_type() == torch::kHalf || x.scalar_type() == torch::kBFloat16 ||
          x.scalar_type() == torch::kFloat) &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

}  // namespace

bool max_pool_kernels_apply(const torch::Tensor& x, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding) {
#if GPUPERF_WITH_CUDA_KERNELS
  return cuda_channels_last(x) && window_accepted(x, kernel, stride, padding) &&
         kernel * kernel <= detail::kMaxPoolWindowPositions &&
         detail::own_kernels_run_on(x.device().index());
#else
  (void)x;
  (void)kernel;
  (void)stride;
  (void)padding;
  return false;
#endif
}

torch::Tensor max_pool2d(const torch::Tensor& x, std::int64_t kernel, std::int64_t stride,
                         std::int64_t padding, bool fused) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused && max_pool_kernels_apply(x, kernel, stride, padding)) {
    if (at::GradMode::is_enabled() && x.requires_grad()) {
      return IndexedMaxPool::apply(x, kernel, stride, padding);
    }
    return indexed_max_pool(x, kernel, stride, padding, /*index=*/nullptr);
  }
#endif
  (void)fused;
  return at::max_pool2d(x, {kernel, kernel}, {stride, stride}, {padding, padding});
}

}  // namespace gpuperf
