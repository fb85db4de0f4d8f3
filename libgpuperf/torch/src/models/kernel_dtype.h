#pragma once
// The element types of gpuperf's own CUDA kernels, as LibTorch names them, and their alignment
// rule: for the .cpp files that check tensors and call the kernels (nhwc_ops.cpp, weight_cast.cpp,
// batch_norm_fusion.cpp, conv_statistics.cpp, residual_layer_norm.cpp, transformer_ops.cpp).

#include <ATen/core/TensorBase.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

#if GPUPERF_WITH_CUDA_KERNELS
#include "models/nhwc_kernels.h"
#endif

namespace gpuperf::detail {

/// Whether the kernels take elements of type `t`: fp32, fp16 or bf16.
inline bool own_kernel_dtype(c10::ScalarType t) {
  return t == c10::ScalarType::Float || t == c10::ScalarType::Half ||
         t == c10::ScalarType::BFloat16;
}

/// Whether t's first element sits on a 16-byte boundary, as the kernels' vector loads need (an
/// undefined tensor counts as aligned).
inline bool aligned16(const at::TensorBase& t) {
  return !t.defined() || reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0;
}

#if GPUPERF_WITH_CUDA_KERNELS
/// `t` (one that own_kernel_dtype accepts) as the kernels' launchers name it.
inline NhwcDtype nhwc_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Half:
      return NhwcDtype::kHalf;
    case c10::ScalarType::BFloat16:
      return NhwcDtype::kBFloat16;
    default:
      return NhwcDtype::kFloat;
  }
}
#endif

}  // namespace gpuperf::detail
