#pragma once
// Attention's head layout as views, shared by the models (transformer.cpp) and their autograd
// nodes (transformer_ops.cpp).

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace gpuperf::detail {

/// [batch, sequence, heads x head width] -> [batch, heads, sequence, head width], a view.
inline at::Tensor split_heads(const at::Tensor& x, std::int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

/// [batch, heads, sequence, head width] -> [batch, sequence, heads x head width] (a copy where
/// the heads are not already in that order).
inline at::Tensor merge_heads(const at::Tensor& x) {
  return x.transpose(1, 2).contiguous().view({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

}  // namespace gpuperf::detail
