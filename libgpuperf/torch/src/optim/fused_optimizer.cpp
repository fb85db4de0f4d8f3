#include "gpuperf/optim/fused_optimizer.h"

#include <torch/version.h>

#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "compat.h"
#include "gpuperf/base/error.h"
#include "gpuperf/optim/weight_copies.h"

#if GPUPERF_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "device/own_kernels.h"
#include "optim/adam_kernels.h"
#endif

#if GPUPERF_HAS_FUSED_OPTIMIZERS
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_sub.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sgd.h>
#endif

namespace gpuperf {

void FusedOptimizerOptions::validate() const {
  auto bad = [](const char* field, double value, const char* rule) {
    throw ConfigError(std::string("FusedOptimizerOptions::") + field,
                      std::string("must be ") + rule + ", got " + std::to_string(value));
  };
  if (!(learning_rate > 0)) bad("learning_rate", learning_rate, "> 0");
  if (!(beta1 >= 0 && beta1 < 1)) bad("beta1", beta1, "in [0, 1)");
  if (!(beta2 >= 0 && beta2 < 1)) bad("beta2", beta2, "in [0, 1)");
  if (!(eps > 0)) bad("eps", eps, "> 0");
  if (weight_decay < 0) bad("weight_decay", weight_decay, ">= 0");
  if (momentum < 0) bad("momentum", momentum, ">= 0");
  if (nesterov && momentum <= 0) bad("momentum", momentum, "> 0 for Nesterov");
}

bool FusedOptimizer::available(const torch::Device& device) {
#if GPUPERF_HAS_FUSED_OPTIMIZERS
  return device.is_cuda() || (device.is_cpu() && compat::kCpuFusedOptimizers);
#else
  (void)device;
  return false;
#endif
}

FusedOptimizer::FusedOptimizer(std::vector<torch::Tensor> parameters, FusedOptimizerOptions options)
    : parameters_(std::move(parameters)), options_(options) {
  options_.validate();
  if (parameters_.empty()) throw ConfigError("FusedOptimizer: no parameters");
  const torch::Device device = parameters_.front().device();
  if (!available(device)) {
    throw ConfigError("optimizer", to_string(options_.kind) + " (fused)",
                      std::string("LibTorch ") + TORCH_VERSION +
                          " has no fused optimizer kernels for " + device.str());
  }
  // The kernels read the rate from device memory (their tensor-lr overloads), so that a graph
  // replay picks up set_learning_rate(); float32, as torch.optim's tensor rates.
  lr_ = torch::full({}, options_.learning_rate,
                    torch::TensorOptions().device(device).dtype(torch::kFloat));
  for (const auto& p : parameters_) {
    if (p.device() != device) throw ConfigError("FusedOptimizer: parameters on several devices");
    if (options_.kind == OptimizerKind::kSgd) {
      if (options_.momentum > 0) momentum_.push_back(torch::zeros_like(p));
    } else {
      exp_avg_.push_back(torch::zeros_like(p));
      exp_avg_sq_.push_back(torch::zeros_like(p));
      steps_.push_back(torch::zeros({}, p.options().dtype(torch::kFloat)));
    }
  }
}

void FusedOptimizer::zero_grad(bool set_to_none) {
  for (auto& p : parameters_) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = torch::Tensor();
    } else {
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
  }
}

std::vector<torch::Tensor> FusedOptimizer::gradients() const {
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters_) {
    if (p.grad().defined()) out.push_back(p.grad());
  }
  return out;
}

#if GPUPERF_HAS_FUSED_OPTIMIZERS
namespace {

#if GPUPERF_WITH_CUDA_KERNELS
// Whether gpuperf's Adam kernel (optim/adam_kernels.h) takes these tensors: float32 on a GPU its
// kernels run on, each parameter's gradient and moments dense in the parameter's memory order.
bool own_adam_applies(const std::vector<torch::Tensor>& params,
                      const std::vector<torch::Tensor>& grads,
                      const std::vector<torch::Tensor>& exp_avg,
                      const std::vector<torch::Tensor>& exp_avg_sq, const torch::Tensor& lr,
                      const torch::Tensor& grad_scale, const torch::Tensor& found_inf) {
  const torch::Device device = params.front().device();
  if (!device.is_cuda() || !detail::own_kernels_run_on(device.index())) return false;
  for (const torch::Tensor* scalar : {&lr, &grad_scale, &found_inf}) {
    if (scalar->defined() &&
        (scalar->device() != device || scalar->scalar_type() != torch::kFloat)) {
      return false;
    }
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor& p = params[i];
    if (p.device() != device || p.scalar_type() != torch::kFloat ||
        !p.is_non_overlapping_and_dense()) {
      return false;
    }
    for (const torch::Tensor* t : {&grads[i], &exp_avg[i], &exp_avg_sq[i]}) {
      if (t->device() != device || t->scalar_type() != torch::kFloat || t->layout() != p.layout() ||
          t->sizes() != p.sizes() || t->strides() != p.strides()) {
        return false;
      }
    }
  }
  return true;
}
#endif

// Adam or AdamW in gpuperf's kernel (ATen's arithmetic in fewer, fuller launches) where it
// applies, writing the 16-bit copies `copies` holds (may be null) too; false, with nothing done,
// where ATen's kernels are to run.
bool own_adam_step(WeightCopies* copies, const std::vector<torch::Tensor>& params,
                   const std::vector<torch::Tensor>& grads,
                   const std::vector<torch::Tensor>& exp_avg,
                   const std::vector<torch::Tensor>& exp_avg_sq,
                   const std::vector<torch::Tensor>& steps, const torch::Tensor& lr,
                   const FusedOptimizerOptions& options, const torch::Tensor& grad_scale,
                   const torch::Tensor& found_inf, bool mark_written = true) {
#if GPUPERF_WITH_CUDA_KERNELS
  if (!own_adam_applies(params, grads, exp_avg, exp_avg_sq, lr, grad_scale, found_inf)) {
    return false;
  }
  const c10::cuda::CUDAGuard guard(params.front().device());
  // The parameters' copies, where they have one (WeightCopies made each like its parameter).
  std::vector<torch::Tensor> written(params.size());
  if (copies != nullptr) {
    for (std::size_t i = 0; i < params.size(); ++i) written[i] = copies->copy_of(params[i]);
  }
  std::vector<detail::AdamTensor> tensors(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    detail::AdamTensor& t = tensors[i];
    t.param = params[i].data_ptr<float>();
    t.grad = grads[i].data_ptr<float>();
    t.exp_avg = exp_avg[i].data_ptr<float>();
    t.exp_avg_sq = exp_avg_sq[i].data_ptr<float>();
    t.step = steps[i].data_ptr<float>();
    t.copy = written[i].defined() ? written[i].data_ptr() : nullptr;
    t.numel = params[i].numel();
  }
  detail::AdamSettings s;
  s.lr = lr.data_ptr<float>();
  s.beta1 = options.beta1;
  s.beta2 = options.beta2;
  s.eps = options.eps;
  s.weight_decay = options.weight_decay;
  s.decoupled = options.kind == OptimizerKind::kAdamW;
  s.grad_scale = grad_scale.defined() ? grad_scale.data_ptr<float>() : nullptr;
  s.found_inf = found_inf.defined() ? found_inf.data_ptr<float>() : nullptr;
  if (copies != nullptr) {
    s.copy =
        copies->dtype() == torch::kHalf ? detail::CopyDtype::kHalf : detail::CopyDtype::kBFloat16;
  }
  C10_CUDA_CHECK(detail::adam_step(tensors.data(), static_cast<int>(tensors.size()), s,
                                   at::cuda::getCurrentCUDAStream()));
  if (!mark_written) return true;  // the caller counts the writes (FusedOptimizer::InBackward)
  // Written in place, as by ATen's kernels: autograd's saved-tensor checks see new versions.
  for (const auto& p : params) p.unsafeGetTensorImpl()->bump_version();
  if (grad_scale.defined()) {
    for (const auto& g : grads) g.unsafeGetTensorImpl()->bump_version();
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (written[i].defined()) copies->written(params[i]);
  }
  return true;
#else
  (void)copies;
  (void)params;
  (void)grads;
  (void)exp_avg;
  (void)exp_avg_sq;
  (void)steps;
  (void)lr;
  (void)options;
  (void)grad_scale;
  (void)found_inf;
  (void)mark_written;
  return false;
#endif
}

}  // namespace
#endif  // GPUPERF_HAS_FUSED_OPTIMIZERS

// NOLINTNEXTLINE(readability-convert-member-functions-to-static): static only without the kernels
void FusedOptimizer::step(const torch::Tensor& grad_scale, const torch::Tensor& found_inf) {
#if GPUPERF_HAS_FUSED_OPTIMIZERS
  // Only parameters with gradients take part, with their matching state.
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (parameters_[i].grad().defined()) indices.push_back(i);
  }
  if (!indices.empty()) update(indices, grad_scale, found_inf);
#else
  (void)grad_scale;
  (void)found_inf;
  throw ConfigError("FusedOptimizer::step: no fused kernels in this LibTorch");
#endif
}

void FusedOptimizer::update(const std::vector<std::size_t>& indices,
                            const torch::Tensor& grad_scale, const torch::Tensor& found_inf) {
#if GPUPERF_HAS_FUSED_OPTIMIZERS
  std::vector<torch::Tensor> params, grads, state_a, state_b, steps, buffers;
  for (const std::size_t i : indices) {
    const auto& p = parameters_[i];
    params.push_back(p);
    grads.push_back(p.grad());
    if (options_.kind == OptimizerKind::kSgd) {
      if (options_.momentum > 0) buffers.push_back(momentum_[i]);
    } else {
      state_a.push_back(exp_avg_[i]);
      state_b.push_back(exp_avg_sq_[i]);
      steps.push_back(steps_[i]);
    }
  }
  const c10::optional<at::Tensor> scale =
      grad_scale.defined() ? c10::optional<at::Tensor>(grad_scale) : c10::nullopt;
  const c10::optional<at::Tensor> inf =
      found_inf.defined() ? c10::optional<at::Tensor>(found_inf) : c10::nullopt;
  switch (options_.kind) {
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: {
      // As torch.optim's fused path: count the step on the device, and take it back if skipped.
      at::_foreach_add_(steps, 1);
      own_kernel_ran_ = own_adam_step(copies_, params, grads, state_a, state_b, steps, lr_,
                                      options_, grad_scale, found_inf);
      if (!own_kernel_ran_) {
        const std::vector<torch::Tensor> no_max_exp_avg_sq;
        if (options_.kind == OptimizerKind::kAdam) {
          at::_fused_adam_(params, grads, state_a, state_b, no_max_exp_avg_sq, steps, lr_,
                           options_.beta1, options_.beta2, options_.weight_decay, options_.eps,
                           /*amsgrad=*/false, /*maximize=*/false, scale, inf);
        } else {
          at::_fused_adamw_(params, grads, state_a, state_b, no_max_exp_avg_sq, steps, lr_,
                            options_.beta1, options_.beta2, options_.weight_decay, options_.eps,
                            /*amsgrad=*/false, /*maximize=*/false, scale, inf);
        }
      }
      if (found_inf.defined()) {
        at::_foreach_sub_(steps, std::vector<torch::Tensor>(steps.size(), found_inf.reshape({})));
      }
      break;
    }
    case OptimizerKind::kSgd:
      // The momentum buffers start at zero, so buf = momentum * 0 + grad on the first step: what
      // torch::optim::SGD's first step sets (buf = grad), without a first-step flag that would
      // differ between calls and so between a CUDA graph's capture and its replays.
      at::_fused_sgd_(params, grads, buffers, options_.weight_decay, options_.momentum, lr_,
                      /*dampening=*/0.0, options_.nesterov,
                      /*maximize=*/false, /*is_first_step=*/false, scale, inf);
      break;
  }
#else
  (void)indices;
  (void)grad_scale;
  (void)found_inf;
#endif
}

#if GPUPERF_HAS_FUSED_OPTIMIZERS && GPUPERF_WITH_CUDA_KERNELS

// The updates begin_step_in_backward() arms. Backward calls a parameter's hook just before it
// stores that gradient, on the thread that then stores it and goes on: at a hook, every gradient
// handed over before is stored and its kernels are queued on backward's stream. Those wait here
// until they hold kLaunchElements, then one launch updates them on `stream`, behind an event on
// backward's stream. Version counters are left alone until finish(): a later backward node may
// still check the saved 16-bit copy of another parameter, and the copies share one counter.
struct FusedOptimizer::InBackward {
  static constexpr std::int64_t kLaunchElements = std::int64_t{8} << 20;

  explicit InBackward(c10::DeviceIndex index)
      : device(index), stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index)) {}
  c10::DeviceIndex device;
  c10::cuda::CUDAStream stream;  // the updates' (never the stream backward runs on)
  at::cuda::CUDAEvent fork;      // on backward's stream, before a launch
  at::cuda::CUDAEvent join;      // on `stream`, after the last launch
  std::vector<std::pair<std::size_t, unsigned>> hooks;  // parameter, hook
  std::mutex mutex;
  bool armed = false;
  bool launched = false;             // a launch on `stream` this step
  std::vector<std::size_t> handed;   // gradients handed over, not yet launched
  std::int64_t handed_elements = 0;  // their elements
  std::vector<bool> seen;            // per parameter: handed over this step
  std::optional<std::size_t> twice;  // a parameter handed over twice this step
  std::vector<std::size_t> written;  // updated by gpuperf's kernel: versions to count
  std::vector<std::size_t> late;     // the kernel does not take them: updated after backward

  // The hook of parameter `index`.
  void handed_over(FusedOptimizer& optimizer, std::size_t index) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!armed) return;
    if (seen[index]) {
      twice = index;  // a second gradient in one backward: finish() says so
      return;
    }
    seen[index] = true;
    if (handed_elements >= kLaunchElements) {  // all handed over before this one: stored
      launch(optimizer, handed);
      handed.clear();
      handed_elements = 0;
    }
    handed.push_back(index);
    handed_elements += optimizer.parameters_[index].numel();
  }

  // `indices` (gradients stored) updated on `stream` after backward's stream's work so far.
  void launch(FusedOptimizer& optimizer, const std::vector<std::size_t>& indices) {
    std::vector<torch::Tensor> params, grads, exp_avg, exp_avg_sq, steps;
    for (const std::size_t i : indices) {
      params.push_back(optimizer.parameters_[i]);
      grads.push_back(optimizer.parameters_[i].grad());
      exp_avg.push_back(optimizer.exp_avg_[i]);
      exp_avg_sq.push_back(optimizer.exp_avg_sq_[i]);
      steps.push_back(optimizer.steps_[i]);
    }
    if (!own_adam_applies(params, grads, exp_avg, exp_avg_sq, optimizer.lr_, {}, {})) {
      late.insert(late.end(), indices.begin(), indices.end());
      return;
    }
    fork.record(c10::cuda::getCurrentCUDAStream(device));
    fork.block(stream);
    const c10::cuda::CUDAStreamGuard on_stream(stream);
    at::_foreach_add_(steps, 1);
    (void)own_adam_step(optimizer.copies_, params, grads, exp_avg, exp_avg_sq, steps, optimizer.lr_,
                        optimizer.options_, {}, {}, /*mark_written=*/false);
    written.insert(written.end(), indices.begin(), indices.end());
    launched = true;
  }
};

FusedOptimizer::~FusedOptimizer() {
  // The hooks point at this object: a backward after it is gone must not call them.
  if (in_backward_) {
    for (const auto& [param, hook] : in_backward_->hooks) parameters_[param].remove_hook(hook);
  }
}

bool FusedOptimizer::begin_step_in_backward() {
  const torch::Device device = parameters_.front().device();
  if (options_.kind == OptimizerKind::kSgd || !device.is_cuda() ||
      !detail::own_kernels_run_on(device.index())) {
    return false;
  }
  for (const auto& p : parameters_) {
    if (p.scalar_type() != torch::kFloat || !p.is_non_overlapping_and_dense()) return false;
  }
  if (!in_backward_) {
    in_backward_ = std::make_unique<InBackward>(device.index());
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      if (!parameters_[i].requires_grad()) continue;
      const unsigned hook = parameters_[i].register_hook(
          [this, i](const torch::Tensor& /*grad*/) { in_backward_->handed_over(*this, i); });
      in_backward_->hooks.emplace_back(i, hook);
    }
  }
  InBackward& state = *in_backward_;
  const std::lock_guard<std::mutex> lock(state.mutex);
  // Backward runs on the current stream: the updates must not (the pool hands streams round).
  while (state.stream == c10::cuda::getCurrentCUDAStream(device.index())) {
    state.stream = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index());
  }
  state.armed = true;
  state.launched = false;
  state.handed.clear();
  state.handed_elements = 0;
  state.written.clear();
  state.late.clear();
  state.seen.assign(parameters_.size(), false);
  state.twice.reset();
  own_kernel_ran_ = true;
  return true;
}

void FusedOptimizer::finish_step_in_backward() {
  if (!in_backward_) return;
  InBackward& state = *in_backward_;
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.armed) return;
  state.armed = false;
  // Backward is done: the last gradients handed over are stored too.
  if (!state.handed.empty()) state.launch(*this, state.handed);
  if (state.launched) {
    state.join.record(state.stream);
    state.join.block(c10::cuda::getCurrentCUDAStream(state.device));
  }
  for (const std::size_t i : state.written) {
    parameters_[i].unsafeGetTensorImpl()->bump_version();
    if (copies_ != nullptr) copies_->written(parameters_[i]);
  }
  if (!state.late.empty()) {
    update(state.late, {}, {});
    own_kernel_ran_ = false;
  }
  state.handed.clear();
  state.written.clear();
  state.late.clear();
  if (state.twice) {
    throw Error("FusedOptimizer: parameter " + std::to_string(*state.twice) +
                " got two gradients in one backward pass (a reentrant backward inside the "
                "model?); its update in backward took the first one only: call step() after "
                "backward for this model");
  }
}

#else

struct FusedOptimizer::InBackward {};

FusedOptimizer::~FusedOptimizer() = default;

// NOLINTNEXTLINE(readability-convert-member-functions-to-static): static only without the kernels
bool FusedOptimizer::begin_step_in_backward() { return false; }

void FusedOptimizer::finish_step_in_backward() {}

#endif

// NOLINTNEXTLINE(readability-convert-member-functions-to-static): static only without the kernels
bool FusedOptimizer::writes_copies() const {
#if GPUPERF_HAS_FUSED_OPTIMIZERS && GPUPERF_WITH_CUDA_KERNELS
  const torch::Device device = parameters_.front().device();
  return options_.kind != OptimizerKind::kSgd && device.is_cuda() &&
         detail::own_kernels_run_on(device.index());
#else
  return false;
#endif
}

void FusedOptimizer::set_learning_rate(double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) {
    throw ConfigError("FusedOptimizer::set_learning_rate: must be > 0, got " + std::to_string(lr));
  }
  options_.learning_rate = lr;
  lr_.fill_(lr);
}

namespace {

// Each list under "<name>.<index>", and its length under "<name>.count".
void save_list(torch::serialize::OutputArchive& archive, const std::string& name,
               const std::vector<torch::Tensor>& tensors) {
  archive.write(name + ".count", torch::tensor(static_cast<std::int64_t>(tensors.size())));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    archive.write(name + "." + std::to_string(i), tensors[i].detach());
  }
}

void load_list(torch::serialize::InputArchive& archive, const std::string& name,
               std::vector<torch::Tensor>& tensors) {
  torch::Tensor count;
  archive.read(name + ".count", count);
  if (count.item<std::int64_t>() != static_cast<std::int64_t>(tensors.size())) {
    throw ConfigError("FusedOptimizer::load: the checkpoint has " +
                      std::to_string(count.item<std::int64_t>()) + " " + name + " tensors, this " +
                      "optimizer " + std::to_string(tensors.size()));
  }
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    torch::Tensor saved;
    archive.read(name + "." + std::to_string(i), saved);
    if (saved.sizes() != tensors[i].sizes()) {
      throw ConfigError("FusedOptimizer::load: " + name + "." + std::to_string(i) +
                        " has another shape in the checkpoint");
    }
    tensors[i].copy_(saved);
  }
}

}  // namespace

void FusedOptimizer::save(torch::serialize::OutputArchive& archive) const {
  archive.write("kind", torch::tensor(static_cast<std::int64_t>(options_.kind)));
  archive.write("lr", lr_.detach());
  save_list(archive, "exp_avg", exp_avg_);
  save_list(archive, "exp_avg_sq", exp_avg_sq_);
  save_list(archive, "steps", steps_);
  save_list(archive, "momentum", momentum_);
}

void FusedOptimizer::load(torch::serialize::InputArchive& archive) {
  torch::Tensor kind;
  archive.read("kind", kind);
  if (kind.item<std::int64_t>() != static_cast<std::int64_t>(options_.kind)) {
    throw ConfigError("FusedOptimizer::load: the checkpoint is of another optimizer than " +
                      to_string(options_.kind));
  }
  torch::Tensor lr;
  archive.read("lr", lr);
  set_learning_rate(lr.item<double>());
  load_list(archive, "exp_avg", exp_avg_);
  load_list(archive, "exp_avg_sq", exp_avg_sq_);
  load_list(archive, "steps", steps_);
  load_list(archive, "momentum", momentum_);
}

}  // namespace gpuperf
