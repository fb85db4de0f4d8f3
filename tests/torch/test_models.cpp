#include "testing.h"

#include <torch/nn/modules/linear.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/simple_model.h"
#include "gpuperf/models/weights_file.h"

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
  CHECK_NOTHROW(options.validate());
  options.layers = {3, 4, 6};
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("ResNetOptions::layers"));
  CHECK_THROWS_WITH(gpuperf::ResNet(options), Catch::Contains("layers"));
  options.layers = {3, 0, 6, 3};
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("ResNetOptions::layers") &&
                                            Catch::Contains(">= 1 block, got 0"));
  options = {};
  options.num_classes = 0;
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("ResNetOptions::num_classes"));
  CHECK_THROWS_WITH(gpuperf::ResNet(options), Catch::Contains("num_classes"));
}

TEST_CASE("SimpleModel options are validated", "[models]") {
  gpuperf::SimpleModelOptions options;
  CHECK_NOTHROW(options.validate());
  options.image_size = 0;
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("SimpleModelOptions::image_size"));
  CHECK_THROWS_WITH(gpuperf::SimpleModel(options), Catch::Contains("image_size"));
  options = {};
  options.num_classes = -1;
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("SimpleModelOptions::num_classes"));
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
  CHECK_THROWS_WITH(registry.create("vgg16"), Catch::Contains("model: unknown model") &&
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

namespace {

std::string scratch_file(const std::string& name) {
  char pattern[] = "/tmp/gpuperf-weights-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  REQUIRE(dir != nullptr);
  return std::string(dir) + "/" + name;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A safetensors file by hand: the header length (little-endian), the header, the data.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data;
}

}  // namespace

TEST_CASE("safetensors files round-trip every dtype, shape and value", "[models][weights]") {
  torch::manual_seed(5);
  const gpuperf::NamedTensors tensors = {{"a.weight", torch::randn({3, 4})},
                                         {"b", torch::randn({2, 2}).to(torch::kDouble)},
                                         {"c.half", torch::randn({5}).to(torch::kHalf)},
                                         {"d.bf16", torch::randn({1, 3}).to(torch::kBFloat16)},
                                         {"e.count", torch::tensor({7}, torch::kLong)},
                                         {"f.empty", torch::empty({0, 3})},
                                         {"g.scalar", torch::tensor(2.5)}};
  const std::string path = scratch_file("t.safetensors");
  gpuperf::write_safetensors(tensors, path);
  const auto back = gpuperf::read_safetensors(path);
  REQUIRE(back.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    INFO(name);
    REQUIRE(back.count(name) == 1);
    CHECK(back.at(name).scalar_type() == t.scalar_type());
    CHECK(back.at(name).sizes() == t.sizes());
    CHECK(torch::equal(back.at(name), t));
  }
}

TEST_CASE("safetensors written by hand (the format's own layout) read as their header says",
          "[models][weights]") {
  // Two float32 values and one int64, at the offsets the header gives; __metadata__ is skipped.
  std::string data(16, '\0');
  const float values[2] = {1.5F, -2.0F};
  std::memcpy(data.data(), values, 8);
  const std::int64_t label = 42;
  std::memcpy(data.data() + 8, &label, 8);
  const std::string path = scratch_file("hand.safetensors");
  write_bytes(path,
              safetensors_bytes(
                  R"({"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[2],)"
                  R"("data_offsets":[0,8]},"y":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})",
                  data));
  const auto t = gpuperf::read_safetensors(path);
  REQUIRE(t.size() == 2);
  CHECK(t.at("x")[0].item<float>() == 1.5F);
  CHECK(t.at("x")[1].item<float>() == -2.0F);
  CHECK(t.at("y").dim() == 0);
  CHECK(t.at("y").item<std::int64_t>() == 42);
}

TEST_CASE("a safetensors file that does not hold what its header says is refused, naming it",
          "[models][weights]") {
  using Catch::Matchers::Contains;
  const std::string ok_entry = R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const struct {
    const char* what;
    std::string bytes;
    const char* message;
  } cases[] = {
      {"too short", std::string(5, '\0'), "shorter than"},
      {"header longer than the file", safetensors_bytes("{}", "").substr(0, 8) + "{",
       "larger than the file"},
      {"header not JSON", safetensors_bytes("{nope", ""), "not JSON"},
      {"header not an object", safetensors_bytes("[1]", ""), "not a JSON object"},
      {"unknown dtype",
       safetensors_bytes(R"({"x":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}})", "ab"),
       "unknown dtype"},
      {"offsets past the data", safetensors_bytes("{" + ok_entry + "}", "abcd"), "outside"},
      {"size not the shape's",
       safetensors_bytes(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                         std::string(8, 'a')),
       "need 12"},
      {"negative dimension",
       safetensors_bytes(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", ""),
       "bad dimension"},
      {"entry without offsets", safetensors_bytes(R"({"x":{"dtype":"F32","shape":[1]}})", "abcd"),
       "needs dtype"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const std::string path = scratch_file("bad.safetensors");
    write_bytes(path, c.bytes);
    CHECK_THROWS_AS(gpuperf::read_safetensors(path), gpuperf::IoError);
    CHECK_THROWS_WITH(gpuperf::read_safetensors(path), Contains(c.message) && Contains(path));
  }
  CHECK_THROWS_AS(gpuperf::read_safetensors("/nonexistent/x.safetensors"), gpuperf::IoError);
  CHECK_THROWS_WITH(gpuperf::read_safetensors("/tmp"), Contains("not a regular file"));
}

TEST_CASE("load_named_tensors copies a model's state by name and refuses another model's",
          "[models][weights]") {
  using Catch::Matchers::Contains;
  torch::manual_seed(1);
  gpuperf::ResNet source(gpuperf::ResNetOptions::resnet50());
  torch::manual_seed(2);
  gpuperf::ResNet target(gpuperf::ResNetOptions::resnet50());
  const std::string path = scratch_file("resnet50.safetensors");
  gpuperf::write_safetensors(gpuperf::named_tensors(*source), path);
  const auto tensors = gpuperf::read_safetensors(path);
  gpuperf::load_named_tensors(*target, tensors);
  for (const auto& [name, t] : gpuperf::named_tensors(*target)) {
    INFO(name);
    CHECK(torch::equal(t, tensors.at(name)));
  }
  auto missing = tensors;
  missing.erase("layer2.1.bn2.running_var");
  CHECK_THROWS_WITH(gpuperf::load_named_tensors(*target, missing),
                    Contains("no tensor for 'layer2.1.bn2.running_var'"));
  auto extra = tensors;
  extra.emplace("layer5.0.conv1.weight", torch::zeros({1}));
  CHECK_THROWS_WITH(gpuperf::load_named_tensors(*target, extra),
                    Contains("no parameter or buffer 'layer5.0.conv1.weight'"));
  auto reshaped = tensors;
  reshaped["fc.weight"] = torch::zeros({10, 2048});
  CHECK_THROWS_AS(gpuperf::load_named_tensors(*target, reshaped), gpuperf::ConfigError);
  CHECK_THROWS_WITH(gpuperf::load_named_tensors(*target, reshaped),
                    Contains("'fc.weight' has shape"));
  // Nothing was copied by a refused load: the parameters are still the file's.
  CHECK(torch::equal(target->fc->weight, tensors.at("fc.weight")));
}
