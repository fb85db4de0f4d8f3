// GEMM and memory microbenchmarks on LibTorch ops, timed with gpuperf's timers.
#include "gpuperf/micro/micro.h"

#include <c10/util/Exception.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compat.h"
#include "gpuperf/base/error.h"
#include "micro/micro_internal.h"
#include "gpuperf/base/format.h"
#include "gpuperf/results/micro_math.h"
#include "gpuperf/timing/measure.h"
#include "gpuperf/device/cuda_timer.h"

#if GPUPERF_HAS_INT_MM
#include <ATen/ops/_int_mm.h>
#endif
#if GPUPERF_HAS_SCALED_MM
#include <ATen/ops/_scaled_mm.h>
#endif
#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace gpuperf {
namespace detail {

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

int device_index(const torch::Device& device) { return device.has_index() ? device.index() : 0; }

void time_calls(MicroResult& r, const std::function<void()>& step, Timer& timer,
                const MicroOptions& options) {
  MeasureOptions m;
  m.warmup = options.warmup;
  m.steps_per_window = options.calls_per_window;
  m.windows = options.windows;
  const Measurement measured = measure(step, r.work_per_call, timer, m);
  r.windows.clear();
  for (double per_second : measured.window_throughput)
    r.windows.push_back(per_second / r.unit_scale);
  r.summary = summarize(r.windows);
  r.warmup_calls = options.warmup;
  r.calls_per_window = options.calls_per_window;
}

std::unique_ptr<Timer> timer_for(const torch::Device& device) {
  return make_timer(device.is_cuda() ? TimerKind::kCudaEvent : TimerKind::kSteadyClock,
                    device_index(device));
}

}  // namespace detail

namespace {

using detail::device_index;
using detail::first_line;
using detail::time_calls;
using detail::timer_for;

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

#if GPUPERF_HAS_SCALED_MM
// Compute capability as major * 10 + minor; 0 for the CPU or a build without CUDA. Only the
// fp8 check asks, and only LibTorch builds with float8 types have one.
int compute_capability(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* p =
        at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device_index(device)));
    return p->major * 10 + p->minor;
  }
#else
  (void)device;
#endif
  return 0;
}
#endif

torch::ScalarType storage_type(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp64:
      return torch::kFloat64;
    case GemmDtype::kFp32:
    case GemmDtype::kTf32:
      return torch::kFloat32;
    case GemmDtype::kFp16:
      return torch::kFloat16;
    case GemmDtype::kBf16:
      return torch::kBFloat16;
    case GemmDtype::kInt8:
      return torch::kInt8;
    case GemmDtype::kFp8:
#if GPUPERF_HAS_SCALED_MM
      return c10::ScalarType::Float8_e4m3fn;
#else
      break;
#endif
  }
  throw ConfigError("no storage type for " + to_string(dtype) + " in LibTorch " + TORCH_VERSION);
}

double element_bytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp64:
      return 8;
    case GemmDtype::kFp32:
    case GemmDtype::kTf32:
      return 4;
    case GemmDtype::kFp16:
    case GemmDtype::kBf16:
      return 2;
    case GemmDtype::kInt8:
    case GemmDtype::kFp8:
      return 1;
  }
  return 0;
}

std::string gemm_note(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32:
      return "torch::mm, TF32 off";
    case GemmDtype::kTf32:
      return "torch::mm on fp32, TF32 on";
    case GemmDtype::kInt8:
      return "at::_int_mm, int32 out, B column-major";
    case GemmDtype::kFp8:
      return "at::_scaled_mm e4m3, bf16 out, scales 1, B column-major";
    default:
      return "torch::mm";
  }
}

}  // namespace

void MicroTiming::validate() const {
  require_setting(warmup >= 0, "MicroTiming::warmup", warmup, ">= 0");
  require_setting(calls_per_window >= 1, "MicroTiming::calls_per_window", calls_per_window, ">= 1");
  require_setting(windows >= 1, "MicroTiming::windows", windows, ">= 1");
  require_setting(min_operand_sets >= 1, "MicroTiming::min_operand_sets", min_operand_sets, ">= 1");
  require_setting(l2_multiple >= 0, "MicroTiming::l2_multiple", l2_multiple, ">= 0");
}

MatmulTf32Guard::MatmulTf32Guard(bool allow)
    : cublas_(compat::allow_tf32_cublas()), cudnn_(compat::allow_tf32_cudnn()) {
  compat::set_allow_tf32(allow);
}

MatmulTf32Guard::~MatmulTf32Guard() { compat::set_allow_tf32(cublas_, cudnn_); }

bool gemm_supported(GemmDtype dtype, const torch::Device& device, std::string* reason) {
  std::string why;
  const std::string version = TORCH_VERSION;
  switch (dtype) {
    case GemmDtype::kTf32:
      if (!device.is_cuda()) why = "TF32 is a CUDA tensor-core mode (the CPU runs fp32)";
      break;
    case GemmDtype::kInt8:
#if GPUPERF_HAS_INT_MM
      if (!device.is_cuda()) why = "at::_int_mm is timed on CUDA only";
#else
      why = "LibTorch " + version + " has no at::_int_mm (2.1+)";
#endif
      break;
    case GemmDtype::kFp8:
#if GPUPERF_HAS_SCALED_MM
      if (!device.is_cuda()) {
        why = "fp8 GEMMs (at::_scaled_mm) need a CUDA GPU";
      } else if (const int cc = compute_capability(device); cc < 89) {
        why = "fp8 needs compute capability >= 8.9, " + device.str() + " has " +
              std::to_string(cc / 10) + "." + std::to_string(cc % 10);
      }
#else
      why = "LibTorch " + version + " has no at::_scaled_mm with float8 types (2.4+)";
#endif
      break;
    default:
      break;
  }
  if (reason) *reason = why;
  return why.empty();
}

GemmOperands make_gemm_operands(GemmDtype dtype, const GemmShape& shape,
                                const torch::Device& device) {
  const auto on_device = torch::TensorOptions().device(device);
  GemmOperands ops;
  if (dtype == GemmDtype::kInt8) {
    // The full int8 range; randint's upper bound is exclusive.
    ops.a = torch::randint(-128, 128, {shape.m, shape.k}, on_device.dtype(torch::kInt32))
                .to(torch::kInt8);
    ops.b = torch::randint(-128, 128, {shape.n, shape.k}, on_device.dtype(torch::kInt32))
                .to(torch::kInt8)
                .t();
    return ops;
  }
  const auto normal = [&](std::int64_t rows, std::int64_t cols) {
    return torch::randn({rows, cols}, on_device.dtype(torch::kFloat32)).to(storage_type(dtype));
  };
  ops.a = normal(shape.m, shape.k);
  if (dtype == GemmDtype::kFp8) {
    // _scaled_mm wants mat2 column-major: the transpose of a row-major [N, K].
    ops.b = normal(shape.n, shape.k).t();
    ops.scale_a = torch::ones({}, on_device.dtype(torch::kFloat32));
    ops.scale_b = torch::ones({}, on_device.dtype(torch::kFloat32));
  } else {
    ops.b = normal(shape.k, shape.n);
  }
  return ops;
}

double gemm_operand_bytes(GemmDtype dtype, const GemmShape& shape) {
  return element_bytes(dtype) * (static_cast<double>(shape.m) * static_cast<double>(shape.k) +
                                 static_cast<double>(shape.k) * static_cast<double>(shape.n));
}

torch::Tensor gemm_call(GemmDtype dtype, const GemmOperands& operands) {
  switch (dtype) {
    case GemmDtype::kInt8:
#if GPUPERF_HAS_INT_MM
      return at::_int_mm(operands.a, operands.b);
#else
      throw CudaError("LibTorch " + std::string(TORCH_VERSION) + " has no at::_int_mm");
#endif
    case GemmDtype::kFp8:
#if GPUPERF_HAS_SCALED_MM
      return at::_scaled_mm(operands.a, operands.b, operands.scale_a, operands.scale_b,
                            /*bias=*/std::nullopt, /*scale_result=*/std::nullopt,
                            /*out_dtype=*/at::kBFloat16, /*use_fast_accum=*/false);
#else
      throw CudaError("LibTorch " + std::string(TORCH_VERSION) + " has no at::_scaled_mm");
#endif
    default:
      return torch::mm(operands.a, operands.b);
  }
}

double l2_cache_bytes(const torch::Device& device) {
#if GPUPERF_WITH_CUDA
  if (device.is_cuda()) {
    return static_cast<double>(
        at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device_index(device)))
            ->l2CacheSize);
  }
#else
  (void)device;
#endif
  return 0;
}

MicroResult run_gemm(GemmDtype dtype, const GemmShape& shape, const torch::Device& device,
                     const MicroOptions& options) {
  options.validate();
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    throw ConfigError("gemm_shape", "every dimension must be > 0, got " + shape.str());
  }
  MicroResult r;
  r.category = "gemm";
  r.variant = to_string(dtype);
  r.name = "gemm/" + r.variant;
  r.shape = shape.str();
  r.work_per_call = gemm_flops(shape);
  r.unit = dtype == GemmDtype::kInt8 ? "TOP/s" : "TFLOP/s";
  r.unit_scale = kTera;
  r.note = gemm_note(dtype);
  r.buffer_bytes = gemm_operand_bytes(dtype, shape);
  std::string reason;
  if (!gemm_supported(dtype, device, &reason)) {
    r.status = "unsupported: " + reason;
    return r;
  }
  try {
    // fp32 means no TF32 whatever the process default is; tf32 turns it on. Both restore it.
    std::optional<MatmulTf32Guard> tf32;
    if (dtype == GemmDtype::kFp32 || dtype == GemmDtype::kTf32)
      tf32.emplace(dtype == GemmDtype::kTf32);
    torch::manual_seed(options.seed);
    r.operand_sets = rotation_sets(r.buffer_bytes, l2_cache_bytes(device), options.l2_multiple,
                                   options.min_operand_sets);
    std::vector<GemmOperands> sets;
    sets.reserve(static_cast<std::size_t>(r.operand_sets));
    for (int i = 0; i < r.operand_sets; ++i)
      sets.push_back(make_gemm_operands(dtype, shape, device));
    std::size_t next = 0;
    auto timer = timer_for(device);
    time_calls(
        r,
        [&] {
          (void)gemm_call(dtype, sets[next]);
          next = (next + 1) % sets.size();
        },
        *timer, options);
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    // An op this LibTorch or device lacks (fp16 on an old CPU build, a shape _int_mm refuses):
    // the other measurements still count.
    r.status = "unsupported: " + first_line(e.what_without_backtrace());
    r.windows.clear();
    r.summary = Summary{};
  }
  return r;
}

MicroResult run_memory(MemoryOp op, double buffer_bytes, const torch::Device& device,
                       const MicroOptions& options) {
  options.validate();
  const auto elements = static_cast<std::int64_t>(buffer_bytes / 4);
  if (!(buffer_bytes >= 4) || static_cast<double>(elements) * 4 != buffer_bytes) {
    throw ConfigError("memory benchmark " + to_string(op) +
                      ": buffer size must be a positive multiple of 4 bytes, got " +
                      std::to_string(buffer_bytes));
  }
  const bool host_op =
      op == MemoryOp::kHostCopy || op == MemoryOp::kHostRead || op == MemoryOp::kHostWrite;
  if (!host_op && !device.is_cuda()) {
    throw ConfigError("memory benchmark " + to_string(op) + " needs a CUDA device, got " +
                      device.str());
  }
  MicroResult r;
  r.category = "memory";
  r.variant = to_string(op);
  r.name = "memory/" + r.variant;
  r.shape = format_exact_bytes(buffer_bytes);
  r.buffer_bytes = buffer_bytes;
  r.work_per_call = memory_bytes_per_call(op, buffer_bytes);
  r.unit = "GB/s";
  r.unit_scale = kGiga;
  r.operand_sets = 1;  // one buffer is far larger than any cache at the sizes timed

  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const torch::Device where = host_op ? torch::Device(torch::kCPU) : device;
  auto timer = timer_for(where);
  std::function<void()> step;
  torch::Tensor src;
  torch::Tensor dst;
  switch (op) {
    case MemoryOp::kDeviceCopy:
    case MemoryOp::kHostCopy:
      src = torch::randn({elements}, f32.device(where));
      dst = torch::empty({elements}, f32.device(where));
      step = [&] { dst.copy_(src); };
      r.note = "dst.copy_(src); bytes read + written";
      break;
    case MemoryOp::kDeviceRead:
    case MemoryOp::kHostRead:
      src = torch::randn({elements}, f32.device(where));
      step = [&] { (void)src.sum(); };
      r.note = "src.sum(); bytes read";
      break;
    case MemoryOp::kDeviceWrite:
    case MemoryOp::kHostWrite:
      dst = torch::empty({elements}, f32.device(where));
      step = [&] { dst.fill_(1.5); };
      r.note = "dst.fill_(1.5); bytes written";
      break;
    case MemoryOp::kHostToDevicePinned:
    case MemoryOp::kDeviceToHostPinned:
    case MemoryOp::kHostToDevicePageable:
    case MemoryOp::kDeviceToHostPageable: {
#if GPUPERF_WITH_CUDA
      const bool pinned =
          op == MemoryOp::kHostToDevicePinned || op == MemoryOp::kDeviceToHostPinned;
      const bool to_device =
          op == MemoryOp::kHostToDevicePinned || op == MemoryOp::kHostToDevicePageable;
      // fill_ touches every host page before timing, so no page fault lands in a window.
      torch::Tensor host = torch::empty({elements}, f32.pinned_memory(pinned)).fill_(1.5);
      torch::Tensor gpu = torch::empty({elements}, f32.device(device)).fill_(1.5);
      src = to_device ? host : gpu;
      dst = to_device ? gpu : host;
      // Pinned copies are queued asynchronously so the events time the transfer alone;
      // pageable ones go through a staging buffer and are synchronous either way.
      step = [&, pinned] { dst.copy_(src, /*non_blocking=*/pinned); };
      r.note = std::string("copy_ ") + (to_device ? "host->device" : "device->host") +
               (pinned ? ", pinned, non_blocking" : ", pageable");
#else
      throw ConfigError("memory benchmark " + to_string(op) + ": gpuperf was built without CUDA");
#endif
      break;
    }
  }
  if (host_op) r.note += " (CPU variant: host memory)";
  time_calls(r, step, *timer, options);
  return r;
}

std::vector<GemmDtype> default_gemm_dtypes(const torch::Device& device) {
  if (device.is_cuda()) return all_gemm_dtypes();
  // Reduced-precision GEMMs on a CPU are emulated or absent in older builds; name them to try.
  return {GemmDtype::kFp64, GemmDtype::kFp32};
}

std::vector<MemoryOp> default_memory_ops(const torch::Device& device) {
  if (device.is_cuda()) {
    return {MemoryOp::kDeviceCopy,          MemoryOp::kDeviceRead,
            MemoryOp::kDeviceWrite,         MemoryOp::kHostToDevicePinned,
            MemoryOp::kDeviceToHostPinned,  MemoryOp::kHostToDevicePageable,
            MemoryOp::kDeviceToHostPageable};
  }
  return {MemoryOp::kHostCopy, MemoryOp::kHostRead, MemoryOp::kHostWrite};
}

}  // namespace gpuperf
