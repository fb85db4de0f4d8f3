#pragma once
// A convolution whose epilogue also sums each output channel's values and their squares: cuDNN's
// graph API (backend descriptors), a forward convolution and a GenStats operation that cuDNN's
// runtime fusion engines compile into one kernel. The sums are what a training-mode batch norm
// of the output needs (batch_norm_kernels.h), so it makes no pass of its own over the output.
//
// For fusion.cpp (the autograd node) and batch_norm_fusion.cpp (the batch norm that takes the
// sums); conv_statistics.cpp is the only file that calls cuDNN's graph API.

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>
#include <torch/nn/modules/conv.h>

#include <cstdint>
#include <tuple>
#include <utility>

namespace gpuperf::detail {

/// Whether conv_with_statistics may be tried: gpuperf built with cuDNN, cuDNN enabled and not
/// asked for deterministic results (GenStats adds the sums in no fixed order); `x` a
/// CUDA fp16 or bf16 [N, C, H, W] tensor in channels_last, 16-byte aligned; `weight` [K, C, R, S]
/// of x's dtype and device in channels_last; C and K multiples of 8 (16 bytes).
[[nodiscard]] bool conv_statistics_applies(const at::Tensor& x, const at::Tensor& weight);

/// One shape's execution plan for the fused graph, on one thread's cuDNN handle (defined in
/// conv_statistics.cpp).
struct ConvStatisticsPlan;

/// The plan that runs the fused graph for these operands, or null where no cuDNN engine does: the
/// first call per shape (and thread, as cuDNN's handles are) builds the plans the heuristics offer
/// and, where cuDNN's benchmark mode is on and the stream is not capturing a CUDA graph, times up
/// to four of them on scratch outputs and keeps the fastest; later calls look it up. The plan
/// belongs to the calling thread's cache and lives as long as the thread. Needs
/// conv_statistics_applies.
[[nodiscard]] const ConvStatisticsPlan* conv_statistics_plan(const at::Tensor& x,
                                                             const at::Tensor& weight,
                                                             at::IntArrayRef stride,
                                                             at::IntArrayRef padding,
                                                             at::IntArrayRef dilation);

/// Destroys the calling thread's plans (and the kernels cuDNN compiled for them, which the CUDA
/// context holds outside the caching allocator). Only while no captured CUDA graph that ran them
/// will be replayed.
void release_conv_statistics_plans();

/// {conv(x, weight), sums}: y in channels_last, sums fp32 [2, K] (row 0 each output channel's
/// sum over N, H and W, row 1 its sum of squares), both computed by `plan`, which
/// conv_statistics_plan gave for these operands on this thread. With `sums_into` defined (fp32
/// [2, K], contiguous), the sums are written there as it is, without zeroing it first: for the
/// tests that check whether cuDNN's GenStats overwrites or adds.
[[nodiscard]] std::pair<at::Tensor, at::Tensor> conv_with_statistics(
    const ConvStatisticsPlan& plan, const at::Tensor& x, const at::Tensor& weight,
    const at::Tensor& sums_into = {});

/// conv(x, weight) with the module's geometry and its output's statistics, as one autograd node
/// whose backward is the convolution's (input and weight gradients; none reach the sums):
/// {y, sums} as conv_with_statistics gives them, or undefined tensors where the fused graph does
/// not apply (conv_statistics_applies, explicit zero padding, one group, a cuDNN engine for it).
[[nodiscard]] std::pair<at::Tensor, at::Tensor> conv2d_with_statistics(
    const at::Tensor& x, const torch::nn::Conv2dImpl& conv, const at::Tensor& weight);

/// {conv(x), x, sums} for a bottleneck's first 1x1 convolution and its shortcut, as
/// conv1x1_and_shortcut's one autograd node gives the first two (its backward: one GEMM for x's
/// gradient from both), with the forward through the fused graph and its sums as the third
/// output. Undefined tensors where conv1x1_shortcut_applies or the graph does not, or autograd
/// does not record.
[[nodiscard]] std::tuple<at::Tensor, at::Tensor, at::Tensor> conv1x1_and_shortcut_with_statistics(
    const at::Tensor& x, const torch::nn::Conv2dImpl& conv, const at::Tensor& weight);

}  // namespace gpuperf::detail
