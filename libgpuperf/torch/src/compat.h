#pragma once
// Every difference between the two LibTorch worlds gpuperf builds against: Debian's CPU LibTorch
// 1.13 and the PyTorch 2.x wheel's CUDA LibTorch. Nothing else in the code base tests versions.

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#include <variant>
#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 1)
#include <c10/util/variant.h>
#endif

// c10d's classes, declared only: the collectives' translation unit includes their headers.
namespace c10d {
class Backend;
class ProcessGroup;
}  // namespace c10d

namespace gpuperf::compat {

/// LibTorch 2.0 or newer.
inline constexpr bool kTorch2 = TORCH_VERSION_MAJOR >= 2;

/// ATen has CPU kernels for _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_
/// (added with the CPU GradScaler in 2.3). Before that only CUDA tensors have them.
inline constexpr bool kCpuAmpKernels = TORCH_VERSION_MAJOR > 2 ||
                                       (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3);

/// CPU autocast accepts fp16 (2.4+); earlier CPU autocast handles bf16 only.
inline constexpr bool kCpuAutocastHalf = TORCH_VERSION_MAJOR > 2 ||
                                         (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4);

/// ATen has the fused optimizer kernels (_fused_adam_, _fused_adamw_, _fused_sgd_) for CUDA
/// tensors: _fused_adam_ from 2.0, _fused_sgd_ from 2.2. CPU kernels came with 2.4.
#define GPUPERF_HAS_FUSED_OPTIMIZERS \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2))
inline constexpr bool kCpuFusedOptimizers = kCpuAutocastHalf;

/// optimizer.zero_grad() sets gradients to none by default (2.x); 1.13 zeroes them.
inline constexpr bool kZeroGradSetsNone = kTorch2;

inline bool autocast_enabled(c10::DeviceType device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled()
                                        : at::autocast::is_enabled();
#endif
}

inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_enabled(enabled);
  }
#endif
}

inline c10::ScalarType autocast_dtype(c10::DeviceType device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void set_autocast_dtype(c10::DeviceType device, c10::ScalarType dtype) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

/// Allows or forbids TF32 tensor-core math for fp32 matmuls (cuBLAS) and convolutions (cuDNN).
inline void set_allow_tf32(bool allow) {
  at::globalContext().setAllowTF32CuBLAS(allow);
  at::globalContext().setAllowTF32CuDNN(allow);
}

/// Whether fp32 matmuls (cuBLAS) may use TF32 tensor-core math now.
inline bool allow_tf32_cublas() { return at::globalContext().allowTF32CuBLAS(); }
/// Whether fp32 convolutions (cuDNN) may use TF32 tensor-core math now.
inline bool allow_tf32_cudnn() { return at::globalContext().allowTF32CuDNN(); }
/// Sets the two TF32 switches separately (to restore a saved state).
inline void set_allow_tf32(bool cublas, bool cudnn) {
  at::globalContext().setAllowTF32CuBLAS(cublas);
  at::globalContext().setAllowTF32CuDNN(cudnn);
}

/// ATen has at::_int_mm (int8 x int8 -> int32 GEMM through cuBLASLt; CUDA kernels only), from 2.1.
#define GPUPERF_HAS_INT_MM \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))

/// ATen has the float8 dtypes and at::_scaled_mm(self, mat2, scale_a, scale_b, bias,
/// scale_result, out_dtype, use_fast_accum) with float32 scale tensors: the 2.4+ signature.
#define GPUPERF_HAS_SCALED_MM \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

/// ATen has at::scaled_dot_product_attention and at::_fused_sdp_choice (2.0+).
#define GPUPERF_HAS_SDPA (TORCH_VERSION_MAJOR >= 2)

/// Both take scale and enable_gqa (grouped-query attention: fewer key/value heads than query
/// heads, read in place) after is_causal: 2.5+.
#define GPUPERF_HAS_SDPA_GQA \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5))

/// std::get_if for LibTorch's option variants: c10::variant before 2.1, std::variant since.
template <typename T, typename Variant>
const T* variant_get_if(const Variant& v) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  return std::get_if<T>(&v);
#else
  return c10::get_if<T>(&v);
#endif
}

/// The c10d class a process group's collectives are called on. In 2.x, ProcessGroupNCCL and
/// ProcessGroupGloo derive from c10d::Backend (ProcessGroup became a dispatcher over backends);
/// in 1.13 they derive from c10d::ProcessGroup itself. Both return c10::intrusive_ptr<c10d::Work>
/// (Debian's 1.13.1 already has Work.hpp; older 1.x spelled it ProcessGroup::Work) and take the
/// same arguments for allreduce, allgather, _allgather_base, reduce_scatter and
/// _reduce_scatter_base.
#if TORCH_VERSION_MAJOR >= 2
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

/// ProcessGroupNCCL has shutdown(), which 2.4+ asks for before destruction (else it warns that
/// the group was not destroyed).
#define GPUPERF_NCCL_HAS_SHUTDOWN \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

}  // namespace gpuperf::compat
