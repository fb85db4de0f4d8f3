#include "gpuperf/distributed/data_parallel.h"

#include <torch/csrc/autograd/generated/variable_factories.h>
#include <torch/utils.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "gpuperf/base/error.h"

namespace gpuperf {

void DataParallelOptions::validate() const {
  require_setting(bucket_bytes > 0 && std::isfinite(bucket_bytes),
                  "DataParallelOptions::bucket_bytes", bucket_bytes, "finite and > 0");
}

DataParallelSync::DataParallelSync(torch::nn::Module& module, ProcessGroup& group,
                                   DataParallelOptions options)
    : group_(group), options_(options) {
  options_.validate();
  {
    // Every replica starts from rank 0's weights and statistics.
    torch::NoGradGuard no_grad;
    for (auto& p : module.parameters()) group_.broadcast(p, 0);
    for (auto& b : module.buffers()) group_.broadcast(b, 0);
  }
  for (auto& p : module.parameters()) {
    if (p.requires_grad()) params_.push_back(p);
  }
  bucket_of_.resize(params_.size());
  slot_of_.resize(params_.size());
  written_.assign(params_.size(), false);
  // Reverse order: backward produces the last layers' gradients first, so the first bucket is
  // complete early and its all-reduce overlaps the rest of backward.
  std::vector<std::int64_t> sizes;  // elements per bucket
  double bucket_size = 0;
  for (std::size_t k = params_.size(); k-- > 0;) {
    const torch::Tensor& p = params_[k];
    const bool new_bucket =
        buckets_.empty() || bucket_size >= options_.bucket_bytes ||
        params_[buckets_.back().params.front()].scalar_type() != p.scalar_type();
    if (new_bucket) {
      buckets_.emplace_back();
      sizes.push_back(0);
      bucket_size = 0;
    }
    Bucket& b = buckets_.back();
    bucket_of_[k] = buckets_.size() - 1;
    slot_of_[k] = b.params.size();
    b.offsets.push_back(sizes.back());
    b.params.push_back(k);
    sizes.back() += p.numel();
    bucket_size += static_cast<double>(p.numel()) * static_cast<double>(p.element_size());
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    buckets_[i].flat = torch::zeros({sizes[i]}, params_[buckets_[i].params.front()].options());
  }
  if (!params_.empty()) {
    scale_ = torch::full({}, 1.0 / group_.world_size(), params_.front().options());
  }
  if (options_.overlap) {
    for (std::size_t k = 0; k < params_.size(); ++k) {
      hooks_.push_back(
          params_[k].register_hook([this, k](const torch::Tensor& grad) { on_gradient(k, grad); }));
    }
  }
}

DataParallelSync::~DataParallelSync() {
  // The hooks point at this object: a backward after it is gone must not call them.
  for (std::size_t k = 0; k < hooks_.size(); ++k) params_[k].remove_hook(hooks_[k]);
}

void DataParallelSync::begin_step(int micro_batches) {
  std::lock_guard<std::mutex> lock(mutex_);
  hooks_active_ = micro_batches <= 1;
}

void DataParallelSync::on_gradient(std::size_t param, const torch::Tensor& grad) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!hooks_active_) return;
  Bucket& b = buckets_[bucket_of_[param]];
  const std::int64_t numel = params_[param].numel();
  b.flat.narrow(0, b.offsets[slot_of_[param]], numel).copy_(grad.reshape({numel}));
  if (!written_[param]) {
    written_[param] = true;
    ++b.ready;
  }
  launch_ready_buckets();
}

void DataParallelSync::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() &&
         buckets_[next_launch_].ready == buckets_[next_launch_].params.size()) {
    Bucket& b = buckets_[next_launch_++];
    b.pending = group_.allreduce_sum_async(b.flat);
  }
}

void DataParallelSync::after_backward() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Gradients the hooks did not see: all of them without overlap, or parameters this step did
  // not use (zero, so that the ranks that used them decide the average).
  for (std::size_t k = 0; k < params_.size(); ++k) {
    if (written_[k]) continue;
    Bucket& b = buckets_[bucket_of_[k]];
    const std::int64_t numel = params_[k].numel();
    torch::Tensor slot = b.flat.narrow(0, b.offsets[slot_of_[k]], numel);
    const torch::Tensor& grad = params_[k].grad();
    if (grad.defined()) {
      slot.copy_(grad.reshape({numel}));
    } else {
      slot.zero_();
    }
    written_[k] = true;
    ++b.ready;
  }
  launch_ready_buckets();
  const double scale = 1.0 / group_.world_size();
  for (Bucket& b : buckets_) {
    b.pending();
    b.pending = nullptr;
    for (std::size_t i = 0; i < b.params.size(); ++i) {
      torch::Tensor& p = params_[b.params[i]];
      const torch::Tensor sum = b.flat.narrow(0, b.offsets[i], p.numel()).view(p.sizes());
      // The mean is written straight into the gradient: one pass over the bucket, not a scaling
      // pass and then a copy.
      if (p.grad().defined()) {
        torch::mul_out(p.mutable_grad(), sum, scale_);
      } else {
        p.mutable_grad() = sum * scale;
      }
    }
    b.ready = 0;
  }
  written_.assign(params_.size(), false);
  next_launch_ = 0;
}

std::string DataParallelSync::capture_unsupported_reason() const {
  if (group_.backend_name() == "nccl") return "";
  return "CUDA graph not used: the " + group_.backend_name() +
         " process group's collectives cannot be captured (NCCL's can); steps run eagerly";
}

double DataParallelSync::gradient_bytes() const {
  double bytes = 0;
  for (const Bucket& b : buckets_) {
    bytes += static_cast<double>(b.flat.numel()) * static_cast<double>(b.flat.element_size());
  }
  return bytes;
}

std::vector<torch::Tensor> DataParallelSync::bucket_buffers() const {
  std::vector<torch::Tensor> out;
  for (const Bucket& b : buckets_) out.push_back(b.flat);
  return out;
}

std::uint64_t parameter_digest(torch::nn::Module& module) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (const auto& p : module.parameters()) {
    const torch::Tensor host = p.detach().to(torch::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
    const std::size_t n = static_cast<std::size_t>(host.numel()) * host.element_size();
    for (std::size_t i = 0; i < n; ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ULL;
    }
  }
  return hash;
}

bool parameters_identical_across_ranks(torch::nn::Module& module, ProcessGroup& group) {
  std::int64_t digest = 0;
  const std::uint64_t hash = parameter_digest(module);
  std::memcpy(&digest, &hash, sizeof digest);
  const torch::Device device = module.parameters().empty() ? torch::Device(torch::kCPU)
                                                           : module.parameters().front().device();
  const auto options = torch::TensorOptions().dtype(torch::kInt64).device(device);
  torch::Tensor high = torch::full({1}, digest, options);
  torch::Tensor low = high.clone();
  group.allreduce_max(high);
  group.allreduce_min(low);
  return high.item<std::int64_t>() == low.item<std::int64_t>();
}

}  // namespace gpuperf
