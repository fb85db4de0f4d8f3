#pragma once
// ResNet v1.5 with bottleneck blocks, equivalent to torchvision's resnet50/101/152: the stride of
// a downsampling block sits on its 3x3 convolution. Parameter names match torchvision's
// (conv1, bn1, layer1.0.conv1, layer1.0.downsample.0, fc, ...), so state dicts line up.
//
//   auto model = gpuperf::ResNet(gpuperf::ResNetOptions::resnet50());   // 25,557,032 parameters
//   auto logits = model(torch::randn({8, 3, 224, 224}));                 // [8, 1000]

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "gpuperf/models/fusion.h"

namespace gpuperf {

/// Options of a bottleneck ResNet.
struct ResNetOptions {
  std::vector<std::int64_t> layers{3, 4, 6, 3};  ///< bottleneck blocks per stage
  std::int64_t num_classes = 1000;
  /// Zero-init the last BN of each residual branch, so each block starts as identity
  /// (torchvision's zero_init_residual; "Bag of Tricks", Goyal et al. 2017).
  bool zero_init_residual = false;

  /// Throws ConfigError naming the first bad field: 4 stages of >= 1 block, num_classes > 0.
  void validate() const;

  [[nodiscard]] static ResNetOptions resnet50() { return {{3, 4, 6, 3}}; }
  [[nodiscard]] static ResNetOptions resnet101() { return {{3, 4, 23, 3}}; }
  [[nodiscard]] static ResNetOptions resnet152() { return {{3, 8, 36, 3}}; }
};

/// Bottleneck block: 1x1 reduce, 3x3 (carries the stride), 1x1 expand by 4, plus shortcut.
class BottleneckImpl : public torch::nn::Module {
 public:
  static constexpr std::int64_t kExpansion = 4;
  BottleneckImpl(std::int64_t in_channels, std::int64_t planes, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);
  /// Inference only: folds the BatchNorms into the convolutions (the shortcut's bias joins
  /// conv3's) and runs conv+bias+ReLU and conv+bias+shortcut+ReLU as single cuDNN calls.
  void fuse_for_inference();
  /// Training: each BatchNorm with the ReLU after it, and bn3 with the shortcut add and the ReLU,
  /// fused; the shortcut's BatchNorm on gpuperf's kernels; each BatchNorm's statistics from its
  /// convolution's epilogue where that applies (conv2d_batch_norm_relu, conv2d_batch_norm,
  /// conv1x1_batch_norm_relu_and_shortcut).
  void set_training_fusion(bool on) { fused_bn_ = on; }
  /// Whether the latest forward ran those fused calls.
  [[nodiscard]] bool ran_fused() const { return ran_fused_; }
  /// Whether every BatchNorm of the latest forward took its statistics from its convolution.
  [[nodiscard]] bool ran_conv_statistics() const { return ran_conv_statistics_; }
  /// The block's convolution weights: conv1, conv2, conv3 and the shortcut's, if any.
  [[nodiscard]] std::vector<torch::Tensor> weights() const;
  /// weights().size(), without building the list.
  [[nodiscard]] std::size_t weight_count() const;
  /// The training-fused forward (set_training_fusion), on `cast` (weights() cast by
  /// cast_weights, in that order) in place of the module's weights where given.
  torch::Tensor forward_fused(const torch::Tensor& x, const torch::Tensor* cast);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};  ///< 1x1 conv + BN when shape changes, else empty

 private:
  bool folded_ = false;
  torch::Tensor bias1_, bias2_, bias3_;  ///< folded biases (registered buffers once folded)
  bool fused_bn_ = false;
  bool ran_fused_ = false;
  bool ran_conv_statistics_ = false;
};
TORCH_MODULE(Bottleneck);

/// The network: stem (7x7/2 conv, BN, ReLU, 3x3/2 max pool), four stages, global pool, fc.
class ResNetImpl : public torch::nn::Module, public FusableModel {
 public:
  explicit ResNetImpl(ResNetOptions options = {});
  /// Logits [N, num_classes] for inputs [N, 3, H, W] (H, W >= 32).
  torch::Tensor forward(torch::Tensor x);

  /// Training: BatchNorm + ReLU and BatchNorm + shortcut add + ReLU fused, on CUDA in
  /// channels_last (batch_norm_add_relu: gpuperf's kernels where batch_norm_kernel_applies, else
  /// cuDNN's in fp16), and the shortcut's BatchNorm on gpuperf's kernels; conv1 + shortcut as one
  /// GEMM node; where gpuperf's CUDA kernels apply, the stem's input padded to 4 channels, the
  /// pools on them, and under CUDA autocast every weight cast in one kernel (cast_weights).
  /// Returns true.
  bool set_training_fusion(bool on) override;
  /// What the latest forward fused: "conv-statistics+batchnorm+add+relu" when it ran the fused
  /// calls and every bottleneck BatchNorm took its statistics from its convolution's epilogue
  /// (the stem's makes its own pass), "batchnorm+add+relu" when it ran the fused calls with
  /// statistics passes (cuDNN determinism asked for, or no cuDNN engine for a shape), else
  /// "none".
  [[nodiscard]] std::string training_fusion() const override;
  /// Folds every BatchNorm into its convolution (eval statistics) and fuses bias, shortcut add
  /// and ReLU into the convolutions' cuDNN calls. Inference only; irreversible.
  std::string fuse_for_inference() override;

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};

 private:
  torch::nn::Sequential make_stage(std::int64_t planes, std::int64_t blocks, std::int64_t stride);
  std::int64_t in_channels_ = 64;
  bool folded_ = false;
  torch::Tensor bias1_;  ///< the stem's folded bias (a registered buffer once folded)
  /// Whether the stem runs on `x` padded to 4 channels (pad_channels_to_4's kernel applies).
  [[nodiscard]] bool stem_pads(const torch::Tensor& x) const;
  /// The training-fused forward (set_training_fusion).
  torch::Tensor forward_fused(torch::Tensor x);
  /// Every weight cast for one forward pass (cast_weights) where CUDA autocast is on and the cast
  /// kernel applies; else none.
  std::vector<torch::Tensor> cast_weights_for(const torch::Tensor& x);
  torch::Tensor stem_weight4_;  ///< the folded stem weight padded to 4 input channels (a buffer)
  torch::Tensor fc_weight_t_;   ///< fc's weight transposed, for batch 1 (a buffer once folded)
  bool fused_bn_ = false;
  bool ran_fused_ = false;  ///< the stem's BatchNorm ran fused in the latest forward
};
TORCH_MODULE(ResNet);

/// Trainable parameters of a module (the figure torchvision's docs quote).
[[nodiscard]] std::int64_t count_parameters(const torch::nn::Module& module);

}  // namespace gpuperf
