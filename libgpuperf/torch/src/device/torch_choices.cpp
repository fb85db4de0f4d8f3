#include "gpuperf/device/torch_choices.h"

#include <ATen/Context.h>
#include <torch/version.h>

#include <string>

#include "compat.h"
#include "gpuperf/base/error.h"

namespace gpuperf {

torch::ScalarType autocast_dtype(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
      return torch::kHalf;
    case Precision::kBf16:
      return torch::kBFloat16;
    default:
      return torch::kFloat;
  }
}

bool uses_autocast(Precision precision) {
  return precision == Precision::kFp16 || precision == Precision::kBf16;
}

torch::Tensor to_memory_format(const torch::Tensor& tensor, MemoryFormat format) {
  if (tensor.dim() != 4) return tensor;
  return tensor.contiguous(format == MemoryFormat::kChannelsLast ? torch::MemoryFormat::ChannelsLast
                                                                 : torch::MemoryFormat::Contiguous);
}

void convert_memory_format(torch::nn::Module& module, MemoryFormat format) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.dim() == 4) p.set_data(to_memory_format(p, format));
  }
  for (auto& b : module.buffers()) {
    if (b.dim() == 4) b.set_data(to_memory_format(b, format));
  }
}

void apply_backend_settings(Precision precision, bool cudnn_benchmark) {
  if (precision == Precision::kFp32) compat::set_allow_tf32(false);
  if (precision == Precision::kTf32) compat::set_allow_tf32(true);
  at::globalContext().setBenchmarkCuDNN(cudnn_benchmark);
}

}  // namespace gpuperf
