#include "gpuperf/optim/weight_copies.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <cstdint>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

thread_local WeightCopies* current_copies = nullptr;

const void* key(const torch::Tensor& t) { return t.unsafeGetTensorImpl(); }

// Uninitialised copies of `parameters` in `dtype`: back to back in one allocation, in the list's
// order, where they are contiguous on one device (layers that read one input then multiply by
// neighbouring copies as one matrix: Llama's wq, wk and wv), each start a multiple of 16 bytes;
// else each its own, dense in its parameter's memory order.
std::vector<torch::Tensor> allocate(const std::vector<torch::Tensor>& parameters,
                                    c10::ScalarType dtype) {
  std::vector<torch::Tensor> copies;
  const bool together = std::all_of(parameters.begin(), parameters.end(), [&](const auto& p) {
    return p.is_contiguous() && p.device() == parameters[0].device();
  });
  if (!together) {
    for (const auto& p : parameters) copies.push_back(at::empty_like(p, p.options().dtype(dtype)));
    return copies;
  }
  const std::int64_t align = 16 / static_cast<std::int64_t>(c10::elementSize(dtype));
  std::vector<std::int64_t> starts;
  std::int64_t total = 0;
  for (const auto& p : parameters) {
    starts.push_back(total);
    total += (p.numel() + align - 1) / align * align;
  }
  const torch::Tensor flat = at::empty({total}, parameters[0].options().dtype(dtype));
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    copies.push_back(flat.narrow(0, starts[i], parameters[i].numel()).view(parameters[i].sizes()));
  }
  return copies;
}

}  // namespace

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
    const std::vector<torch::Tensor> copies = allocate(parameters, dtype_);
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
