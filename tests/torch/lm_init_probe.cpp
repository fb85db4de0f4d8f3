// lm_init_probe: the initial weights of a tiny GPT-2 and a tiny Llama-style model as gpuperf draws
// them (torch::manual_seed(<seed>), the model built on the CPU), and each model's float32
// next-token loss on a fixed batch (token_ids()) with every parameter's gradient, as JSON on
// standard output: {"gpt": {"<parameter>": [values...]}, "llama": {...}, "ids": [[...], [...]],
// "loss": {"gpt": x, "llama": y}, "grad": {"gpt": {"<parameter>": [values...]}, "llama": {...}},
// "trajectory": {"gpt": [losses...], "llama": [...]}, "accumulated": {"ids": [[...] x 3],
// "accumulation_steps": 2, "trajectory": {"gpt": [...], "llama": [...]}}} (the batches are in the
// output: the peer's side reads them, no second copy of their formula). The trajectory: the loss
// before each of kTrajectorySteps AdamW steps on that one batch through TrainStep, as lm_benchmark
// trains (float32 on the CPU, the settings in kTrajectory*), from the same initial weights;
// "accumulated": the same on a batch of 3 in 2 micro-batches (2 and 1 samples: unequal shares).
// check_lm_peer_init.py compares them with benchmarks/python/lm_peer.py's models of the same shapes
// built from the same seed: the side by side's two sides must start from the same weights and
// compute the same function.
//
//   lm_init_probe [seed]
#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "gpuperf/models/transformer.h"
#include "gpuperf/train/train_step.h"

namespace {

std::vector<float> floats(const torch::Tensor& x) {
  const torch::Tensor t = x.detach().to(torch::kFloat).contiguous().flatten();
  const float* v = t.data_ptr<float>();
  return {v, v + t.numel()};
}

nlohmann::json values_of(const torch::nn::Module& model) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : model.named_parameters()) out[p.key()] = floats(p.value());
  return out;
}

nlohmann::json gradients_of(const torch::nn::Module& model) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : model.named_parameters()) out[p.key()] = floats(p.value().grad());
  return out;
}

// [rows, 13] token ids of a vocabulary of 64: (7 x 13 x b + 5 t + 3) mod 64; the first 12 are the
// input, the last 12 the targets.
torch::Tensor token_ids(std::int64_t rows = 2) {
  return (torch::arange(rows, torch::kLong).unsqueeze(1) * (7 * 13) +
          torch::arange(13, torch::kLong).unsqueeze(0) * 5 + 3)
      .remainder(64);
}

nlohmann::json rows_of(const torch::Tensor& ids) {
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t b = 0; b < ids.size(0); ++b) {
    const torch::Tensor row = ids[b].contiguous();
    out.push_back(std::vector<std::int64_t>(row.data_ptr<std::int64_t>(),
                                            row.data_ptr<std::int64_t>() + row.numel()));
  }
  return out;
}

// The model's next-token loss on `ids` (token_ids(); float32), its gradients in the model.
template <typename Model>
double loss_of(Model& model, const torch::Tensor& ids) {
  const torch::Tensor loss =
      gpuperf::next_token_loss(model->forward(ids.narrow(1, 0, 12)), ids.narrow(1, 1, 12));
  loss.backward();
  return loss.item<double>();
}

// The trajectory's settings; check_lm_peer_init.py trains with the same. A rate and a decay well
// above the benchmark's, so that in a few steps the tiny models memorise the batch and a
// difference in the optimizer's treatment of any parameter moves the losses.
constexpr int kTrajectorySteps = 40;
constexpr double kTrajectoryRate = 1e-2;
constexpr double kTrajectoryDecay = 0.5;
// The accumulated trajectory: a batch of 3 in 2 micro-batches, fewer steps.
constexpr std::int64_t kAccumulatedRows = 3;
constexpr int kAccumulationSteps = 2;
constexpr int kAccumulatedSteps = 20;

// The loss before each of `steps` steps of TrainStep's AdamW (betas 0.9/0.95) on `ids`, in
// `micro_batches` micro-batches.
template <typename Model>
std::vector<double> trajectory_of(Model& model, const torch::Tensor& ids,
                                  int steps = kTrajectorySteps, int micro_batches = 1) {
  gpuperf::TrainStepOptions options;
  options.optimizer = gpuperf::OptimizerKind::kAdamW;
  options.learning_rate = kTrajectoryRate;
  options.adam_beta1 = 0.9;
  options.adam_beta2 = 0.95;
  options.weight_decay = kTrajectoryDecay;
  options.accumulation_steps = micro_batches;
  gpuperf::TrainStep step(torch::nn::AnyModule(model), torch::kCPU, options,
                          gpuperf::language_model_loss());
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    losses.push_back(step(ids.narrow(1, 0, 12), ids.narrow(1, 1, 12)).loss.template item<double>());
  }
  return losses;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::uint64_t seed = argc > 1 ? std::stoull(argv[1]) : 0;
  // The shapes check_lm_peer_init.py builds on its side.
  gpuperf::GptOptions gpt;
  gpt.vocabulary = 64;
  gpt.context = 16;
  gpt.layers = 2;
  gpt.heads = 2;
  gpt.width = 16;
  gpuperf::LlamaOptions llama;
  llama.vocabulary = 64;
  llama.context = 16;
  llama.layers = 2;
  llama.heads = 4;
  llama.kv_heads = 2;
  llama.width = 16;
  llama.hidden = 48;
  nlohmann::json out;
  const torch::Tensor ids = token_ids();
  out["ids"] = rows_of(ids);
  torch::manual_seed(seed);
  gpuperf::Gpt gpt_model(gpt);
  out["gpt"] = values_of(*gpt_model);
  out["loss"]["gpt"] = loss_of(gpt_model, ids);
  out["grad"]["gpt"] = gradients_of(*gpt_model);
  torch::manual_seed(seed);
  gpuperf::Llama llama_model(llama);
  out["llama"] = values_of(*llama_model);
  out["loss"]["llama"] = loss_of(llama_model, ids);
  out["grad"]["llama"] = gradients_of(*llama_model);
  torch::manual_seed(seed);
  gpuperf::Gpt gpt_trained(gpt);
  out["trajectory"]["gpt"] = trajectory_of(gpt_trained, ids);
  torch::manual_seed(seed);
  gpuperf::Llama llama_trained(llama);
  out["trajectory"]["llama"] = trajectory_of(llama_trained, ids);
  const torch::Tensor ids3 = token_ids(kAccumulatedRows);
  out["accumulated"]["ids"] = rows_of(ids3);
  out["accumulated"]["accumulation_steps"] = kAccumulationSteps;
  torch::manual_seed(seed);
  gpuperf::Gpt gpt_accumulated(gpt);
  out["accumulated"]["trajectory"]["gpt"] =
      trajectory_of(gpt_accumulated, ids3, kAccumulatedSteps, kAccumulationSteps);
  torch::manual_seed(seed);
  gpuperf::Llama llama_accumulated(llama);
  out["accumulated"]["trajectory"]["llama"] =
      trajectory_of(llama_accumulated, ids3, kAccumulatedSteps, kAccumulationSteps);
  std::cout << out.dump() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "lm_init_probe: " << e.what() << "\n";
  return 1;
}
