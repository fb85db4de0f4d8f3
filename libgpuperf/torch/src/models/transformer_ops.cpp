// linear_activation(), swiglu(), rotary_embedding() and tied_embedding(): gpuperf's kernels
// (transformer_kernels.h) and nodes as autograd nodes on CUDA, ATen's operations elsewhere.
#include <ATen/ops/cat.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/silu.h>
#include <torch/autograd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "../compat.h"
#include "gpuperf/models/transformer.h"
#include "models/heads.h"
#include "models/kernel_dtype.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/gelu_backward.h>
#include <ATen/ops/mm.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "gpuperf/base/error.h"
#include "models/gemm_epilogue.h"
#include "models/transformer_kernels.h"
#endif

namespace gpuperf {
namespace {

std::atomic<bool> timed_gemms{false};  // set_timed_gemm_algorithms()

// ATen's rotary embedding in the rotate_half layout: the tables cast to x's dtype, then
// x cos + rotate_half(x) sin.
torch::Tensor aten_rotary(const torch::Tensor& x, const torch::Tensor& cos,
                          const torch::Tensor& sin) {
  const std::int64_t t = x.size(2);
  const std::int64_t half = x.size(-1) / 2;
  const torch::Tensor c = cos.narrow(0, 0, t).to(x.scalar_type());
  const torch::Tensor s = sin.narrow(0, 0, t).to(x.scalar_type());
  const torch::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * c + rotated * s;
}

using detail::split_heads;

// x W^T through linear_activation() with casts[i] as W's compute-dtype copy where there is one:
// the layer-by-layer path of rotary_heads() and swiglu_linear().
torch::Tensor linear_with_cast(const torch::Tensor& x, const torch::Tensor& w,
                               const std::vector<torch::Tensor>& casts, std::size_t i) {
  return linear_activation(x, w, {}, Activation::kNone,
                           i < casts.size() ? CastLinear{casts[i], {}} : CastLinear{});
}

#if GPUPERF_WITH_CUDA_KERNELS

// The dtype a linear layer computes in on x's device: autocast's where it is on, else x's.
c10::ScalarType compute_dtype(const torch::Tensor& x) {
  const c10::DeviceType device = x.device().type();
  return compat::autocast_enabled(device) ? compat::autocast_dtype(device) : x.scalar_type();
}

// Whether this LibTorch has mm with an output dtype (aten::mm.dtype: 16-bit inputs, a float32
// result straight from the GEMM; PyTorch 2.8 and later).
template <typename T, typename = void>
struct HasMmDtype : std::false_type {};
template <typename T>
struct HasMmDtype<T, std::void_t<decltype(at::mm(std::declval<const T&>(), std::declval<const T&>(),
                                                 c10::ScalarType::Float))>> : std::true_type {};

// a b in `dtype`: written by the GEMM where LibTorch can (no cast kernel after it), else cast.
template <typename T = torch::Tensor>
torch::Tensor mm_as(const T& a, const T& b, c10::ScalarType dtype) {
  if constexpr (HasMmDtype<T>::value) {
    if (a.scalar_type() != dtype && dtype == torch::kFloat) return at::mm(a, b, dtype);
  }
  return at::mm(a, b).to(dtype);
}

bool on_own_kernels(const torch::Tensor& x) {
  return x.defined() && x.is_cuda() && detail::own_kernel_dtype(x.scalar_type()) &&
         detail::own_kernels_run_on(x.device().index());
}

// How a 2-D operand of a row-major product is stored, in cuBLASLt's column-major terms: its rows
// dense (strides [ld, 1]: stored as its transpose) or its columns (strides [1, ld]), with ld a
// multiple of 8 elements; nullopt otherwise.
struct Stored {
  bool rows_dense;
  std::int64_t ld;
};
std::optional<Stored> stored(const torch::Tensor& t) {
  const auto fits = [](std::int64_t ld, std::int64_t least) { return ld >= least && ld % 8 == 0; };
  if (t.stride(1) == 1 && fits(t.stride(0), t.size(1))) return Stored{true, t.stride(0)};
  if (t.stride(0) == 1 && fits(t.stride(1), t.size(0))) return Stored{false, t.stride(1)};
  return std::nullopt;
}

// a [rows, inner] b [inner, cols] in `dtype` (a's, or float32 from the GEMM). With timed GEMM
// algorithms (set_timed_gemm_algorithms), for 16-bit a and b of one dtype on a GPU gpuperf's
// kernels run on, each with dense rows or columns: one cuBLASLt product whose algorithm was timed
// at the shape's first call (gemm_epilogue.h's matmul()). Elsewhere mm_as() (ATen's mm, whose
// cuBLAS makes its own choice).
torch::Tensor product(const torch::Tensor& a, const torch::Tensor& b, c10::ScalarType dtype) {
  const c10::ScalarType t = a.scalar_type();
  const std::optional<Stored> sa = a.dim() == 2 ? stored(a) : std::nullopt;
  const std::optional<Stored> sb = b.dim() == 2 ? stored(b) : std::nullopt;
  if (!timed_gemms.load() || (t != torch::kHalf && t != torch::kBFloat16) || !sa || !sb ||
      !on_own_kernels(a) || b.scalar_type() != t || b.device() != a.device() ||
      (dtype != t && dtype != torch::kFloat) || !detail::aligned16(a) || !detail::aligned16(b) ||
      a.numel() == 0 || b.numel() == 0) {
    return mm_as(a, b, dtype);
  }
  const c10::cuda::CUDAGuard guard(a.device());
  torch::Tensor out = torch::empty({a.size(0), b.size(1)}, a.options().dtype(dtype));
  const torch::Tensor workspace = torch::empty(
      {static_cast<std::int64_t>(detail::kGemmWorkspaceBytes)}, a.options().dtype(torch::kByte));
  // Row-major out = a b is column-major out^T = b^T a^T: cuBLASLt's A is b, its B is a. An
  // operand with dense rows is stored as its transpose already: read as stored.
  int status = 0;
  switch (detail::matmul(
      /*timed=*/true, detail::nhwc_dtype(t), dtype == torch::kFloat && t != dtype,
      /*trans_a=*/!sb->rows_dense, /*trans_b=*/!sa->rows_dense, b.size(1), a.size(0), a.size(1),
      b.data_ptr(), sb->ld, a.data_ptr(), sa->ld, out.data_ptr(), b.size(1), workspace.data_ptr(),
      at::cuda::getCurrentCUDAStream(), &status)) {
    case detail::GemmOutcome::kDone:
      return out;
    case detail::GemmOutcome::kUnsupported:
      return mm_as(a, b, dtype);
    default:
      throw Error("matrix product: cuBLASLt's matmul failed (cublasStatus_t " +
                  std::to_string(status) + ")");
  }
}

// x W^T (no bias) in x's dtype through product(), x [..., in], w [out, in].
torch::Tensor linear_product(const torch::Tensor& x, const torch::Tensor& w) {
  std::vector<std::int64_t> sizes = x.sizes().vec();
  sizes.back() = w.size(0);
  return product(x.reshape({-1, w.size(1)}), w.t(), x.scalar_type()).view(sizes);
}

// Whether `cast` is `parameter` cast to `dtype` as far as can be told: defined, that dtype,
// shape, device and a dense layout.
bool cast_as(const torch::Tensor& cast, const torch::Tensor& parameter, c10::ScalarType dtype) {
  return cast.defined() && cast.scalar_type() == dtype && cast.sizes() == parameter.sizes() &&
         cast.device() == parameter.device() && cast.is_contiguous();
}

// `parameter` in `dtype`: `cast` where it is that (cast_as), else converted here.
torch::Tensor in_dtype(const torch::Tensor& cast, const torch::Tensor& parameter,
                       c10::ScalarType dtype) {
  return cast_as(cast, parameter, dtype) ? cast : parameter.to(dtype);
}

// gelu_tanh(x w^T + b) and its input from one cuBLASLt call (gemm_epilogue.h), for 16-bit x, w
// and b of one dtype; two undefined tensors where that does not apply (float32, widths not
// multiples of 8, misaligned, no cuBLASLt algorithm): then ATen's linear and gelu run.
std::pair<torch::Tensor, torch::Tensor> linear_gelu_epilogue(const torch::Tensor& x,
                                                             const torch::Tensor& w,
                                                             const torch::Tensor& b) {
  const c10::ScalarType t = x.scalar_type();
  if ((t != torch::kHalf && t != torch::kBFloat16) || w.scalar_type() != t ||
      b.scalar_type() != t || w.size(0) % 8 != 0 || w.size(1) % 8 != 0) {
    return {};
  }
  const std::int64_t in = w.size(1);
  const std::int64_t out = w.size(0);
  const torch::Tensor x2 = x.reshape({-1, in}).contiguous();
  const torch::Tensor wc = w.contiguous();
  const torch::Tensor bc = b.contiguous();
  if (x2.size(0) == 0 || !detail::aligned16(x2) || !detail::aligned16(wc) ||
      !detail::aligned16(bc)) {
    return {};
  }
  const c10::cuda::CUDAGuard guard(x.device());
  std::vector<std::int64_t> sizes = x.sizes().vec();
  sizes.back() = out;
  torch::Tensor y = torch::empty(sizes, x.options());
  torch::Tensor pre = torch::empty(sizes, x.options());
  const torch::Tensor workspace = torch::empty(
      {static_cast<std::int64_t>(detail::kGemmWorkspaceBytes)}, x.options().dtype(torch::kByte));
  int status = 0;
  switch (detail::linear_gelu(timed_gemms.load(), detail::nhwc_dtype(t), x2.data_ptr(),
                              wc.data_ptr(), bc.data_ptr(), x2.size(0), static_cast<int>(in),
                              static_cast<int>(out), y.data_ptr(), pre.data_ptr(),
                              workspace.data_ptr(), at::cuda::getCurrentCUDAStream(), &status)) {
    case detail::GemmOutcome::kDone:
      return {y, pre};
    case detail::GemmOutcome::kUnsupported:
      return {};
    default:
      throw Error("linear layer + GELU: cuBLASLt's matrix product failed (cublasStatus_t " +
                  std::to_string(status) + ")");
  }
}

// Keeps the dtypes a product's gradients go back in: x's, the weight's and the bias's (where
// defined), for saved_dtype().
void save_dtypes(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                 const torch::Tensor& weight, const torch::Tensor& bias) {
  ctx->saved_data["x_dtype"] = static_cast<std::int64_t>(x.scalar_type());
  ctx->saved_data["weight_dtype"] = static_cast<std::int64_t>(weight.scalar_type());
  if (bias.defined()) ctx->saved_data["bias_dtype"] = static_cast<std::int64_t>(bias.scalar_type());
}

c10::ScalarType saved_dtype(torch::autograd::AutogradContext* ctx, const char* key) {
  return static_cast<c10::ScalarType>(ctx->saved_data[key].toInt());
}

// x W^T's input and weight gradients from the output's gradient g ([rows, out], the compute
// dtype), in the dtypes save_dtypes() kept; the weight's from the GEMM where LibTorch can
// (float32 parameters: no cast of a 16-bit gradient after it).
std::pair<torch::Tensor, torch::Tensor> product_gradients(torch::autograd::AutogradContext* ctx,
                                                          const torch::Tensor& g,
                                                          const torch::Tensor& xc,
                                                          const torch::Tensor& wc) {
  return {product(g, wc, g.scalar_type()).view(xc.sizes()).to(saved_dtype(ctx, "x_dtype")),
          product(g.t(), xc.reshape({-1, wc.size(1)}), saved_dtype(ctx, "weight_dtype"))};
}

// Inputs x, weight, bias; output activation(x W^T + b) in the compute dtype. Saves the cast input
// and weight (what ATen's addmm keeps) and, with GELU, its input (what ATen's gelu keeps). With
// GELU on 16-bit types the product, bias and GELU are one cuBLASLt call.
struct LinearNode : public torch::autograd::Function<LinearNode> {
  // `cast` (an opaque value to autograd, not an input: no gradient goes to it). `bias_or_none`:
  // an optional, not an undefined tensor, where there is none (autograd refuses an undefined
  // tensor among a node's inputs).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight,
                               const c10::optional<torch::Tensor>& bias_or_none,
                               Activation activation, const CastLinear& cast) {
    const torch::Tensor bias = bias_or_none.has_value() ? *bias_or_none : torch::Tensor();
    const c10::ScalarType dtype = compute_dtype(x);
    const torch::Tensor xc = x.to(dtype);
    const bool with_bias = bias.defined();
    const torch::Tensor wc = in_dtype(cast.weight, weight, dtype);
    const torch::Tensor bc = with_bias ? in_dtype(cast.bias, bias, dtype) : torch::Tensor();
    const bool gelu = activation == Activation::kGeluTanh;
    auto [y, pre] = gelu && with_bias ? linear_gelu_epilogue(xc, wc, bc)
                                      : std::pair<torch::Tensor, torch::Tensor>();
    if (!y.defined()) {
      pre = with_bias ? at::linear(xc, wc, bc) : linear_product(xc, wc);
      y = gelu ? at::gelu(pre, "tanh") : pre;
    }
    ctx->save_for_backward({xc, wc, gelu ? pre : torch::Tensor()});
    ctx->saved_data["gelu"] = gelu;
    ctx->saved_data["with_bias"] = with_bias;
    save_dtypes(ctx, x, weight, bias);
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& xc = saved[0];
    const torch::Tensor& wc = saved[1];
    const c10::cuda::CUDAGuard guard(xc.device());
    const std::int64_t out = wc.size(0);
    torch::Tensor g = grads[0].to(wc.scalar_type()).contiguous().view({-1, out});
    if (!detail::aligned16(g)) g = g.clone();
    const bool gelu = ctx->saved_data["gelu"].toBool();
    torch::Tensor grad_pre = g;
    torch::Tensor grad_bias;
    if (ctx->saved_data["with_bias"].toBool()) {
      // The bias gradient (and GELU's) in one pass of gpuperf's kernels. (cuBLASLt's BGRADB and
      // DGELU_BGRAD epilogues ran as separate, slower kernels on the H200:
      // docs/results/2026-12-05-h200-lm-epilogues.)
      if (gelu) grad_pre = torch::empty_like(g);
      const auto floats = g.options().dtype(torch::kFloat);
      torch::Tensor partial = torch::empty({detail::kBiasGradientParts, out}, floats);
      grad_bias = torch::empty({out}, floats);
      C10_CUDA_CHECK(detail::bias_gradient(
          detail::nhwc_dtype(g.scalar_type()), g.data_ptr(),
          gelu ? saved[2].contiguous().data_ptr() : nullptr, g.size(0), static_cast<int>(out),
          gelu ? grad_pre.data_ptr() : nullptr, partial.data_ptr<float>(),
          grad_bias.data_ptr<float>(), at::cuda::getCurrentCUDAStream()));
      grad_bias = grad_bias.to(saved_dtype(ctx, "bias_dtype"));
    } else if (gelu) {
      grad_pre = at::gelu_backward(g, saved[2].reshape(g.sizes()), "tanh");
    }
    const auto [grad_x, grad_weight] = product_gradients(ctx, grad_pre, xc, wc);
    // One entry per argument of forward(): the activation and the casts get none.
    return {grad_x, grad_weight, grad_bias, torch::Tensor(), torch::Tensor()};
  }
};

// Whether join_heads_bias_gradient reads `g` ([batch, heads, sequence, head width]) in place.
bool joins_in_place(const torch::Tensor& g, c10::ScalarType dtype) {
  const std::int64_t per16 = 16 / static_cast<std::int64_t>(c10::elementSize(dtype));
  return g.scalar_type() == dtype && g.dim() == 4 && g.stride(3) == 1 && detail::aligned16(g) &&
         g.stride(0) % per16 == 0 && g.stride(1) % per16 == 0 && g.stride(2) % per16 == 0;
}

// Inputs x [batch, sequence, width], weight [3 width, width], bias; outputs q, k, v: x W^T + b
// split into three and into heads (views of one product). Saves what LinearNode saves. The
// backward pass joins the three gradients for the projection and sums the bias gradient in one
// pass (join_heads_bias_gradient), where autograd's split would copy them together
// (CatArrayBatchedCopy) and the bias gradient read the join again.
struct AttentionHeadsNode : public torch::autograd::Function<AttentionHeadsNode> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& weight,
                                                const torch::Tensor& bias, std::int64_t heads,
                                                const CastLinear& cast) {
    const c10::ScalarType dtype = compute_dtype(x);
    const torch::Tensor xc = x.to(dtype);
    const torch::Tensor wc = in_dtype(cast.weight, weight, dtype);
    const torch::Tensor y = at::linear(xc, wc, in_dtype(cast.bias, bias, dtype));
    const std::vector<torch::Tensor> parts = y.split(weight.size(0) / 3, -1);
    ctx->save_for_backward({xc, wc});
    ctx->saved_data["heads"] = heads;
    save_dtypes(ctx, x, weight, bias);
    return {split_heads(parts[0], heads), split_heads(parts[1], heads),
            split_heads(parts[2], heads)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& xc = saved[0];
    const torch::Tensor& wc = saved[1];
    const c10::cuda::CUDAGuard guard(xc.device());
    const c10::ScalarType dtype = wc.scalar_type();
    const std::int64_t batch = xc.size(0);
    const std::int64_t sequence = xc.size(1);
    const std::int64_t out = wc.size(0);
    const std::int64_t heads = ctx->saved_data["heads"].toInt();
    std::vector<torch::Tensor> g;
    for (const torch::Tensor& grad : grads) g.push_back(grad.to(dtype));
    torch::Tensor joined;
    torch::Tensor grad_bias;
    if (std::all_of(g.begin(), g.end(), [&](const auto& t) { return joins_in_place(t, dtype); })) {
      joined = torch::empty({batch * sequence, out}, xc.options());
      const auto floats = xc.options().dtype(torch::kFloat);
      const torch::Tensor partial = torch::empty({detail::kBiasGradientParts, out}, floats);
      grad_bias = torch::empty({out}, floats);
      const void* pointers[3];
      detail::RotaryStrides strides[3];
      for (int i = 0; i < 3; ++i) {
        pointers[i] = g[i].data_ptr();
        strides[i] = {g[i].stride(0), g[i].stride(1), g[i].stride(2)};
      }
      C10_CUDA_CHECK(detail::join_heads_bias_gradient(
          detail::nhwc_dtype(dtype), pointers, strides, batch, static_cast<int>(heads),
          static_cast<int>(sequence), static_cast<int>(g[0].size(3)), joined.data_ptr(),
          partial.data_ptr<float>(), grad_bias.data_ptr<float>(),
          at::cuda::getCurrentCUDAStream()));
    } else {
      const auto merged = [&](const torch::Tensor& t) {
        return t.transpose(1, 2).reshape({batch * sequence, out / 3});
      };
      joined = at::cat({merged(g[0]), merged(g[1]), merged(g[2])}, 1);
      grad_bias = joined.sum(0, false, torch::kFloat);
    }
    const auto [grad_x, grad_weight] = product_gradients(ctx, joined, xc, wc);
    // One entry per argument of forward(): heads and the casts get none.
    return {grad_x, grad_weight, grad_bias.to(saved_dtype(ctx, "bias_dtype")), torch::Tensor(),
            torch::Tensor()};
  }
};

// Weights W_0 .. W_n-1 (no biases, one input width) in `dtype` as one matrix [W_0; ...; W_n-1]:
// the casts (`casts`, or each weight converted here) viewed as one where they lie back to back in
// memory, as the optimizer's WeightCopies keep them; else joined in a copy.
torch::Tensor joined_weight(const std::vector<torch::Tensor>& weights,
                            const std::vector<torch::Tensor>& casts, c10::ScalarType dtype) {
  std::vector<torch::Tensor> parts;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    parts.push_back(in_dtype(i < casts.size() ? casts[i] : torch::Tensor(), weights[i], dtype));
  }
  const torch::Tensor& first = parts[0];
  const std::int64_t in = first.size(1);
  std::int64_t rows = 0;
  bool adjacent = true;
  for (const torch::Tensor& part : parts) {
    adjacent = adjacent && part.is_contiguous() && part.storage().is_alias_of(first.storage()) &&
               part.storage_offset() == first.storage_offset() + rows * in;
    rows += part.size(0);
  }
  if (adjacent) return first.as_strided({rows, in}, {in, 1}, first.storage_offset());
  return at::cat(parts, 0);
}

// silu(a) x b; saves a and b (ATen's silu and mul keep a, silu's output and b).
struct SwigluNode : public torch::autograd::Function<SwigluNode> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a,
                               const torch::Tensor& b) {
    const c10::cuda::CUDAGuard guard(a.device());
    torch::Tensor out = torch::empty_like(a);
    C10_CUDA_CHECK(detail::swiglu_forward(detail::nhwc_dtype(a.scalar_type()), a.data_ptr(),
                                          b.data_ptr(), 1, a.numel(), a.numel(), out.data_ptr(),
                                          at::cuda::getCurrentCUDAStream()));
    ctx->save_for_backward({a, b});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& a = saved[0];
    const c10::cuda::CUDAGuard guard(a.device());
    torch::Tensor g = grads[0].to(a.scalar_type()).contiguous();
    if (!detail::aligned16(g)) g = g.clone();
    torch::Tensor grad_a = torch::empty_like(a);
    torch::Tensor grad_b = torch::empty_like(a);
    C10_CUDA_CHECK(detail::swiglu_backward(detail::nhwc_dtype(a.scalar_type()), g.data_ptr(),
                                           a.data_ptr(), saved[1].data_ptr(), 1, a.numel(),
                                           a.numel(), grad_a.data_ptr(), grad_b.data_ptr(),
                                           at::cuda::getCurrentCUDAStream()));
    return {grad_a, grad_b};
  }
};

// Llama's gated MLP input, inputs x, w1, w3 (no biases): silu(x W1^T) x (x W3^T) in the compute
// dtype, both products one GEMM of [W1; W3] (joined_weight) whose halves the SwiGLU kernel reads in
// place. Saves the cast input, the joined weight and the product. Backward writes the two gates'
// gradients into one [rows, 2 hidden] gradient, then one GEMM for x's gradient (autograd would
// add two) and one for both weights' (float32 from the GEMM, split by rows).
struct SwigluLinearNode : public torch::autograd::Function<SwigluLinearNode> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w1, const torch::Tensor& w3,
                               const std::vector<torch::Tensor>& casts) {
    const c10::ScalarType dtype = compute_dtype(x);
    const torch::Tensor xc = x.to(dtype);
    const torch::Tensor wc = joined_weight({w1, w3}, casts, dtype);
    const torch::Tensor gate = linear_product(xc, wc);
    const std::int64_t hidden = w1.size(0);
    std::vector<std::int64_t> shape = xc.sizes().vec();
    shape.back() = hidden;
    torch::Tensor out = torch::empty(shape, gate.options());
    const c10::cuda::CUDAGuard guard(x.device());
    C10_CUDA_CHECK(detail::swiglu_forward(detail::nhwc_dtype(dtype), gate.data_ptr(),
                                          second_half(gate, hidden), gate.numel() / (2 * hidden),
                                          hidden, 2 * hidden, out.data_ptr(),
                                          at::cuda::getCurrentCUDAStream()));
    ctx->save_for_backward({xc, wc, gate});
    save_dtypes(ctx, x, w1, {});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& xc = saved[0];
    const torch::Tensor& wc = saved[1];
    const torch::Tensor& gate = saved[2];
    const c10::cuda::CUDAGuard guard(xc.device());
    const std::int64_t hidden = wc.size(0) / 2;
    const std::int64_t rows = gate.numel() / (2 * hidden);
    torch::Tensor g = grads[0].to(gate.scalar_type()).contiguous();
    if (!detail::aligned16(g)) g = g.clone();
    torch::Tensor grad_gate = torch::empty({rows, 2 * hidden}, gate.options());
    C10_CUDA_CHECK(detail::swiglu_backward(
        detail::nhwc_dtype(gate.scalar_type()), g.data_ptr(), gate.data_ptr(),
        second_half(gate, hidden), rows, hidden, 2 * hidden, grad_gate.data_ptr(),
        second_half(grad_gate, hidden), at::cuda::getCurrentCUDAStream()));
    const auto [grad_x, grad_weight] = product_gradients(ctx, grad_gate, xc, wc);
    const torch::autograd::variable_list w = grad_weight.split(hidden, 0);
    // One entry per argument of forward(): the casts get none.
    return {grad_x, w[0], w[1], torch::Tensor()};
  }

  // The address of column `hidden` of t's first row ([..., 2 hidden]).
  static void* second_half(const torch::Tensor& t, std::int64_t hidden) {
    return static_cast<char*>(t.data_ptr()) + hidden * static_cast<std::int64_t>(t.element_size());
  }
};

// Whether x's layout suits the rotary kernel: head width contiguous, the other strides and the
// start 16-byte multiples.
bool rotary_layout(const torch::Tensor& x) {
  const auto bytes = static_cast<std::int64_t>(x.element_size());
  return x.stride(3) == 1 && x.stride(0) * bytes % 16 == 0 && x.stride(1) * bytes % 16 == 0 &&
         x.stride(2) * bytes % 16 == 0 && detail::aligned16(x);
}

detail::RotaryStrides strides_of(const torch::Tensor& x) {
  return {x.stride(0), x.stride(1), x.stride(2)};
}

// Whether cos and sin suit the rotary kernel for `sequence` positions of head width `width` on
// `device` (a multiple of 8).
bool rotary_tables_fit(const torch::Tensor& cos, const torch::Tensor& sin,
                       const torch::Device& device, std::int64_t sequence, std::int64_t width) {
  if (width % 8 != 0) return false;
  for (const torch::Tensor* table : {&cos, &sin}) {
    if (!table->defined() || table->device() != device || table->scalar_type() != torch::kFloat ||
        table->dim() != 2 || !table->is_contiguous() || table->size(0) < sequence ||
        table->size(1) != width || !detail::aligned16(*table)) {
      return false;
    }
  }
  return true;
}

// x [batch, heads, sequence, head width] rotated by its positions' angles (or back, `inverse`),
// written into `out` (the same shape; strides multiples of 4 elements; x itself: in place).
void rotate_into(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                 bool inverse, const torch::Tensor& out) {
  const c10::cuda::CUDAGuard guard(x.device());
  const torch::Tensor in = rotary_layout(x) ? x : x.contiguous();
  C10_CUDA_CHECK(detail::rotary_embedding(
      detail::nhwc_dtype(x.scalar_type()), in.data_ptr(), strides_of(in), out.data_ptr(),
      strides_of(out), cos.data_ptr<float>(), sin.data_ptr<float>(), x.size(0), x.size(1),
      x.size(2), static_cast<int>(x.size(3)), inverse, at::cuda::getCurrentCUDAStream()));
}

// rotate_into() a new tensor in the projections' layout ([batch, sequence, heads, head width] in
// memory).
torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                     bool inverse) {
  torch::Tensor out =
      torch::empty({x.size(0), x.size(2), x.size(1), x.size(3)}, x.options()).transpose(1, 2);
  rotate_into(x, cos, sin, inverse, out);
  return out;
}

struct RotaryNode : public torch::autograd::Function<RotaryNode> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin) {
    ctx->save_for_backward({cos, sin});
    return rotate(x, cos, sin, false);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    return {rotate(grads[0], saved[0], saved[1], true), torch::Tensor(), torch::Tensor()};
  }
};

// Llama's attention input, inputs x [batch, sequence, width], wq, wk, wv (no biases), cos, sin:
// x [Wq; Wk; Wv]^T in one GEMM (joined_weight), split into q (`heads`) and k, v (`kv_heads`),
// each a view of the product (what attention keeps is the product: no more than three tensors of
// their own would hold), q and k rotated in place. Saves the cast input, the joined weight and
// the tables. Backward rotates q's and k's gradients back straight into the columns of one joined
// gradient and copies v's beside them, then one GEMM for x's gradient (autograd would add three)
// and one for the three weights' (float32 from the GEMM, split by rows).
struct RotaryHeadsNode : public torch::autograd::Function<RotaryHeadsNode> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& wq,
                                                const torch::Tensor& wk, const torch::Tensor& wv,
                                                const torch::Tensor& cos, const torch::Tensor& sin,
                                                std::int64_t heads, std::int64_t kv_heads,
                                                const std::vector<torch::Tensor>& casts) {
    const c10::ScalarType dtype = compute_dtype(x);
    const torch::Tensor xc = x.to(dtype);
    const torch::Tensor wc = joined_weight({wq, wk, wv}, casts, dtype);
    const std::vector<torch::Tensor> parts =
        linear_product(xc, wc).split_with_sizes({wq.size(0), wk.size(0), wv.size(0)}, -1);
    const torch::Tensor q = split_heads(parts[0], heads);
    const torch::Tensor k = split_heads(parts[1], kv_heads);
    rotate_into(q, cos, sin, false, q);
    rotate_into(k, cos, sin, false, k);
    ctx->save_for_backward({xc, wc, cos, sin});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["kv_heads"] = kv_heads;
    save_dtypes(ctx, x, wq, {});
    return {q, k, split_heads(parts[2], kv_heads)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& xc = saved[0];
    const torch::Tensor& wc = saved[1];
    const c10::cuda::CUDAGuard guard(xc.device());
    const std::int64_t heads = ctx->saved_data["heads"].toInt();
    const std::int64_t kv_heads = ctx->saved_data["kv_heads"].toInt();
    const std::int64_t head_width = wc.size(0) / (heads + 2 * kv_heads);
    // q's, k's and v's widths: the joined gradient's columns and the joined weight's rows.
    const std::vector<std::int64_t> widths{heads * head_width, kv_heads * head_width,
                                           kv_heads * head_width};
    const torch::Tensor joined = torch::empty({xc.size(0), xc.size(1), wc.size(0)}, xc.options());
    const std::vector<torch::Tensor> columns = joined.split_with_sizes(widths, -1);
    const c10::ScalarType dtype = wc.scalar_type();
    rotate_into(grads[0].to(dtype), saved[2], saved[3], true, split_heads(columns[0], heads));
    rotate_into(grads[1].to(dtype), saved[2], saved[3], true, split_heads(columns[1], kv_heads));
    split_heads(columns[2], kv_heads).copy_(grads[2]);
    const auto [grad_x, grad_weight] =
        product_gradients(ctx, joined.view({-1, wc.size(0)}), xc, wc);
    const torch::autograd::variable_list w = grad_weight.split_with_sizes(widths, 0);
    // One entry per argument of forward(): the tables, head counts and casts get none.
    return {grad_x,
            w[0],
            w[1],
            w[2],
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

// Inputs ids, weight; outputs weight[ids] and the weight itself (autograd hands the caller a view
// of it with this node as its gradient's way back). Backward receives the looked-up rows'
// gradient and the gradient of the weight's other use (the output layer's, from its GEMM) and
// adds the rows into the latter in place: index_put_ with accumulate sorts the ids on CUDA, so
// repeated tokens add in a fixed order. Autograd would zero a [vocabulary, width] gradient for
// the lookup, scatter into it, and add it to the output layer's.
struct TiedEmbeddingNode : public torch::autograd::Function<TiedEmbeddingNode> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& ids,
                                                const torch::Tensor& weight) {
    ctx->save_for_backward({ids});
    ctx->saved_data["vocabulary"] = weight.size(0);
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(weight.scalar_type());
    return {at::embedding(weight, ids), weight};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::Tensor ids = ctx->get_saved_variables()[0];
    const c10::cuda::CUDAGuard guard(ids.device());
    const auto dtype = static_cast<c10::ScalarType>(ctx->saved_data["dtype"].toInt());
    const std::int64_t vocabulary = ctx->saved_data["vocabulary"].toInt();
    torch::Tensor rows = grads[0];
    torch::Tensor grad = std::move(grads[1]);
    if (!rows.defined()) return {torch::Tensor(), grad};
    const std::int64_t width = rows.size(-1);
    // Added into in place only where nothing else holds it (the output layer's fresh product):
    // one tensor on its storage, held here and by the list autograd's node passed backward() a
    // copy of (two references); a gradient a hook kept, or a leaf's .grad, has more.
    if (!grad.defined()) {
      grad = torch::zeros({vocabulary, width}, rows.options().dtype(dtype));
    } else if (grad.use_count() > 2 || grad.storage().use_count() > 1 ||
               grad.scalar_type() != dtype || !grad.is_contiguous()) {
      grad = grad.to(dtype, /*non_blocking=*/false, /*copy=*/true, c10::MemoryFormat::Contiguous);
    }
    grad.index_put_({ids.reshape({-1})}, rows.reshape({-1, width}).to(dtype),
                    /*accumulate=*/true);
    return {torch::Tensor(), grad};
  }
};

#endif  // GPUPERF_WITH_CUDA_KERNELS

}  // namespace

void set_timed_gemm_algorithms(bool on) { timed_gemms.store(on); }

bool timed_gemm_algorithms() { return timed_gemms.load(); }

bool timed_gemm_algorithms_apply(const torch::Device& device, torch::ScalarType dtype) {
#if GPUPERF_WITH_CUDA_KERNELS
  return timed_gemms.load() && device.is_cuda() &&
         (dtype == torch::kHalf || dtype == torch::kBFloat16) &&
         detail::own_kernels_run_on(device.index());
#else
  (void)device, (void)dtype;
  return false;
#endif
}

bool fused_linear_applies(const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (!on_own_kernels(x) || !weight.defined() || weight.dim() != 2 || x.dim() < 1 ||
      x.size(-1) != weight.size(1) || weight.size(0) % 8 != 0 || weight.device() != x.device()) {
    return false;
  }
  if (bias.defined() &&
      (bias.dim() != 1 || bias.size(0) != weight.size(0) || bias.device() != x.device())) {
    return false;
  }
  const c10::ScalarType dtype = compute_dtype(x);
  if (!detail::own_kernel_dtype(dtype)) return false;
  // Without autocast at::linear takes one dtype throughout.
  return compat::autocast_enabled(x.device().type()) ||
         (weight.scalar_type() == dtype && (!bias.defined() || bias.scalar_type() == dtype));
#else
  (void)x, (void)weight, (void)bias;
  return false;
#endif
}

torch::Tensor linear_activation(const torch::Tensor& x, const torch::Tensor& weight,
                                const torch::Tensor& bias, Activation activation,
                                const CastLinear& cast) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_linear_applies(x, weight, bias)) {
    const c10::optional<torch::Tensor> bias_or_none =
        bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt;
    return LinearNode::apply(x, weight, bias_or_none, activation, cast);
  }
#else
  (void)cast;
#endif
  const torch::Tensor y = at::linear(x, weight, bias);
  return activation == Activation::kGeluTanh ? at::gelu(y, "tanh") : y;
}

bool fused_attention_heads_applies(const torch::Tensor& x, const torch::Tensor& weight,
                                   const torch::Tensor& bias, std::int64_t heads) {
#if GPUPERF_WITH_CUDA_KERNELS
  return x.dim() == 3 && bias.defined() && fused_linear_applies(x, weight, bias) &&
         weight.size(0) == 3 * x.size(2) && heads > 0 && x.size(2) % heads == 0 &&
         (x.size(2) / heads) % 8 == 0 && x.size(0) * x.size(1) <= INT32_MAX;
#else
  (void)x, (void)weight, (void)bias, (void)heads;
  return false;
#endif
}

std::vector<torch::Tensor> attention_heads(const torch::Tensor& x, const torch::Tensor& weight,
                                           const torch::Tensor& bias, std::int64_t heads,
                                           const CastLinear& cast) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_attention_heads_applies(x, weight, bias, heads)) {
    return AttentionHeadsNode::apply(x, weight, bias, heads, cast);
  }
#endif
  const std::vector<torch::Tensor> parts =
      linear_activation(x, weight, bias, Activation::kNone, cast).split(weight.size(0) / 3, -1);
  return {split_heads(parts[0], heads), split_heads(parts[1], heads), split_heads(parts[2], heads)};
}

std::pair<torch::Tensor, torch::Tensor> tied_embedding(const torch::Tensor& ids,
                                                       const torch::Tensor& weight) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (weight.is_cuda() && ids.device() == weight.device() && weight.dim() == 2 &&
      torch::autograd::GradMode::is_enabled() && weight.requires_grad()) {
    torch::autograd::variable_list out = TiedEmbeddingNode::apply(ids, weight);
    return {out[0], out[1]};
  }
#endif
  return {at::embedding(weight, ids), weight};
}

bool fused_rotary_heads_applies(const torch::Tensor& x, const torch::Tensor& wq,
                                const torch::Tensor& wk, const torch::Tensor& wv,
                                const torch::Tensor& cos, const torch::Tensor& sin,
                                std::int64_t heads, std::int64_t kv_heads) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (x.dim() != 3 || heads <= 0 || kv_heads <= 0 || wq.dim() != 2 || wq.size(0) % heads != 0) {
    return false;
  }
  const std::int64_t head_width = wq.size(0) / heads;
  const std::vector<std::pair<const torch::Tensor*, std::int64_t>> weights{
      {&wq, heads}, {&wk, kv_heads}, {&wv, kv_heads}};
  for (const auto& [w, count] : weights) {
    if (!fused_linear_applies(x, *w, {}) || w->scalar_type() != wq.scalar_type() ||
        w->size(0) != count * head_width) {
      return false;
    }
  }
  return rotary_tables_fit(cos, sin, x.device(), x.size(1), head_width);
#else
  (void)x, (void)wq, (void)wk, (void)wv, (void)cos, (void)sin, (void)heads, (void)kv_heads;
  return false;
#endif
}

std::vector<torch::Tensor> rotary_heads(const torch::Tensor& x, const torch::Tensor& wq,
                                        const torch::Tensor& wk, const torch::Tensor& wv,
                                        const torch::Tensor& cos, const torch::Tensor& sin,
                                        std::int64_t heads, std::int64_t kv_heads,
                                        const std::vector<torch::Tensor>& casts) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_rotary_heads_applies(x, wq, wk, wv, cos, sin, heads, kv_heads)) {
    return RotaryHeadsNode::apply(x, wq, wk, wv, cos, sin, heads, kv_heads, casts);
  }
#endif
  return {rotary_embedding(split_heads(linear_with_cast(x, wq, casts, 0), heads), cos, sin),
          rotary_embedding(split_heads(linear_with_cast(x, wk, casts, 1), kv_heads), cos, sin),
          split_heads(linear_with_cast(x, wv, casts, 2), kv_heads)};
}

bool fused_swiglu_linear_applies(const torch::Tensor& x, const torch::Tensor& w1,
                                 const torch::Tensor& w3) {
#if GPUPERF_WITH_CUDA_KERNELS
  return fused_linear_applies(x, w1, {}) && fused_linear_applies(x, w3, {}) &&
         w1.scalar_type() == w3.scalar_type() && w1.sizes() == w3.sizes();
#else
  (void)x, (void)w1, (void)w3;
  return false;
#endif
}

torch::Tensor swiglu_linear(const torch::Tensor& x, const torch::Tensor& w1,
                            const torch::Tensor& w3, const std::vector<torch::Tensor>& casts) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_swiglu_linear_applies(x, w1, w3)) return SwigluLinearNode::apply(x, w1, w3, casts);
#endif
  return swiglu(linear_with_cast(x, w1, casts, 0), linear_with_cast(x, w3, casts, 1));
}

bool fused_swiglu_applies(const torch::Tensor& a, const torch::Tensor& b) {
#if GPUPERF_WITH_CUDA_KERNELS
  return on_own_kernels(a) && b.defined() && b.device() == a.device() &&
         b.scalar_type() == a.scalar_type() && b.sizes() == a.sizes() && a.is_contiguous() &&
         b.is_contiguous() && a.numel() % 8 == 0 && detail::aligned16(a) && detail::aligned16(b);
#else
  (void)a, (void)b;
  return false;
#endif
}

torch::Tensor swiglu(const torch::Tensor& a, const torch::Tensor& b) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_swiglu_applies(a, b)) return SwigluNode::apply(a, b);
#endif
  return at::silu(a) * b;
}

bool fused_rotary_applies(const torch::Tensor& x, const torch::Tensor& cos,
                          const torch::Tensor& sin) {
#if GPUPERF_WITH_CUDA_KERNELS
  return on_own_kernels(x) && x.dim() == 4 &&
         rotary_tables_fit(cos, sin, x.device(), x.size(2), x.size(3));
#else
  (void)x, (void)cos, (void)sin;
  return false;
#endif
}

torch::Tensor rotary_embedding(const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (fused_rotary_applies(x, cos, sin)) return RotaryNode::apply(x, cos, sin);
#endif
  return aten_rotary(x, cos, sin);
}

}  // namespace gpuperf
