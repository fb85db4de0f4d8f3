// gpuperf's side of benchmarks/python/equivalence.py: ResNet-50 started from weights another
// framework wrote (a safetensors file with torchvision's names), trained on one fixed batch
// through TrainStep exactly as the headline trains (AMP, channels_last, fused SGD, kernel
// fusion, the whole step in a CUDA graph), so that its losses, skipped steps, BatchNorm
// statistics and first-step gradients can be held against PyTorch's from the same start.
// With --model gpt2 (any registered language model) the side of
// benchmarks/python/lm_equivalence.py: the batch holds int64 'input' and 'target' [N, T] (one
// batch every step) or [S, N, T] (step i trains on batch i mod S), the optimizer is AdamW
// (--beta2, --weight-decay) and the loss the language-model cross-entropy, as lm_benchmark trains.
//
//   equivalence_run --weights w.safetensors --batch b.safetensors --mode steps --steps 200
//       --precision fp16 --lr 0.02 --json losses.json --tensors after.safetensors  (one line)
//   equivalence_run ... --mode gradients --precision bf16 --tensors grads.safetensors
//
// steps: --json gets {"losses": [...], "skipped_steps": N, "final_loss_scale": S, ...} and
// --tensors every parameter and buffer after the last step. gradients: one step's gradients,
// unscaled (divided by the loss scale the step used), taken right after backward, before the
// optimizer, in --tensors.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <torch/nn/modules/container/any.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/base/choices.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/weights_file.h"
#include "gpuperf/train/gradient_sync.h"
#include "gpuperf/train/train_step.h"
#include "program.h"

namespace {

// Keeps a copy of every parameter's gradient as backward left it (still scaled).
class GradientSnapshot final : public gpuperf::GradientSync {
 public:
  explicit GradientSnapshot(torch::nn::Module& module) : module_(module) {}
  void after_backward() override {
    for (const auto& p : module_.named_parameters()) {
      if (p.value().grad().defined()) grads_[p.key()] = p.value().grad().detach().clone();
    }
  }
  [[nodiscard]] std::string capture_unsupported_reason() const override {
    return "the gradient snapshot copies gradients after backward";
  }
  [[nodiscard]] const gpuperf::NamedTensors& grads() const { return grads_; }

 private:
  torch::nn::Module& module_;
  gpuperf::NamedTensors grads_;
};

torch::Tensor tensor_named(const gpuperf::NamedTensors& tensors, const std::string& name,
                           const std::string& path) {
  const auto found = tensors.find(name);
  if (found == tensors.end()) {
    throw gpuperf::ConfigError("--batch: '" + path + "' has no tensor named '" + name + "'");
  }
  return found->second;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app("ResNet-50 from given weights on one given batch: losses, statistics, gradients",
               "equivalence_run");
  std::string weights;
  std::string batch_path;
  std::string mode = "steps";
  std::string precision = "fp16";
  std::string json_path;
  std::string tensors_path;
  std::string fuse = "on";
  std::string graph = "on";
  std::string device_name = "cuda";
  std::string optimizer_impl = "fused";
  std::string model_name = "resnet50";
  std::int64_t steps = 200;
  double lr = 0.02;
  double init_scale = 65536.0;
  double beta2 = 0.95;
  double weight_decay = 0.1;
  app.add_option("--model", model_name,
                 "resnet50, or a registered language model (gpt2, llama-1b, ...)");
  app.add_option("--beta2", beta2, "language models: AdamW's beta2")
      ->check(CLI::Range(0.0, 0.999999));
  app.add_option("--weight-decay", weight_decay, "language models: AdamW's weight decay")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--weights", weights, "safetensors file of the model's parameters and buffers")
      ->required();
  app.add_option("--batch", batch_path,
                 "safetensors file holding 'input' (N,3,H,W) and 'target' (N); for a language "
                 "model int64 (N,T) or (S,N,T), S batches taken in turn")
      ->required();
  app.add_option("--mode", mode, "steps or gradients")
      ->check(CLI::IsMember({"steps", "gradients"}));
  app.add_option("--steps", steps, "optimizer steps (mode steps)")->check(CLI::Range(1, 100000));
  app.add_option("--precision", precision, "fp32, fp16 or bf16")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  app.add_option("--lr", lr, "learning rate (SGD with momentum 0.9; AdamW for language models)")
      ->check(CLI::PositiveNumber);
  app.add_option("--init-scale", init_scale, "the GradScaler's first scale (fp16)")
      ->check(CLI::PositiveNumber);
  app.add_option("--fuse", fuse, "gpuperf's training kernel fusion")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--graph", graph, "the whole step in a CUDA graph (mode steps)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--optimizer-impl", optimizer_impl,
                 "fused (ATen's fused SGD, needed for --graph on) or torch (torch::optim::SGD, "
                 "as PyTorch's default implementation steps)")
      ->check(CLI::IsMember({"fused", "torch"}));
  app.add_option("--device", device_name, "cuda or cpu");
  app.add_option("--json", json_path, "the losses and counts (mode steps)");
  app.add_option("--tensors", tensors_path,
                 "safetensors output: the state after the run, or the gradients")
      ->required();
  return gpuperf::program::run_program(app, argc, argv, [&] {
    gpuperf::check_writable(tensors_path, "tensors");
    if (!json_path.empty()) gpuperf::check_writable(json_path, "json");
    const torch::Device device(device_name);
    const auto batch = gpuperf::read_safetensors(batch_path);
    const gpuperf::ModelInfo info = gpuperf::ModelRegistry::global().get(model_name);
    const bool language = info.task == gpuperf::ModelTask::kLanguageModel;
    if (!language && model_name != "resnet50") {
      throw gpuperf::ConfigError("--model", model_name, "must be resnet50 or a language model");
    }
    torch::Tensor input = tensor_named(batch, "input", batch_path);
    input = language ? input.to(torch::kLong) : input.to(torch::kFloat);
    const torch::Tensor target = tensor_named(batch, "target", batch_path).to(torch::kLong);

    torch::nn::AnyModule any = gpuperf::ModelRegistry::global().create(model_name);
    torch::nn::Module& model = *any.ptr();
    gpuperf::load_named_tensors(model, gpuperf::read_safetensors(weights));

    gpuperf::TrainStepOptions options;
    options.precision = gpuperf::parse_precision(precision, "precision");
    options.memory_format =
        language ? gpuperf::MemoryFormat::kContiguous : gpuperf::MemoryFormat::kChannelsLast;
    options.optimizer = language ? gpuperf::OptimizerKind::kAdamW : gpuperf::OptimizerKind::kSgd;
    options.learning_rate = lr;
    options.momentum = 0.9;
    options.adam_beta2 = beta2;
    options.weight_decay = language ? weight_decay : 0.0;
    options.fused_optimizer = device.is_cuda() && optimizer_impl == "fused";
    options.cuda_graph = mode == "steps" && graph == "on" && options.fused_optimizer;
    options.kernel_fusion = fuse == "on";
    options.grad_scaler.init_scale(init_scale);
    gpuperf::TrainStep step(
        any, device, options,
        language ? gpuperf::language_model_loss() : gpuperf::cross_entropy_loss());
    const torch::Tensor x =
        language ? input.to(device) : input.to(device).contiguous(at::MemoryFormat::ChannelsLast);
    const torch::Tensor y = target.to(device);
    const bool batches = language && x.dim() == 3;
    if (batches && (y.dim() != 3 || y.size(0) != x.size(0))) {
      throw gpuperf::ConfigError("--batch", batch_path,
                                 "'input' [S, N, T] needs a 'target' of the same S batches");
    }
    const auto pick = [batches](const torch::Tensor& t, std::int64_t i) {
      return batches ? t[i % t.size(0)] : t;
    };

    if (mode == "gradients") {
      auto snapshot = std::make_shared<GradientSnapshot>(model);
      step.set_gradient_sync(snapshot);
      const double scale = options.precision == gpuperf::Precision::kFp16 ? init_scale : 1.0;
      (void)step(pick(x, 0), pick(y, 0));
      if (step.skipped_steps() > 0) {
        throw gpuperf::Error("the step overflowed at loss scale " + std::to_string(scale) +
                             ": choose a smaller --init-scale");
      }
      gpuperf::NamedTensors unscaled;
      for (const auto& [name, g] : snapshot->grads()) {
        unscaled[name] = (g.to(torch::kDouble) / scale).to(torch::kFloat).cpu();
      }
      gpuperf::write_safetensors(unscaled, tensors_path);
      return 0;
    }
    // [S, N, T] token batches: step i trains on batch i mod S (TrainStep copies each into the
    // buffers its captured graph reads).
    std::vector<torch::Tensor> losses;
    for (std::int64_t i = 0; i < steps; ++i) {
      losses.push_back(step(pick(x, i), pick(y, i)).loss.clone());
    }
    const torch::Tensor all = torch::stack(losses).to(torch::kDouble).cpu();
    nlohmann::json out = {{"losses", std::vector<double>(all.data_ptr<double>(),
                                                         all.data_ptr<double>() + all.numel())},
                          {"skipped_steps", step.skipped_steps()},
                          {"final_loss_scale", step.scaler().get_scale()},
                          {"kernel_fusion", step.kernel_fusion()},
                          {"graph_mode", step.graph_captured() ? "cuda-graph" : "eager"},
                          {"precision", precision},
                          {"lr", lr},
                          {"steps", steps}};
    gpuperf::write_safetensors(gpuperf::named_tensors(model), tensors_path);
    if (!json_path.empty()) gpuperf::write_text_file_atomically(out.dump(1) + "\n", json_path);
    return 0;
  });
} catch (...) {
  return gpuperf::program::setup_failed("equivalence_run");
}
