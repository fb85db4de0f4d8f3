#pragma once
// Models by name. Built in: "simple" (the seed's CNN), "resnet50", "resnet101", "resnet152",
// and the language models "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama-1b", "llama-3b".
// Users add their own torch::nn modules:
//
//   gpuperf::ModelRegistry::global().add({"mlp", "my MLP", {784}, 10,
//       [](std::int64_t classes) { return torch::nn::AnyModule(MyMlp(classes)); }});
//   auto model = gpuperf::ModelRegistry::global().create("mlp");

#include <torch/nn/modules/container/any.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf {

/// What a model's samples and outputs are.
enum class ModelTask {
  kImageClassification,  ///< float images in, class logits [batch, classes] out
  kLanguageModel,        ///< int64 token ids [batch, sequence] in, logits [b, s, vocabulary] out
};

/// A registered model: how to build it and what one input sample looks like.
struct ModelInfo {
  std::string name;
  std::string description;
  /// One sample: an image's {3, 224, 224}; a language model's {longest sequence}.
  std::vector<std::int64_t> input_shape;
  std::int64_t default_num_classes = 0;  ///< classes, or a language model's vocabulary
  /// Builds a fresh, randomly initialised model with `num_classes` outputs (a language model's
  /// vocabulary).
  std::function<torch::nn::AnyModule(std::int64_t num_classes)> factory;
  ModelTask task = ModelTask::kImageClassification;
  /// Language models: layers and embedding width, for the FLOP count 6N + 6 x layers x width x
  /// sequence per token (0 for other models).
  std::int64_t layers = 0;
  std::int64_t width = 0;
};

/// Name -> model factory. Thread-safe.
class ModelRegistry {
 public:
  /// The process-wide registry, with the built-in models.
  static ModelRegistry& global();

  /// Adds or replaces a model. Throws ConfigError if the info is incomplete.
  void add(ModelInfo info);
  /// The entry for `name`; throws ConfigError listing the known names if there is none.
  [[nodiscard]] ModelInfo get(std::string_view name) const;
  /// Whether `name` is registered.
  [[nodiscard]] bool contains(std::string_view name) const;
  /// Registered names, sorted.
  [[nodiscard]] std::vector<std::string> names() const;
  /// get(name).factory(num_classes or the default when <= 0).
  [[nodiscard]] torch::nn::AnyModule create(std::string_view name,
                                            std::int64_t num_classes = 0) const;

 private:
  mutable std::mutex mutex_;
  std::vector<ModelInfo> models_;
};

/// One line per registered model, sorted by name: "<name>\t<description>" (the programs' model
/// list).
void write_text(std::ostream& out, const ModelRegistry& registry);

}  // namespace gpuperf
