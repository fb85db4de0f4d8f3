#include "gpuperf/models/registry.h"

#include <algorithm>

#include "gpuperf/base/error.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/simple_model.h"
#include "gpuperf/models/transformer.h"

namespace gpuperf {
namespace {

ModelInfo resnet_info(std::string name, const ResNetOptions& base) {
  std::string description = "ResNet v1.5 (torchvision " + name + "), 3x224x224";
  return {
      std::move(name), std::move(description), {3, 224, 224}, 1000, [base](std::int64_t classes) {
        ResNetOptions options = base;
        options.num_classes = classes;
        return torch::nn::AnyModule(ResNet(options));
      }};
}

std::string millions(std::int64_t parameters) {
  return std::to_string((parameters + 500000) / 1000000) + "M parameters";
}

// A language model's entry: one sample is a sequence of up to `context` tokens, the outputs are
// the vocabulary, and layers and width feed the FLOP count.
template <typename Model, typename Options>
ModelInfo language_model_info(std::string name, std::string description, Options base) {
  ModelInfo info{std::move(name),
                 std::move(description),
                 {base.context},
                 base.vocabulary,
                 [base](std::int64_t vocabulary) {
                   Options options = base;
                   options.vocabulary = vocabulary;
                   return torch::nn::AnyModule(Model(options));
                 }};
  info.task = ModelTask::kLanguageModel;
  info.layers = base.layers;
  info.width = base.width;
  return info;
}

ModelInfo gpt_info(std::string name, const std::string& size, const GptOptions& base) {
  return language_model_info<Gpt>(std::move(name),
                                  "GPT-2 " + size + " (" + millions(parameter_count(base)) +
                                      ", context " + std::to_string(base.context) +
                                      ", vocabulary 50257 padded to " +
                                      std::to_string(base.vocabulary) + ")",
                                  base);
}

ModelInfo llama_info(std::string name, const std::string& size, const LlamaOptions& base) {
  return language_model_info<Llama>(
      std::move(name),
      "Llama-style decoder, Llama 3.2 " + size + " shape (" + millions(parameter_count(base)) +
          ", GQA " + std::to_string(base.heads) + "/" + std::to_string(base.kv_heads) +
          " heads, context " + std::to_string(base.context) + ")",
      base);
}

}  // namespace

ModelRegistry& ModelRegistry::global() {
  // Never destroyed: models may be created from static destructors of user code.
  static ModelRegistry* registry = [] {
    auto* r = new ModelRegistry();
    r->add({"simple",
            "the seed's CNN: 2 conv + linear, 3x32x32",
            {3, 32, 32},
            10,
            [](std::int64_t classes) {
              SimpleModelOptions options;
              options.num_classes = classes;
              return torch::nn::AnyModule(SimpleModel(options));
            }});
    r->add(resnet_info("resnet50", ResNetOptions::resnet50()));
    r->add(resnet_info("resnet101", ResNetOptions::resnet101()));
    r->add(resnet_info("resnet152", ResNetOptions::resnet152()));
    r->add(gpt_info("gpt2", "small", GptOptions::gpt2_124m()));
    r->add(gpt_info("gpt2-medium", "medium", GptOptions::gpt2_355m()));
    r->add(gpt_info("gpt2-large", "large", GptOptions::gpt2_774m()));
    r->add(gpt_info("gpt2-xl", "XL", GptOptions::gpt2_1558m()));
    r->add(llama_info("llama-1b", "1B", LlamaOptions::llama_1b()));
    r->add(llama_info("llama-3b", "3B", LlamaOptions::llama_3b()));
    return r;
  }();
  return *registry;
}

void ModelRegistry::add(ModelInfo info) {
  if (info.name.empty()) throw ConfigError("ModelInfo::name", "must not be empty");
  if (!info.factory) throw ConfigError("ModelInfo.factory of '" + info.name + "' is empty");
  if (info.input_shape.empty()) {
    throw ConfigError("ModelInfo.input_shape of '" + info.name + "' is empty");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(models_.begin(), models_.end(),
                         [&](const ModelInfo& m) { return m.name == info.name; });
  if (it != models_.end()) {
    *it = std::move(info);
  } else {
    models_.push_back(std::move(info));
  }
}

ModelInfo ModelRegistry::get(std::string_view name) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& m : models_) {
      if (m.name == name) return m;
    }
  }
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("model",
                    "unknown model '" + std::string(name) + "' (registered: " + known + ")");
}

bool ModelRegistry::contains(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(models_.begin(), models_.end(),
                     [&](const ModelInfo& m) { return m.name == name; });
}

std::vector<std::string> ModelRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& m : models_) out.push_back(m.name);
  std::sort(out.begin(), out.end());
  return out;
}

torch::nn::AnyModule ModelRegistry::create(std::string_view name, std::int64_t num_classes) const {
  const ModelInfo info = get(name);
  return info.factory(num_classes > 0 ? num_classes : info.default_num_classes);
}

void write_text(std::ostream& out, const ModelRegistry& registry) {
  for (const auto& name : registry.names()) {
    out << name << "\t" << registry.get(name).description << "\n";
  }
}

}  // namespace gpuperf
