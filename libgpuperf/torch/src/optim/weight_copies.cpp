#include "gpuperf/optim/weight_copies.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <cstdint>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

thread_local WeightCopies* current_copies = nullptr;

const void* key(const torch::Tensor& t) { return t.unsafeGetTensorImpl(); }

}  // namespace

std::vector<torch::Tensor> empty_back_to_back(const std::vector<torch::Tensor>& like,
                                              c10::ScalarType dtype) {
  std::vector<torch::Tensor> out;
  const bool together = !like.empty() && std::all_of(like.begin(), like.end(), [&](const auto& t) {
    return t.is_contiguous() && t.device() == like[0].device();
  });
  if (!together) {
    for (const auto& t : like) out.push_back(at::empty_like(t, t.options().dtype(dtype)));
    return out;
  }
  const std::int64_t align = 16 / static_cast<std::int64_t>(c10::elementSize(dtype));
  std::vector<std::int64_t> starts;
  std::int64_t total = 0;
  for (const auto& t : like) {
    starts.push_back(total);
    total += (t.numel() + align - 1) / align * align;
  }
  const torch::Tensor flat = at::empty({total}, like[0].options().dtype(dtype));
  for (std::size_t i = 0; i < like.size(); ++i) {
    // The tensor's own strides (contiguous ones may differ along dimensions of size 1).
    out.push_back(flat.as_strided(like[i].sizes(), like[i].strides(), starts[i]));
  }
  return out;
}

WeightCopies::WeightCopies(c10::ScalarType dtype) : dtype_(dtype) {
  if (dtype != torch::kHalf && dtype != torch::kBFloat16) {
    throw ConfigError("WeightCopies", c10::toString(dtype), "must be float16 or bfloat16");
  }
}

void WeightCopies::cast(Entry& entry) {
  const torch::NoGradGuard no_grad;
  entry.copy.copy_(entry.parameter);
  entry.version = entry.parameter._version();
}

std::vector<torch::Tensor> WeightCopies::get(const std::vector<torch::Tensor>& parameters,
                                             c10::ScalarType dtype) {
  if (dtype != dtype_ || parameters.empty()) return {};
  if (entries_.empty()) {
    for (const auto& p : parameters) {
      if (!p.defined() || p.scalar_type() != torch::kFloat || !p.is_non_overlapping_and_dense()) {
        return {};
      }
    }
    for (const auto& p : parameters) {
      if (!index_.emplace(key(p), index_.size()).second) {  // listed twice: written twice
        index_.clear();
        return {};
      }
    }
    const std::vector<torch::Tensor> copies = empty_back_to_back(parameters, dtype_);
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      entries_.push_back({parameters[i], copies[i], 0});
      cast(entries_.back());
    }
  } else if (parameters.size() != entries_.size()) {
    return {};
  } else {
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      if (key(parameters[i]) != key(entries_[i].parameter)) return {};
    }
    refresh();
  }
  std::vector<torch::Tensor> copies;
  copies.reserve(entries_.size());
  for (const auto& e : entries_) copies.push_back(e.copy);
  return copies;
}

void WeightCopies::refresh() {
  for (auto& e : entries_) {
    if (e.parameter._version() != e.version) cast(e);
  }
}

void WeightCopies::forget() {
  for (auto& e : entries_) e.version = -1;  // no version a tensor has
}

torch::Tensor WeightCopies::copy_of(const torch::Tensor& parameter) const {
  const auto it = index_.find(key(parameter));
  return it == index_.end() ? torch::Tensor() : entries_[it->second].copy;
}

void WeightCopies::written(const torch::Tensor& parameter) {
  const auto it = index_.find(key(parameter));
  if (it == index_.end()) return;
  Entry& e = entries_[it->second];
  e.copy.unsafeGetTensorImpl()->bump_version();
  e.version = parameter._version();
}

WeightCopies* WeightCopies::current() { return current_copies; }

WeightCopies::Scope::Scope(WeightCopies* copies) : previous_(current_copies) {
  current_copies = copies;
}

WeightCopies::Scope::~Scope() { current_copies = previous_; }

}  // namespace gpuperf
