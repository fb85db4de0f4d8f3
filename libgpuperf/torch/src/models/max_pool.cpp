// max_pool2d on cuDNN's pooling: the forward writes the output only, and the backward recomputes
// each window's maximum from the input and the output, where ATen's max_pool2d writes an int64
// index per output element and its NHWC backward gathers through them.

#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/max_pool2d.h>
#include <torch/csrc/autograd/custom_function.h>

#include <climits>
#include <cstdint>
#include <memory>

#include "gpuperf/models/fusion.h"

#if GPUPERF_WITH_CUDNN
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/Exceptions.h>
#include <ATen/cudnn/Descriptors.h>
#include <ATen/cudnn/Handle.h>
#endif

namespace gpuperf {
namespace {

// PyTorch's output size without ceil mode or dilation.
[[maybe_unused]] std::int64_t pooled_size(std::int64_t in, std::int64_t kernel,
                                          std::int64_t stride, std::int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

#if GPUPERF_WITH_CUDNN

struct PoolingDescriptorDeleter {
  void operator()(cudnnPoolingStruct* d) const { cudnnDestroyPoolingDescriptor(d); }
};

// Handle and descriptors for one call: `x` and `y` NHWC (their strides say so), a square window.
// The deterministic max mode: a window's gradient goes to one of its maxima, the same one each
// run, as ATen's index-based backward does (the first maximum in the window).
struct CudnnMaxPool {
  CudnnMaxPool(const torch::Tensor& x, const torch::Tensor& y, std::int64_t kernel,
               std::int64_t stride, std::int64_t padding)
      : handle(at::native::getCudnnHandle()), input(x, /*pad=*/4), output(y, /*pad=*/4) {
    AT_CUDNN_CHECK(cudnnSetStream(handle, at::cuda::getCurrentCUDAStream()));
    cudnnPoolingDescriptor_t raw = nullptr;
    AT_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&raw));
    pooling.reset(raw);
    const int k = static_cast<int>(kernel);
    const int s = static_cast<int>(stride);
    const int p = static_cast<int>(padding);
    // NaNs propagate, as ATen's max_pool2d does.
    AT_CUDNN_CHECK(cudnnSetPooling2dDescriptor(raw, CUDNN_POOLING_MAX_DETERMINISTIC,
                                               CUDNN_PROPAGATE_NAN, k, k, p, p, s, s));
  }

  cudnnHandle_t handle;
  at::native::TensorDescriptor input;
  at::native::TensorDescriptor output;
  std::unique_ptr<cudnnPoolingStruct, PoolingDescriptorDeleter> pooling;
};

struct MaxPool : public torch::autograd::Function<MaxPool> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
    torch::Tensor y = at::empty({x.size(0), x.size(1),
                                 pooled_size(x.size(2), kernel, stride, padding),
                                 pooled_size(x.size(3), kernel, stride, padding)},
                                x.options(), at::MemoryFormat::ChannelsLast);
    const CudnnMaxPool call(x, y, kernel, stride, padding);
    const float one = 1;
    const float zero = 0;
    AT_CUDNN_CHECK(cudnnPoolingForward(call.handle, call.pooling.get(), &one, call.input.desc(),
                                       x.data_ptr(), &zero, call.output.desc(), y.data_ptr()));
    ctx->save_for_backward({x, y});
    ctx->saved_data["kernel"] = kernel;
    ctx->saved_data["stride"] = stride;
    ctx->saved_data["padding"] = padding;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& y = saved[1];
    const torch::Tensor grad_y = grad_outputs[0].contiguous(at::MemoryFormat::ChannelsLast);
    const CudnnMaxPool call(x, y, ctx->saved_data["kernel"].toInt(),
                            ctx->saved_data["stride"].toInt(), ctx->saved_data["padding"].toInt());
    torch::Tensor grad_x = at::empty_like(x);
    const float one = 1;
    const float zero = 0;
    AT_CUDNN_CHECK(cudnnPoolingBackward(call.handle, call.pooling.get(), &one, call.output.desc(),
                                        y.data_ptr(), call.output.desc(), grad_y.data_ptr(),
                                        call.input.desc(), x.data_ptr(), &zero,
                                        call.input.desc(), grad_x.data_ptr()));
    return {grad_x, {}, {}, {}};
  }
};

#endif  // GPUPERF_WITH_CUDNN

}  // namespace

bool cudnn_max_pool_applies(const torch::Tensor& x, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding) {
#if GPUPERF_WITH_CUDNN
  if (!x.defined() || !x.is_cuda() || !at::globalContext().userEnabledCuDNN() ||
      !at::Context::hasCuDNN())
    return false;
  if (x.dim() != 4 || x.numel() >= INT_MAX) return false;
  if (x.scalar_type() != torch::kHalf && x.scalar_type() != torch::kBFloat16 &&
      x.scalar_type() != torch::kFloat)
    return false;
  if (!x.is_contiguous(at::MemoryFormat::ChannelsLast)) return false;
  // Windows as PyTorch allows them (padding at most half the window), each output non-empty.
  if (kernel < 1 || stride < 1 || padding < 0 || 2 * padding > kernel) return false;
  return pooled_size(x.size(2), kernel, stride, padding) >= 1 &&
         pooled_size(x.size(3), kernel, stride, padding) >= 1;
#else
  (void)x;
  (void)kernel;
  (void)stride;
  (void)padding;
  return false;
#endif
}

torch::Tensor max_pool2d(const torch::Tensor& x, std::int64_t kernel, std::int64_t stride,
                         std::int64_t padding, bool use_cudnn) {
#if GPUPERF_WITH_CUDNN
  if (use_cudnn && cudnn_max_pool_applies(x, kernel, stride, padding)) {
    return MaxPool::apply(x, kernel, stride, padding);
  }
#else
  (void)use_cudnn;
#endif
  return at::max_pool2d(x, {kernel, kernel}, {stride, stride}, {padding, padding});
}

}  // namespace gpuperf
