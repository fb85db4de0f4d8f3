#pragma once
// The torch side of the harness's options: dtypes, memory formats and global backend switches.

#include <torch/nn/module.h>
#include <torch/types.h>

#include "gpuperf/base/choices.h"

namespace gpuperf {

/// The autocast dtype of a precision (fp16 -> kHalf, bf16 -> kBFloat16); fp32/tf32 -> kFloat.
/// Inference stores parameters and inputs in it.
[[nodiscard]] torch::ScalarType autocast_dtype(Precision precision);
/// Whether a precision runs under autocast.
[[nodiscard]] bool uses_autocast(Precision precision);

/// Converts a 4-D tensor to the memory format; other ranks are returned unchanged.
[[nodiscard]] torch::Tensor to_memory_format(const torch::Tensor& tensor, MemoryFormat format);

/// Converts the module's 4-D parameters and buffers in place (C++ modules have no
/// to(memory_format)), under NoGradGuard so autograd does not see it.
void convert_memory_format(torch::nn::Module& module, MemoryFormat format);

/// Sets the process-wide backend switches for a run: TF32 (allowed for tf32, forbidden for fp32,
/// PyTorch's defaults otherwise) and cuDNN benchmark mode.
void apply_backend_settings(Precision precision, bool cudnn_benchmark);

}  // namespace gpuperf
