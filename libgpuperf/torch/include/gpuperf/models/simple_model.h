#pragma once
// The seed's small CNN, layer for layer:
//   conv 3->64 k3 s1 p1, ReLU, conv 64->128 k3 s1 p1, ReLU, flatten, linear 128*H*W -> classes.
//
//   gpuperf::SimpleModel model;                       // 3x32x32 inputs, 10 classes
//   auto logits = model(torch::randn({256, 3, 32, 32}));

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "gpuperf/models/fusion.h"

namespace gpuperf {

/// Options of SimpleModel.
struct SimpleModelOptions {
  std::int64_t num_classes = 10;  ///< outputs of the final linear layer
  std::int64_t image_size = 32;   ///< height and width of the 3-channel input

  /// Throws ConfigError naming the first field that is not > 0.
  void validate() const;
};

/// The seed's CNN (see the file comment).
class SimpleModelImpl : public torch::nn::Module, public FusableModel {
 public:
  explicit SimpleModelImpl(SimpleModelOptions options = {});
  /// Logits of shape [N, num_classes] for inputs [N, 3, image_size, image_size].
  torch::Tensor forward(torch::Tensor x);

  /// Each convolution, its bias and the ReLU after it in one cuDNN call (on CUDA). Returns true.
  bool set_training_fusion(bool on) override;
  /// "conv+bias+relu" when the latest forward ran the fused calls, else "none".
  [[nodiscard]] std::string training_fusion() const override;
  /// True when the latest forward ran the fused calls on 4-D input: channels_last inside.
  [[nodiscard]] bool ran_channels_last() const override { return ran_channels_last_; }
  /// The same fusion (the model has no BatchNorm to fold).
  std::string fuse_for_inference() override;

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::Conv2d conv2{nullptr};
  torch::nn::Linear fc{nullptr};

 private:
  bool fused_conv_ = false;
  bool ran_fused_ = false;  ///< whether the latest forward ran cuDNN's fused calls
  bool ran_channels_last_ = false;
};
TORCH_MODULE(SimpleModel);

}  // namespace gpuperf
