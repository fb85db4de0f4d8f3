#include "gpuperf/models/resnet.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/pooling.h>

#include <ATen/ops/addmm.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/linear.h>

#include <string>
#include <vector>

#include "compat.h"
#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

torch::nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                       std::int64_t padding) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// The dtype the stem's convolution runs in: autocast's on CUDA where it is on, else the input's.
c10::ScalarType stem_dtype(const torch::Tensor& x) {
  if (x.is_cuda() && compat::autocast_enabled(c10::DeviceType::CUDA)) {
    return compat::autocast_dtype(c10::DeviceType::CUDA);
  }
  return x.scalar_type();
}

// A first convolution's weight with zero input channels appended up to 4 (differentiable: the
// gradient of the original channels comes back through it).
torch::Tensor padded_to_4_channels(const torch::Tensor& weight) {
  return at::constant_pad_nd(weight, {0, 0, 0, 0, 0, 4 - weight.size(1)});
}

}  // namespace

BottleneckImpl::BottleneckImpl(std::int64_t in_channels, std::int64_t planes, std::int64_t stride) {
  const std::int64_t out_channels = planes * kExpansion;
  conv1 = register_module("conv1", conv(in_channels, planes, 1, 1, 0));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(planes));
  conv2 = register_module("conv2", conv(planes, planes, 3, stride, 1));
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(planes));
  conv3 = register_module("conv3", conv(planes, out_channels, 1, 1, 0));
  bn3 = register_module("bn3", torch::nn::BatchNorm2d(out_channels));
  if (stride != 1 || in_channels != out_channels) {
    downsample = register_module(
        "downsample", torch::nn::Sequential(conv(in_channels, out_channels, 1, stride, 0),
                                            torch::nn::BatchNorm2d(out_channels)));
  }
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  if (folded_) {
    torch::Tensor out = conv2d_bias_relu(x, *conv1, bias1_, /*fused=*/true);
    out = conv2d_bias_relu(out, *conv2, bias2_, /*fused=*/true);
    const torch::Tensor identity =
        downsample ? conv2d_bias(x, *downsample->ptr(0)->as<torch::nn::Conv2dImpl>(), {}) : x;
    return conv2d_bias_add_relu(out, *conv3, bias3_, identity, /*fused=*/true);
  }
  if (fused_bn_) return forward_fused(x, nullptr);
  ran_fused_ = ran_conv_statistics_ = false;
  const torch::Tensor identity = downsample ? downsample->forward(x) : x;
  torch::Tensor out = torch::relu(bn1->forward(conv1->forward(x)));
  out = torch::relu(bn2->forward(conv2->forward(out)));
  out = bn3->forward(conv3->forward(out));
  out += identity;
  return torch::relu(out);
}

std::size_t BottleneckImpl::weight_count() const { return downsample ? 4 : 3; }

std::vector<torch::Tensor> BottleneckImpl::weights() const {
  std::vector<torch::Tensor> w{conv1->weight, conv2->weight, conv3->weight};
  if (downsample) w.push_back(downsample->ptr(0)->as<torch::nn::Conv2dImpl>()->weight);
  return w;
}

torch::Tensor BottleneckImpl::forward_fused(const torch::Tensor& x, const torch::Tensor* cast) {
  const auto weight = [&](std::size_t i, torch::nn::Conv2dImpl& conv) {
    return cast != nullptr ? cast[i] : conv.weight;
  };
  // conv1 and the shortcut from one node: x's gradient from both in one GEMM, not a data
  // gradient and an add (measured on the H200: +2.5% ResNet-50 training throughput).
  bool fused1 = false;
  bool fused2 = false;
  bool fused3 = false;
  bool sums1 = false;
  bool sums2 = false;
  bool sums3 = false;
  bool shortcut_sums = true;
  auto [out, shortcut] = conv1x1_batch_norm_relu_and_shortcut(x, *conv1, weight(0, *conv1), *bn1,
                                                              /*fused=*/true, &fused1, &sums1);
  torch::Tensor identity = shortcut;
  if (downsample) {
    auto& conv = *downsample->ptr(0)->as<torch::nn::Conv2dImpl>();
    identity = conv2d_batch_norm(shortcut, conv, weight(3, conv),
                                 *downsample->ptr(1)->as<torch::nn::BatchNorm2dImpl>(),
                                 /*fused=*/true, nullptr, &shortcut_sums);
  }
  out = conv2d_batch_norm_relu(out, *conv2, weight(1, *conv2), *bn2, {}, true, &fused2, &sums2);
  out =
      conv2d_batch_norm_relu(out, *conv3, weight(2, *conv3), *bn3, identity, true, &fused3, &sums3);
  ran_fused_ = fused1 && fused2 && fused3;
  ran_conv_statistics_ = sums1 && sums2 && sums3 && shortcut_sums;
  return out;
}

void BottleneckImpl::fuse_for_inference() {
  if (folded_) return;
  bias1_ = register_buffer("folded_bias1", fold_batch_norm(*conv1, *bn1));
  bias2_ = register_buffer("folded_bias2", fold_batch_norm(*conv2, *bn2));
  torch::Tensor bias3 = fold_batch_norm(*conv3, *bn3);
  if (downsample) {
    // relu(conv3(out) + b3 + convd(x) + bd): one bias for the fused call, none on the shortcut.
    bias3 = bias3 + fold_batch_norm(*downsample->ptr(0)->as<torch::nn::Conv2dImpl>(),
                                    *downsample->ptr(1)->as<torch::nn::BatchNorm2dImpl>());
  }
  bias3_ = register_buffer("folded_bias3", bias3);
  folded_ = true;
}

void ResNetOptions::validate() const {
  if (layers.size() != 4) {
    throw ConfigError("ResNetOptions::layers",
                      "must have 4 stages, got " + std::to_string(layers.size()));
  }
  for (std::int64_t blocks : layers) {
    if (blocks < 1) {
      throw ConfigError("ResNetOptions::layers",
                        "each stage needs >= 1 block, got " + std::to_string(blocks));
    }
  }
  if (num_classes <= 0) {
    throw ConfigError("ResNetOptions::num_classes",
                      "must be > 0, got " + std::to_string(num_classes));
  }
}

ResNetImpl::ResNetImpl(ResNetOptions options) {
  options.validate();
  conv1 = register_module("conv1", conv(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(64));
  layer1 = register_module("layer1", make_stage(64, options.layers[0], 1));
  layer2 = register_module("layer2", make_stage(128, options.layers[1], 2));
  layer3 = register_module("layer3", make_stage(256, options.layers[2], 2));
  layer4 = register_module("layer4", make_stage(512, options.layers[3], 2));
  fc = register_module("fc",
                       torch::nn::Linear(512 * BottleneckImpl::kExpansion, options.num_classes));

  // torchvision's initialisation: He normal (fan-out, ReLU gain) for convolutions, BN as identity;
  // the Linear layer keeps its default initialisation, as in torchvision.
  torch::NoGradGuard no_grad;
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* c = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    }
  }
  if (options.zero_init_residual) {
    for (auto& module : modules(false)) {
      if (auto* block = module->as<Bottleneck>()) torch::nn::init::zeros_(block->bn3->weight);
    }
  }
}

torch::nn::Sequential ResNetImpl::make_stage(std::int64_t planes, std::int64_t blocks,
                                             std::int64_t stride) {
  torch::nn::Sequential stage;
  stage->push_back(Bottleneck(in_channels_, planes, stride));
  in_channels_ = planes * BottleneckImpl::kExpansion;
  for (std::int64_t i = 1; i < blocks; ++i) stage->push_back(Bottleneck(in_channels_, planes, 1));
  return stage;
}

bool ResNetImpl::set_training_fusion(bool on) {
  fused_bn_ = on;
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* block = module->as<BottleneckImpl>()) block->set_training_fusion(on);
  }
  return true;
}

std::string ResNetImpl::training_fusion() const {
  bool all = ran_fused_;
  bool sums = true;
  for (const auto& module : modules(/*include_self=*/false)) {
    if (const auto* block = module->as<BottleneckImpl>()) {
      all = all && block->ran_fused();
      sums = sums && block->ran_conv_statistics();
    }
  }
  if (!all) return "none";
  return sums ? "conv-statistics+batchnorm+add+relu" : "batchnorm+add+relu";
}

std::string ResNetImpl::fuse_for_inference() {
  std::string what = "batchnorm-folded+conv+bias(+shortcut)+relu";
  if (folded_) return what;
  if (is_training()) {
    throw ConfigError("ResNet::fuse_for_inference: the model is in training mode; call eval()");
  }
  bias1_ = register_buffer("folded_bias1", fold_batch_norm(*conv1, *bn1));
  if (conv1->weight.size(1) < 4 && explicit_zero_padding(*conv1)) {
    torch::NoGradGuard no_grad;
    stem_weight4_ =
        register_buffer("folded_conv1_weight4", padded_to_4_channels(conv1->weight.detach()));
  }
  fc_weight_t_ = register_buffer("folded_fc_weight_t", fc->weight.detach().t().contiguous());
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* block = module->as<BottleneckImpl>()) block->fuse_for_inference();
  }
  folded_ = true;
  return what;
}

bool ResNetImpl::stem_pads(const torch::Tensor& x) const {
  return x.dim() == 4 && x.size(1) < 4 && conv1->weight.size(1) == x.size(1) &&
         explicit_zero_padding(*conv1) && pad_channels_kernel_applies(x, stem_dtype(x));
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  // The fused BatchNorms' batch counts in one add kernel at the end, not 53.
  const BatchCountScope batch_counts;
  ran_fused_ = false;  // forward_fused says otherwise
  // With the fused paths, the stem runs on its input padded to 4 channels by gpuperf's kernel
  // where that applies (pad_channels_to_4): cuDNN's first-layer kernels otherwise pad it
  // themselves in the forward and again in the weight gradient (measured on the H200: 2 x 0.12
  // ms of a ResNet-50 training step at batch 256; at batch 1, 19.5 us on 3 channels against
  // 13.8 + 1.7 for the pad: docs/results/2026-12-02-h200-stem-pad).
  if (folded_) {
    if (stem_weight4_.defined() && stem_pads(x)) {
      x = conv2d_bias_relu(pad_channels_to_4(x, stem_dtype(x)), *conv1, stem_weight4_, bias1_,
                           /*fused=*/true);
    } else {
      x = conv2d_bias_relu(x, *conv1, bias1_, /*fused=*/true);
    }
  } else if (fused_bn_) {
    return forward_fused(x);
  } else {
    x = torch::relu(bn1->forward(conv1->forward(x)));
  }
  // gpuperf's pool kernels once folded for inference, as forward_fused runs them in training
  // (the max pool's one-byte indices and gathered backward: +3.1% training throughput over
  // cuDNN's pooling on the H200, which had given +2% over ATen's).
  x = max_pool2d(x, /*kernel=*/3, /*stride=*/2, /*padding=*/1, /*fused=*/folded_);
  x = layer1->forward(x);
  x = layer2->forward(x);
  x = layer3->forward(x);
  x = layer4->forward(x);
  x = global_average_pool(x, /*fused=*/folded_);
  if (folded_ && x.size(0) == 1) {
    // Batch 1's product is a matrix-vector one, and cuBLAS runs it in 7.4 us with the weight
    // stored transposed against 12.5 us on linear's transposed view (H200, fp16, inside a CUDA
    // graph; at batch 8 the view is the faster, 5.2 against 7.4 us):
    // docs/results/2026-12-01-h200-own-kernels/probe_small_batch.py.
    return at::addmm(fc->bias, x, fc_weight_t_);
  }
  return fc->forward(x);
}

std::vector<torch::Tensor> ResNetImpl::cast_weights_for(const torch::Tensor& x) {
  if (!x.is_cuda() || !compat::autocast_enabled(c10::DeviceType::CUDA)) return {};
  std::vector<torch::Tensor> weights{conv1->weight};
  for (auto* stage : {&layer1, &layer2, &layer3, &layer4}) {
    for (const auto& module : (*stage)->children()) {
      const auto block = module->as<BottleneckImpl>()->weights();
      weights.insert(weights.end(), block.begin(), block.end());
    }
  }
  weights.push_back(fc->weight);
  weights.push_back(fc->bias);
  const c10::ScalarType dtype = compat::autocast_dtype(c10::DeviceType::CUDA);
  if (!cast_kernel_applies(weights, dtype)) return {};
  return cast_weights(weights, dtype);
}

torch::Tensor ResNetImpl::forward_fused(torch::Tensor x) {
  // Under CUDA autocast every weight is cast to the autocast dtype in one kernel (and its
  // gradient back in one), where autocast casts each in its own kernel both ways. Order: the
  // stem, each block's (BottleneckImpl::weights), fc's weight and bias.
  const std::vector<torch::Tensor> cast = cast_weights_for(x);
  const torch::Tensor* next = cast.empty() ? nullptr : cast.data();
  const torch::Tensor stem_weight = next != nullptr ? *next++ : conv1->weight;
  torch::Tensor stem;
  if (stem_pads(x)) {
    stem = conv2d_weight_bias(pad_channels_to_4(x, stem_dtype(x)), *conv1,
                              padded_to_4_channels(stem_weight), {});
  } else {
    stem = conv2d_weight_bias(x, *conv1, stem_weight, {});
  }
  x = batch_norm_add_relu(stem, *bn1, {}, /*fused=*/true, &ran_fused_);
  x = max_pool2d(x, /*kernel=*/3, /*stride=*/2, /*padding=*/1, /*fused=*/true);
  for (auto* stage : {&layer1, &layer2, &layer3, &layer4}) {
    for (const auto& module : (*stage)->children()) {
      auto* block = module->as<BottleneckImpl>();
      x = block->forward_fused(x, next);
      if (next != nullptr) next += block->weight_count();
    }
  }
  x = global_average_pool(x, /*fused=*/true);
  if (next != nullptr) return at::linear(x, next[0], next[1]);
  return fc->forward(x);
}

std::int64_t count_parameters(const torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& p : module.parameters()) {
    if (p.requires_grad()) total += p.numel();
  }
  return total;
}

}  // namespace gpuperf
