// lm_init_probe: the initial weights of a tiny GPT-2 and a tiny Llama-style model as gpuperf draws
// them (torch::manual_seed(<seed>), the model built on the CPU), as JSON on standard output:
// {"gpt": {"<parameter>": [values...]}, "llama": {...}}. check_lm_peer_init.py compares them with
// benchmarks/python/lm_peer.py's models of the same shapes built from the same seed: the side by
// side's two sides must start from the same weights.
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

namespace {

nlohmann::json values_of(const torch::nn::Module& model) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : model.named_parameters()) {
    const torch::Tensor t = p.value().detach().to(torch::kFloat).contiguous().flatten();
    const float* v = t.data_ptr<float>();
    out[p.key()] = std::vector<float>(v, v + t.numel());
  }
  return out;
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
  torch::manual_seed(seed);
  out["gpt"] = values_of(*gpuperf::Gpt(gpt));
  torch::manual_seed(seed);
  out["llama"] = values_of(*gpuperf::Llama(llama));
  std::cout << out.dump() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "lm_init_probe: " << e.what() << "\n";
  return 1;
}
