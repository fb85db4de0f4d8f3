#include "gpuperf/train/train_step.h"

#include <c10/util/Exception.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <unistd.h>

#include <torch/csrc/jit/serialization/import.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/base/checkpoint_file.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/base/log.h"
#include "gpuperf/models/fusion.h"
#include "gpuperf/models/transformer.h"
#include "gpuperf/device/torch_choices.h"

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>

#include "device/cuda_graph_capture.h"
#endif

namespace gpuperf {

LossFunction cross_entropy_loss() {
  return [](const torch::Tensor& output, const torch::Tensor& target) {
    return torch::nn::functional::cross_entropy(output, target);
  };
}

LossFunction language_model_loss() {
  return [](const torch::Tensor& logits, const torch::Tensor& next_tokens) {
    return next_token_loss(logits, next_tokens);
  };
}

void TrainStepOptions::validate() const {
  if (!(learning_rate > 0)) {
    throw ConfigError("TrainStepOptions::learning_rate",
                      "must be > 0, got " + std::to_string(learning_rate));
  }
  if (momentum < 0)
    throw ConfigError("TrainStepOptions::momentum",
                      "must be >= 0, got " + std::to_string(momentum));
  require_setting(adam_beta1 >= 0 && adam_beta1 < 1, "TrainStepOptions::adam_beta1", adam_beta1,
                  "in [0, 1)");
  require_setting(adam_beta2 >= 0 && adam_beta2 < 1, "TrainStepOptions::adam_beta2", adam_beta2,
                  "in [0, 1)");
  if (weight_decay < 0) {
    throw ConfigError("TrainStepOptions::weight_decay",
                      "must be >= 0, got " + std::to_string(weight_decay));
  }
  if (max_grad_norm < 0) {
    throw ConfigError("TrainStepOptions::max_grad_norm",
                      "must be >= 0, got " + std::to_string(max_grad_norm));
  }
  if (accumulation_steps < 1) {
    throw ConfigError("TrainStepOptions::accumulation_steps",
                      "must be >= 1, got " + std::to_string(accumulation_steps));
  }
  grad_scaler.validate();
  if (cuda_graph && !fused_optimizer) {
    throw ConfigError("TrainStepOptions::cuda_graph",
                      "a CUDA graph needs the fused optimizer (torch::optim keeps its step "
                      "count on the host); set {fused_optimizer}");
  }
  if (graph_warmup < 1) {
    throw ConfigError("TrainStepOptions::graph_warmup",
                      "must be >= 1, got " + std::to_string(graph_warmup));
  }
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                        const TrainStepOptions& o) {
  const std::tuple<double, double> betas{o.adam_beta1, o.adam_beta2};
  switch (o.optimizer) {
    case OptimizerKind::kAdam:
      return std::make_unique<torch::optim::Adam>(
          std::move(parameters),
          torch::optim::AdamOptions(o.learning_rate).betas(betas).weight_decay(o.weight_decay));
    case OptimizerKind::kAdamW:
      return std::make_unique<torch::optim::AdamW>(
          std::move(parameters),
          torch::optim::AdamWOptions(o.learning_rate).betas(betas).weight_decay(o.weight_decay));
    case OptimizerKind::kSgd:
      return std::make_unique<torch::optim::SGD>(std::move(parameters),
                                                 torch::optim::SGDOptions(o.learning_rate)
                                                     .momentum(o.momentum)
                                                     .weight_decay(o.weight_decay));
  }
  throw ConfigError("unknown optimizer");
}

namespace {

GradScalerOptions scaler_options(const TrainStepOptions& options) {
  GradScalerOptions out = options.grad_scaler;
  // Only fp16 has a range narrow enough to need loss scaling.
  out.enabled(options.grad_scaler.enabled() && options.precision == Precision::kFp16);
  return out;
}

}  // namespace

TrainStep::TrainStep(torch::nn::AnyModule model, torch::Device device, TrainStepOptions options,
                     LossFunction loss)
    : device_(device), options_(options), scaler_((options_.validate(), scaler_options(options_))) {
  if (model.is_empty()) throw ConfigError("TrainStep: the model is empty");
  if (!loss) throw ConfigError("TrainStep: the loss function is empty");
  module_ = model.ptr();
  loss_ = [model, loss = std::move(loss)](const std::vector<torch::Tensor>& batch) mutable {
    if (batch.size() != 2) {
      throw ConfigError(
          "TrainStep: a model with an (output, target) loss takes a batch of 2 "
          "tensors (input, target), got " +
          std::to_string(batch.size()));
    }
    return loss(model.forward(batch[0]), batch[1]);
  };
  initialize();
}

TrainStep::TrainStep(std::shared_ptr<torch::nn::Module> module, BatchLoss loss,
                     torch::Device device, TrainStepOptions options)
    : module_(std::move(module)),
      device_(device),
      options_(options),
      loss_(std::move(loss)),
      scaler_((options_.validate(), scaler_options(options_))) {
  if (!module_) throw ConfigError("TrainStep: the module is null");
  if (!loss_) throw ConfigError("TrainStep: the loss function is empty");
  initialize();
}

void TrainStep::initialize() {
  check_precision_supported(options_.precision, device_);
  apply_backend_settings(options_.precision, options_.cudnn_benchmark);
  module().to(device_);
  convert_memory_format(module(), options_.memory_format);
  module().train();
  if (options_.kernel_fusion) {
    if (auto* fusable = dynamic_cast<FusableModel*>(module_.get())) {
      if (fusable->set_training_fusion(true)) fusable_ = fusable;
    }
  }
  if (options_.fused_optimizer) {
    FusedOptimizerOptions fused(options_.optimizer, options_.learning_rate);
    fused.momentum = options_.momentum;
    fused.beta1 = options_.adam_beta1;
    fused.beta2 = options_.adam_beta2;
    fused.weight_decay = options_.weight_decay;
    fused_ = std::make_unique<FusedOptimizer>(module().parameters(), fused);
    // The optimizer writes the 16-bit weights the forward pass reads as it updates the float32
    // ones, where the model's weight casts would read and write them all again each step.
    if (fused_->writes_copies() && uses_autocast(options_.precision)) {
      const c10::ScalarType dtype = autocast_dtype(options_.precision);
      if (dtype == torch::kHalf || dtype == torch::kBFloat16) {
        copies_ = std::make_shared<WeightCopies>(dtype);
        fused_->write_copies(copies_.get());
      }
    }
    skipped_on_device_ =
        torch::zeros({1}, torch::TensorOptions().device(device_).dtype(torch::kFloat));
  } else {
    optimizer_ = make_optimizer(module().parameters(), options_);
  }
  if (options_.cuda_graph && !device_.is_cuda()) {
    throw ConfigError("TrainStepOptions::cuda_graph",
                      "CUDA graphs need a CUDA device; device is " + device_.str());
  }
}

torch::optim::Optimizer& TrainStep::optimizer() {
  if (!optimizer_) throw ConfigError("TrainStep::optimizer(): this step uses a FusedOptimizer");
  return *optimizer_;
}

bool TrainStep::model_ran_channels_last() const {
  return fusable_ != nullptr && fusable_->ran_channels_last();
}

std::string TrainStep::kernel_fusion() const {
  return fusable_ ? fusable_->training_fusion() : "none";
}

std::int64_t TrainStep::skipped_steps() const {
  if (!skipped_on_device_.defined()) return skipped_steps_;
  return skipped_steps_ + static_cast<std::int64_t>(skipped_on_device_.item<float>());
}

StepResult TrainStep::operator()(const std::vector<torch::Tensor>& input) {
  if (input.empty()) throw ConfigError("TrainStep: the batch has no tensors");
  Tensors batch;
  for (const auto& t : input) {
    if (t.dim() == 0 || t.size(0) != input.front().size(0)) {
      throw ConfigError(
          "TrainStep: every tensor of a batch holds the samples along dimension 0; "
          "got sizes " +
          std::string(c10::str(input.front().sizes())) + " and " +
          std::string(c10::str(t.sizes())));
    }
    // Both no-ops when the batch is already in place (the synthetic source makes it so).
    batch.push_back(to_memory_format(t.to(device_, /*non_blocking=*/true), options_.memory_format));
  }
  if (options_.cuda_graph && graph_fallback_reason_.empty() && sync_ && !graph_captured()) {
    graph_fallback_reason_ = sync_->capture_unsupported_reason();
  }
  if (!options_.cuda_graph || !graph_fallback_reason_.empty()) return run_step(batch, false);
  if (graph_captured()) {
    if (fits_graph(batch)) return replay(batch);
    ++eager_shape_steps_;  // copying it into the graph's input would broadcast or throw
    return run_step(batch, false);
  }
  // Counted apart from steps_: a step loaded from a checkpoint still warms up before capture.
  if (graph_warmups_ < options_.graph_warmup) return warm_up_for_graph(batch);
  return capture_and_replay(batch);
}

void TrainStep::set_learning_rate(double lr) {
  const std::size_t groups = fused_ ? 1 : optimizer_->param_groups().size();
  for (std::size_t g = 0; g < groups; ++g) set_learning_rate(lr, g);
}

void TrainStep::set_learning_rate(double lr, std::size_t group) {
  if (!(lr > 0) || !std::isfinite(lr)) {
    throw ConfigError("TrainStep::set_learning_rate: must be > 0, got " + std::to_string(lr));
  }
  const std::size_t groups = fused_ ? 1 : optimizer_->param_groups().size();
  if (group >= groups) {
    throw ConfigError("TrainStep::set_learning_rate: parameter group " + std::to_string(group) +
                      " does not exist (" + std::to_string(groups) + " groups)");
  }
  if (fused_) {
    fused_->set_learning_rate(lr);
  } else {
    optimizer_->param_groups()[group].options().set_lr(lr);
  }
}

double TrainStep::learning_rate(std::size_t group) const {
  if (fused_) return fused_->learning_rate();
  if (group >= optimizer_->param_groups().size()) {
    throw ConfigError("TrainStep::learning_rate: parameter group " + std::to_string(group) +
                      " does not exist");
  }
  return optimizer_->param_groups()[group].options().get_lr();
}

namespace {

// The version inside the payload (the container has its own format number): 2 since the
// container; format-1 files are refused by decode_checkpoint() before this is read.
constexpr std::int64_t kCheckpointVersion = kCheckpointFormat;
// The largest checkpoint load() reads whole: 1 TiB (a sanity bound, not a memory check).
constexpr std::size_t kMaxCheckpointBytes = std::size_t{1} << 40;

torch::Tensor int_tensor(std::int64_t value) { return torch::tensor(value); }
torch::Tensor double_tensor(double value) {
  return torch::tensor(value, torch::TensorOptions().dtype(torch::kFloat64));
}

// LibTorch's message without its C++ stack: one line.
std::string first_line_of(const c10::Error& e) {
  const std::string what = e.what_without_backtrace();
  return what.substr(0, what.find('\n'));
}

std::string describe(const torch::Tensor& t) {
  return std::string(c10::toString(t.scalar_type())) + " " + c10::str(t.sizes());
}

// A model tensor by its dotted name, a parameter or a buffer.
struct NamedTensor {
  std::string key;  // "param conv1.weight", "buffer bn1.running_mean"
  std::string name;
  torch::Tensor tensor;
  bool is_buffer;
};

std::vector<NamedTensor> model_tensors(const torch::nn::Module& module) {
  std::vector<NamedTensor> out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    out.push_back({"param " + p.key(), p.key(), p.value(), false});
  }
  for (const auto& b : module.named_buffers(/*recurse=*/true)) {
    out.push_back({"buffer " + b.key(), b.key(), b.value(), true});
  }
  return out;
}

// What a checkpoint must match: the model's tensors and the optimizer (another optimizer's state
// has other keys; the fused one another layout).
CheckpointIdentity identity_of(const torch::nn::Module& module, const TrainStepOptions& options) {
  CheckpointIdentity out;
  for (const auto& t : model_tensors(module)) out.emplace_back(t.key, describe(t.tensor));
  out.emplace_back("optimizer", to_string(options.optimizer) +
                                    (options.fused_optimizer ? " (fused)" : " (torch::optim)"));
  return out;
}

// The checksum over each model tensor's name, dtype, shape and bytes (contiguous, on the host).
void add_tensor(Fnv1a64& checksum, const std::string& name, const torch::Tensor& tensor) {
  checksum.update(name);
  checksum.update(std::string_view(c10::toString(tensor.scalar_type())));
  checksum.update(static_cast<std::int64_t>(tensor.dim()));
  for (const std::int64_t size : tensor.sizes()) checksum.update(size);
  const torch::Tensor host = tensor.detach().to(torch::kCPU).contiguous();
  checksum.update(host.data_ptr(), host.numel() * host.element_size());
}

// Whether every element a tensor's sizes, strides and offset address lies inside its storage: a
// record shorter than its tensor (a cut or crafted file) must never be read past.
bool within_storage(const torch::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return true;
  if (t.is_sparse() || !t.has_storage()) return false;
  std::int64_t last = t.storage_offset();
  if (last < 0) return false;
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    const std::int64_t size = t.size(d);
    const std::int64_t stride = t.stride(d);
    if (size <= 0 || stride < 0) return false;
    if (stride > 0 && size - 1 > (std::numeric_limits<std::int64_t>::max() - last) / stride) {
      return false;
    }
    last += (size - 1) * stride;
  }
  const auto item = static_cast<std::uint64_t>(t.element_size());
  const auto need = static_cast<std::uint64_t>(last) + 1;
  return need <= std::numeric_limits<std::uint64_t>::max() / item &&
         need * item <= static_cast<std::uint64_t>(t.storage().nbytes());
}

// Parses the payload on the host and checks every tensor in it (model, optimizer, scalars)
// against its storage before anything reads an element.
void check_payload_tensors(std::string_view payload, const std::string& path) {
  std::istringstream stream(std::string(payload), std::ios::binary);
  torch::jit::Module module;
  try {
    module = torch::jit::load(stream, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    throw IoError("TrainStep::load: cannot read '" + path + "': " + first_line_of(e));
  }
  for (const auto& attribute : module.named_attributes(/*recurse=*/true)) {
    if (attribute.value.isTensor() && !within_storage(attribute.value.toTensor())) {
      throw IoError("TrainStep::load: '" + path + "' is corrupt: tensor '" + attribute.name +
                    "' (" + describe(attribute.value.toTensor()) + ") is larger than its record");
    }
  }
}

// Reads every tensor of `module`'s structure from `archive` into fresh tensors (never into the
// module's own: InputArchive::read would give a defined tensor the file's storage and shape).
void read_model_tensors(torch::serialize::InputArchive& archive, const torch::nn::Module& module,
                        const std::string& prefix, std::map<std::string, torch::Tensor>& out) {
  for (const auto& p : module.named_parameters(/*recurse=*/false)) {
    torch::Tensor read;
    archive.read(p.key(), read);
    out["param " + prefix + p.key()] = read;
  }
  for (const auto& b : module.named_buffers(/*recurse=*/false)) {
    torch::Tensor read;
    archive.read(b.key(), read, /*is_buffer=*/true);
    out["buffer " + prefix + b.key()] = read;
  }
  for (const auto& child : module.named_children()) {
    torch::serialize::InputArchive nested;
    archive.read(child.key(), nested);
    read_model_tensors(nested, *child.value(), prefix + child.key() + ".", out);
  }
}

}  // namespace

void TrainStep::save(const std::string& path) const {
  torch::serialize::OutputArchive archive;
  archive.write("gpuperf.checkpoint", int_tensor(kCheckpointVersion));
  torch::serialize::OutputArchive model;
  module_->save(model);
  archive.write("model", model);
  torch::serialize::OutputArchive optimizer;
  if (fused_) {
    fused_->save(optimizer);
  } else {
    optimizer_->save(optimizer);
  }
  archive.write("optimizer", optimizer);
  const GradScalerState scaler = scaler_.state_dict();
  archive.write("scaler.scale", double_tensor(scaler.scale));
  archive.write("scaler.growth_factor", double_tensor(scaler.growth_factor));
  archive.write("scaler.backoff_factor", double_tensor(scaler.backoff_factor));
  archive.write("scaler.growth_interval", int_tensor(scaler.growth_interval));
  archive.write("scaler.growth_tracker", int_tensor(scaler.growth_tracker));
  archive.write("steps", int_tensor(steps_));
  archive.write("skipped_steps", int_tensor(skipped_steps()));
  // Into memory first: LibTorch's file writer throws from its destructor when the disk is full
  // (std::terminate); our own writer checks every write and the close.
  std::string payload;
  try {
    archive.save_to([&payload](const void* data, std::size_t size) {
      payload.append(static_cast<const char*>(data), size);
      return size;
    });
  } catch (const c10::Error& e) {
    throw IoError("TrainStep::save: cannot write '" + path + "': " + first_line_of(e));
  }
  CheckpointHeader header;
  header.identity = identity_of(*module_, options_);
  Fnv1a64 tensors;
  for (const auto& t : model_tensors(*module_)) add_tensor(tensors, t.key, t.tensor);
  header.tensors_checksum = tensors.value();
  const std::string bytes = encode_checkpoint(header, payload);
  payload.clear();
  payload.shrink_to_fit();
  try {
    // Registered and created O_EXCL beside the target: removed on an error, and by the
    // programs' signal handlers when a run is interrupted mid-save.
    TemporaryFile temporary(path);
    temporary.write(bytes.data(), bytes.size());
    temporary.commit();
  } catch (const IoError& e) {
    throw IoError(std::string("TrainStep::save: ") + e.what());
  }
}

void TrainStep::load(const std::string& path) {
  if (steps_ > 0) {
    throw ConfigError("TrainStep::load: load a checkpoint before the first step (" +
                      std::to_string(steps_) + " steps taken)");
  }
  std::string bytes;
  CheckpointFile file;
  try {
    bytes = read_binary_file(path, kMaxCheckpointBytes);
    file = decode_checkpoint(bytes, path);
  } catch (const IoError& e) {
    throw IoError(std::string("TrainStep::load: ") + e.what());
  }
  const CheckpointIdentity here = identity_of(*module_, options_);
  if (const std::string mismatch = identity_mismatch(file.header.identity, here);
      !mismatch.empty()) {
    throw ConfigError("TrainStep::load: '" + path + "' is a checkpoint of another model or " +
                      "optimizer: " + mismatch);
  }
  check_payload_tensors(file.payload, path);
  torch::serialize::InputArchive archive;
  // Read whole into fresh tensors and checked before anything of this step changes.
  std::map<std::string, torch::Tensor> tensors;
  auto read_int = [&](const char* key) {
    torch::Tensor read;
    archive.read(key, read);
    if (read.numel() != 1 || read.scalar_type() != torch::kLong) {
      throw IoError("TrainStep::load: '" + path + "': " + key + " is " + describe(read) +
                    ", expected one int64");
    }
    return read.item<std::int64_t>();
  };
  auto read_double = [&](const char* key) {
    torch::Tensor read;
    archive.read(key, read);
    if (read.numel() != 1 || read.scalar_type() != torch::kDouble) {
      throw IoError("TrainStep::load: '" + path + "': " + key + " is " + describe(read) +
                    ", expected one float64");
    }
    return read.item<double>();
  };
  GradScalerState scaler;
  std::int64_t steps = 0;
  std::int64_t skipped = 0;
  try {
    archive.load_from(file.payload.data(), file.payload.size(), device_);
    const std::int64_t version = read_int("gpuperf.checkpoint");
    if (version != kCheckpointVersion) {
      throw ConfigError("TrainStep::load: '" + path + "' holds checkpoint version " +
                        std::to_string(version) + ", expected " +
                        std::to_string(kCheckpointVersion));
    }
    torch::serialize::InputArchive model;
    archive.read("model", model);
    read_model_tensors(model, *module_, "", tensors);
    scaler.scale = read_double("scaler.scale");
    scaler.growth_factor = read_double("scaler.growth_factor");
    scaler.backoff_factor = read_double("scaler.backoff_factor");
    scaler.growth_interval = read_int("scaler.growth_interval");
    scaler.growth_tracker = read_int("scaler.growth_tracker");
    steps = read_int("steps");
    skipped = read_int("skipped_steps");
  } catch (const c10::Error& e) {
    throw IoError("TrainStep::load: cannot read '" + path + "': " + first_line_of(e));
  }
  // The archive against the header's identity and the tensors' checksum.
  Fnv1a64 checksum;
  for (const auto& t : model_tensors(*module_)) {
    const torch::Tensor& read = tensors.at(t.key);
    if (read.scalar_type() != t.tensor.scalar_type() || read.sizes() != t.tensor.sizes()) {
      throw ConfigError("TrainStep::load: '" + path +
                        "' is a checkpoint of another model: " + t.key + " is " + describe(read) +
                        " in the checkpoint, " + describe(t.tensor) + " here");
    }
    add_tensor(checksum, t.key, read);
  }
  if (checksum.value() != file.header.tensors_checksum) {
    throw IoError("TrainStep::load: '" + path + "' is corrupt: its tensors do not match their " +
                  "checksum");
  }
  if (steps < 0 || skipped < 0 || skipped > steps) {
    throw ConfigError("TrainStep::load: '" + path + "' has impossible step counts: steps " +
                      std::to_string(steps) + ", skipped_steps " + std::to_string(skipped));
  }
  if (scaler.growth_tracker < 0) {
    throw ConfigError("TrainStep::load: '" + path + "' has scaler.growth_tracker " +
                      std::to_string(scaler.growth_tracker) + ", expected >= 0");
  }
  try {
    GradScaler(GradScalerOptions(options_.grad_scaler)).load_state_dict(scaler);  // validates
  } catch (const ConfigError& e) {
    throw ConfigError("TrainStep::load: '" + path +
                      "' has an impossible scaler state: " + e.what());
  }
  // Checked: now the step's state changes. The optimizer first (its loader may still refuse a
  // crafted file), the parameters last.
  try {
    torch::serialize::InputArchive optimizer;
    archive.read("optimizer", optimizer);
    if (fused_) {
      fused_->load(optimizer);
    } else {
      optimizer_->load(optimizer);
    }
  } catch (const c10::Error& e) {
    throw IoError("TrainStep::load: cannot read the optimizer state of '" + path +
                  "': " + first_line_of(e));
  }
  {
    torch::NoGradGuard no_grad;
    for (const auto& t : model_tensors(*module_)) t.tensor.copy_(tensors.at(t.key));
  }
  scaler_.load_state_dict(scaler);
  steps_ = steps;
  skipped_steps_ = skipped;
  if (skipped_on_device_.defined()) skipped_on_device_.zero_();
}

void TrainStep::set_gradient_sync(std::shared_ptr<GradientSync> sync) {
  if (steps_ > 0) {
    throw ConfigError("TrainStep::set_gradient_sync: call it before the first step (" +
                      std::to_string(steps_) + " steps taken)");
  }
  sync_ = std::move(sync);
}

StepResult TrainStep::run_step(const Tensors& batch, bool capturing) {
  // A captured graph keeps the gradient tensors that backward allocated during capture: no
  // zeroing inside it (backward writes them afresh on each replay).
  if (!capturing) {
    if (fused_) {
      fused_->zero_grad();
    } else {
      optimizer_->zero_grad();
    }
  }
  // Micro-batch i is part i of every tensor: accumulation_steps parts whose sizes differ by at
  // most one sample (tensor_split(); chunk() would give 3 parts of 9 samples asked for 4), fewer
  // only when the batch has fewer samples than parts. Without accumulation, the whole batch.
  std::vector<Tensors> micro;
  if (options_.accumulation_steps == 1) {
    micro.push_back(batch);  // the common case: no views to make on every step
  } else {
    const std::int64_t parts =
        std::min<std::int64_t>(options_.accumulation_steps, batch.front().size(0));
    for (const auto& t : batch) {
      const Tensors split = t.tensor_split(parts);
      micro.resize(split.size());
      for (std::size_t i = 0; i < split.size(); ++i) micro[i].push_back(split[i]);
    }
  }
  if (sync_) sync_->begin_step(static_cast<int>(micro.size()));
  // The update beside backward, where each gradient comes once and is the one the update takes.
  const bool in_backward = fused_ && options_.optimizer_in_backward && micro.size() == 1 &&
                           !sync_ && !scaler_.is_enabled() && options_.max_grad_norm <= 0;
  updated_in_backward_ = false;
  const double samples = static_cast<double>(batch.front().size(0));
  torch::Tensor loss;
  for (const Tensors& part_batch : micro) {
    const double share = static_cast<double>(part_batch.front().size(0)) / samples;
    torch::Tensor part;
    {
      AutocastGuard autocast(device_.type(), autocast_dtype(options_.precision),
                             uses_autocast(options_.precision),
                             /*cache_enabled=*/!options_.cuda_graph);
      // The gradient the loss will get: its share of the batch, times the scaler's scale, which
      // only the device knows.
      const LossGradientScope expected(scaler_.is_enabled() ? std::nullopt
                                                            : std::optional<double>(share));
      const WeightCopies::Scope weights(copies_.get());
      part = loss_(part_batch);
    }
    if (micro.size() > 1) part = part * share;
    if (in_backward) updated_in_backward_ = fused_->begin_step_in_backward();
    try {
      scaler_.scale(part).backward();
    } catch (...) {
      if (updated_in_backward_) fused_->finish_step_in_backward();  // disarms it
      throw;
    }
    loss = loss.defined() ? loss + part.detach() : part.detach();
  }
  // Averaging the scaled gradients is the same as averaging the unscaled ones, and it gives every
  // replica the same inf/NaN: all skip the same steps.
  if (sync_) sync_->after_backward();
  bool stepped = true;
  if (updated_in_backward_) {
    fused_->finish_step_in_backward();
  } else if (fused_) {
    if (options_.max_grad_norm > 0) {
      scaler_.unscale_(*fused_);
      torch::nn::utils::clip_grad_norm_(module().parameters(), options_.max_grad_norm);
    }
    scaler_.step(*fused_);
    const torch::Tensor found_inf = scaler_.found_inf_tensor(fused_.get());
    if (found_inf.defined()) skipped_on_device_.add_(found_inf);
  } else {
    if (options_.max_grad_norm > 0) {
      scaler_.unscale_(*optimizer_);
      torch::nn::utils::clip_grad_norm_(module().parameters(), options_.max_grad_norm);
    }
    stepped = scaler_.step(*optimizer_);
  }
  scaler_.update();

  ++steps_;
  if (!stepped) ++skipped_steps_;
  return {loss.detach(), stepped};
}

#if GPUPERF_WITH_CUDA

struct TrainStep::GraphState {
  at::cuda::CUDAGraph graph;
  bool captured = false;
  std::optional<c10::cuda::CUDAStream> side;  // where the warm-up steps run
  std::vector<torch::Tensor> batch;           // the captured step's input tensors
  torch::Tensor loss;
};

bool TrainStep::graph_captured() const { return graph_ && graph_->captured; }

bool TrainStep::fits_graph(const Tensors& batch) const {
  if (batch.size() != graph_->batch.size()) return false;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].sizes() != graph_->batch[i].sizes() ||
        batch[i].scalar_type() != graph_->batch[i].scalar_type()) {
      return false;
    }
  }
  return true;
}

// A real step on the caller's batch, run on a side stream: cuDNN autotuning, allocator growth
// and the optimizer's and scaler's lazy state must exist before capture, and the capture must not
// be the first use of them.
StepResult TrainStep::warm_up_for_graph(const Tensors& batch) {
  ++graph_warmups_;
  if (!graph_) graph_ = std::make_shared<GraphState>();
  const c10::DeviceIndex index = device_.index();
  if (!graph_->side) graph_->side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index);
  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(index);
  const c10::cuda::CUDAStream side = *graph_->side;
  at::cuda::CUDAEvent ready;
  ready.record(main);
  ready.block(side);
  // The caller's tensors are used on the side stream: keep their memory until it is done.
  for (const auto& t : batch) t.record_stream(side);
  StepResult result;
  {
    c10::cuda::CUDAStreamGuard on_side(side);
    result = run_step(batch, false);
    result.loss.record_stream(main);
  }
  at::cuda::CUDAEvent done;
  done.record(side);
  done.block(main);
  return result;
}

// Captures the step on this call's batch, then replays it once: the capture records kernels
// without running them, and this call still owes its step.
StepResult TrainStep::capture_and_replay(const Tensors& batch) {
  if (!graph_) graph_ = std::make_shared<GraphState>();
  GraphState& state = *graph_;
  state.batch.clear();
  for (const auto& t : batch) state.batch.push_back(t.clone());
  // The captured step allocates its own gradients (backward writes them afresh on each replay).
  if (fused_) fused_->zero_grad(/*set_to_none=*/true);
  const std::int64_t steps_before = steps_;
  const std::int64_t skipped_before = skipped_steps_;
  graph_fallback_reason_ = detail::capture_on_side_stream(
      state.graph, device_.index(), /*warmup=*/0, [] {},
      [&] { state.loss = run_step(state.batch, /*capturing=*/true).loss; });
  steps_ = steps_before;  // capture is not a step taken
  skipped_steps_ = skipped_before;
  if (!graph_fallback_reason_.empty()) return run_step(batch, false);
  state.captured = true;
  return replay(batch);
}

StepResult TrainStep::replay(const Tensors& batch) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    torch::Tensor& slot = graph_->batch[i];
    if (batch[i].data_ptr() != slot.data_ptr()) slot.copy_(batch[i], /*non_blocking=*/true);
  }
  // Copies of parameters changed outside the graph (a checkpoint loaded, an in-place edit): cast
  // again before the replayed forward pass reads them.
  if (copies_) copies_->refresh();
  graph_->graph.replay();
  ++steps_;
  StepResult result{graph_->loss, true};
  result.replayed = true;
  return result;
}

#else

struct TrainStep::GraphState {};

// NOLINTBEGIN(readability-convert-member-functions-to-static): they read the graph with CUDA
bool TrainStep::graph_captured() const { return false; }
bool TrainStep::fits_graph(const Tensors& /*batch*/) const { return false; }
// NOLINTEND(readability-convert-member-functions-to-static)

StepResult TrainStep::warm_up_for_graph(const Tensors& batch) {
  ++graph_warmups_;
  return run_step(batch, false);
}

StepResult TrainStep::capture_and_replay(const Tensors& batch) {
  graph_fallback_reason_ = "gpuperf was built without CUDA: no CUDA graphs";
  return run_step(batch, false);
}

StepResult TrainStep::replay(const Tensors& batch) { return run_step(batch, false); }

#endif

}  // namespace gpuperf
