#include "gpuperf/models/simple_model.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/linear.h>

#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf {

void SimpleModelOptions::validate() const {
  if (num_classes <= 0) {
    throw ConfigError("SimpleModelOptions::num_classes",
                      "must be > 0, got " + std::to_string(num_classes));
  }
  if (image_size <= 0) {
    throw ConfigError("SimpleModelOptions::image_size",
                      "must be > 0, got " + std::to_string(image_size));
  }
}

SimpleModelImpl::SimpleModelImpl(SimpleModelOptions options) {
  options.validate();
  conv1 = register_module(
      "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 3).stride(1).padding(1)));
  conv2 = register_module(
      "conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 128, 3).stride(1).padding(1)));
  fc = register_module(
      "fc", torch::nn::Linear(128 * options.image_size * options.image_size, options.num_classes));
}

torch::Tensor SimpleModelImpl::forward(torch::Tensor x) {
  ran_fused_ = fused_conv_ && cudnn_fusion_applies(x, *conv1);
  ran_channels_last_ = ran_fused_ && x.dim() == 4;
  if (ran_fused_ && x.dim() == 4) {
    // channels_last inside, whatever the input's layout: cuDNN's kernels are NHWC, and with
    // NCHW tensors it converted layouts around every call (a third of the step on the H200).
    x = conv2d_bias_relu(x.contiguous(at::MemoryFormat::ChannelsLast), *conv1, conv1->bias,
                         /*fused=*/true);
    x = conv2d_bias_relu(x, *conv2, conv2->bias, /*fused=*/true);
    if (x.is_contiguous(at::MemoryFormat::ChannelsLast)) {
      // Flatten in memory order (H, W, C), a view, with fc's weight reordered to match: the
      // same function as flatten(1) in (C, H, W) order, without copying the activation.
      const auto sizes = x.sizes();
      const torch::Tensor rows = x.permute({0, 2, 3, 1}).reshape({sizes[0], -1});
      const torch::Tensor weight = fc->weight.view({-1, sizes[1], sizes[2], sizes[3]})
                                       .permute({0, 2, 3, 1})
                                       .reshape({fc->weight.size(0), -1});
      return torch::linear(rows, weight, fc->bias);
    }
  } else if (fused_conv_) {
    x = conv2d_bias_relu(x, *conv1, conv1->bias, /*fused=*/true);
    x = conv2d_bias_relu(x, *conv2, conv2->bias, /*fused=*/true);
  } else {
    x = torch::relu(conv1->forward(x));
    x = torch::relu(conv2->forward(x));
  }
  return fc->forward(x.flatten(1));
}

bool SimpleModelImpl::set_training_fusion(bool on) {
  fused_conv_ = on;
  return true;
}

std::string SimpleModelImpl::training_fusion() const {
  return ran_fused_ ? "conv+bias+relu" : "none";
}

std::string SimpleModelImpl::fuse_for_inference() {
  fused_conv_ = true;
  return "conv+bias+relu";
}

}  // namespace gpuperf
