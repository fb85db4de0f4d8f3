#include "testing.h"

#include <torch/nn/modules/linear.h>

#include <cmath>
#include <set>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/simple_model.h"

TEST_CASE("ResNet-50 has torchvision's 25,557,032 parameters and 161 parameter tensors",
          "[models]") {
  gpuperf::ResNet model(gpuperf::ResNetOptions::resnet50());
  CHECK(gpuperf::count_parameters(*model) == 25557032);
  CHECK(model->named_parameters().size() == 161);
  // torchvision's names, so that state dicts line up.
  const auto names = model->named_parameters().keys();
  const std::set<std::string> present(names.begin(), names.end());
  for (const char* name : {"conv1.weight", "bn1.weight", "layer1.0.downsample.0.weight",
                           "layer1.0.downsample.1.bias", "layer2.3.conv3.weight",
                           "layer3.5.bn2.weight", "layer4.2.bn3.bias", "fc.weight", "fc.bias"}) {
    INFO(name);
    CHECK(present.count(name) == 1);
  }
  CHECK(model->named_buffers().contains("layer4.2.bn3.running_var"));
}

TEST_CASE("ResNet-50 puts the downsampling stride on the 3x3 convolution (v1.5)", "[models]") {
  gpuperf::ResNet model;
  auto* block = model->layer2[0]->as<gpuperf::Bottleneck>();
  REQUIRE(block != nullptr);
  torch::NoGradGuard no_grad;
  // layer2.0 takes 256 x 56 x 56 and halves the resolution in its 3x3 conv (v1.0: in conv1).
  CHECK(block->conv1(torch::zeros({1, 256, 56, 56})).sizes() ==
        std::vector<std::int64_t>{1, 128, 56, 56});
  CHECK(block->conv2(torch::zeros({1, 128, 56, 56})).sizes() ==
        std::vector<std::int64_t>{1, 128, 28, 28});
  CHECK(block->downsample->forward(torch::zeros({1, 256, 56, 56})).sizes() ==
        std::vector<std::int64_t>{1, 512, 28, 28});
}

TEST_CASE("ResNet-50 maps images to class logits of the requested width", "[models]") {
  torch::NoGradGuard no_grad;
  gpuperf::ResNet model;
  model->eval();
  CHECK(model(torch::randn({2, 3, 64, 64})).sizes() == std::vector<std::int64_t>{2, 1000});
  gpuperf::ResNetOptions options;
  options.num_classes = 10;
  gpuperf::ResNet small(options);
  small->eval();
  CHECK(small(torch::randn({1, 3, 32, 32})).sizes() == std::vector<std::int64_t>{1, 10});
  CHECK(gpuperf::count_parameters(*small) == 25557032 - 2049 * 1000 + 2049 * 10);
}

TEST_CASE("ResNet initialises like torchvision: He fan-out convolutions and identity BN",
          "[models]") {
  gpuperf::ResNet model;
  // layer3.0.conv2: 256 -> 256, 3x3: fan_out = 256 * 9, std = sqrt(2 / fan_out).
  auto* block = model->layer3[0]->as<gpuperf::Bottleneck>();
  const double expected_std = std::sqrt(2.0 / (256 * 9));
  CHECK(block->conv2->weight.std().item<double>() == Approx(expected_std).epsilon(0.03));
  CHECK(block->conv2->weight.mean().item<double>() == Approx(0).margin(expected_std / 20));
  CHECK(torch::all(block->bn3->weight == 1).item<bool>());
  CHECK(torch::all(block->bn3->bias == 0).item<bool>());

  gpuperf::ResNetOptions options;
  options.zero_init_residual = true;
  gpuperf::ResNet zeroed(options);
  auto* last = zeroed->layer4[2]->as<gpuperf::Bottleneck>();
  CHECK(torch::all(last->bn3->weight == 0).item<bool>());
  CHECK(torch::all(last->bn2->weight == 1).item<bool>());
}

TEST_CASE("ResNet options are validated", "[models]") {
  gpuperf::ResNetOptions options;
  options.layers = {3, 4, 6};
  CHECK_THROWS_WITH(gpuperf::ResNet(options), Catch::Contains("layers"));
  options = {};
  options.num_classes = 0;
  CHECK_THROWS_WITH(gpuperf::ResNet(options), Catch::Contains("num_classes"));
}

TEST_CASE("SimpleModel is the seed's network", "[models]") {
  gpuperf::SimpleModel model;
  // conv 3->64 k3: 1,792; conv 64->128 k3: 73,856; linear 131,072 -> 10: 1,310,730.
  CHECK(gpuperf::count_parameters(*model) == 1792 + 73856 + 1310730);
  torch::NoGradGuard no_grad;
  CHECK(model->conv1(torch::zeros({1, 3, 32, 32})).sizes() ==
        std::vector<std::int64_t>{1, 64, 32, 32});
  CHECK(model->conv2(torch::zeros({1, 64, 32, 32})).sizes() ==
        std::vector<std::int64_t>{1, 128, 32, 32});
  CHECK(model(torch::randn({4, 3, 32, 32})).sizes() == std::vector<std::int64_t>{4, 10});
}

namespace {

struct TinyMlpImpl : torch::nn::Module {
  explicit TinyMlpImpl(std::int64_t classes)
      : fc(register_module("fc", torch::nn::Linear(8, classes))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(TinyMlp);

}  // namespace

TEST_CASE("the registry builds built-in and user-defined models by name", "[models]") {
  auto& registry = gpuperf::ModelRegistry::global();
  for (const char* name : {"simple", "resnet50", "resnet101", "resnet152"})
    CHECK(registry.contains(name));
  CHECK_THROWS_WITH(registry.create("vgg16"), Catch::Contains("--model") &&
                                                  Catch::Contains("vgg16") &&
                                                  Catch::Contains("resnet50"));

  registry.add({"tiny_mlp", "test MLP", {8}, 3, [](std::int64_t classes) {
                  return torch::nn::AnyModule(TinyMlp(classes));
                }});
  auto model = registry.create("tiny_mlp");
  CHECK(model.forward(torch::randn({5, 8})).sizes() == std::vector<std::int64_t>{5, 3});
  auto wider = registry.create("tiny_mlp", 7);
  CHECK(wider.forward(torch::randn({5, 8})).sizes() == std::vector<std::int64_t>{5, 7});
  CHECK_THROWS_AS(registry.add({"", "", {1}, 1, nullptr}), gpuperf::ConfigError);
}
