#pragma once
// Efficiency of a run against its datasheet: model FLOPs per sample counted layer by layer,
// achieved FLOP/s and fraction of the dense peak for the precision used, samples per joule and
// cost per million samples. docs/efficiency.md explains the counting. The projected 90-epoch
// ImageNet-1k time needs the record (its input shape, its ranks): imagenet_projection_seconds()
// in gpuperf/results/run_record.h.
//
//   gpuperf::EfficiencyInput input;
//   input.model = "resnet50";
//   input.precision = "fp16";
//   input.samples_per_second = 7016;
//   auto db = gpuperf::SpecDatabase::load_default();
//   gpuperf::Efficiency e = gpuperf::compute_efficiency(input, db.find_id("h200-sxm"));
//
// A RunRecord gives its input through efficiency_input() (gpuperf/results/run_record.h).

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/specs/specs.h"

namespace gpuperf {

/// Images in the ImageNet-1k training set.
inline constexpr double kImageNet1kTrainImages = 1281167;
/// Epochs of the classic ResNet-50 schedule.
inline constexpr double kImageNetEpochs = 90;
/// Training step FLOPs as a multiple of forward FLOPs (forward + input and weight gradients).
inline constexpr double kTrainingFlopsFactor = 3;

/// One counted layer (convolution or linear) for one sample.
struct LayerCount {
  std::string name;            ///< e.g. "layer3.2.conv2"
  double macs = 0;             ///< multiply-accumulates of the forward pass
  double parameters = 0;       ///< weights, biases and the following BatchNorm's affine pair
  double output_elements = 0;  ///< elements of the layer's output
};

/// Analytic forward cost of a model for one sample.
struct ModelCount {
  std::string model;                      ///< "simple", "resnet50"
  std::vector<std::int64_t> input_shape;  ///< one sample, e.g. {3, 224, 224}
  std::vector<LayerCount> layers;
  double forward_macs = 0;
  double forward_flops = 0;        ///< 2 x forward_macs
  double training_flops = 0;       ///< kTrainingFlopsFactor x forward_flops
  double parameters = 0;           ///< trainable parameters
  double activation_elements = 0;  ///< sum of counted layers' output elements
  double largest_output_elements = 0;

  /// FLOPs per sample for a workload: "train" -> training_flops, "inference" -> forward_flops.
  [[nodiscard]] double flops_for(const std::string& workload) const;
};

/// Training FLOPs per token of a decoder-only transformer as llm.c and PaLM (appendix B) count
/// them: 6 x parameters (forward and backward through every weight) + 6 x layers x width x
/// sequence (causal attention's two matrix products, forward and backward, half the positions).
[[nodiscard]] inline double transformer_training_flops_per_token(double parameters, double layers,
                                                                 double width, double sequence) {
  return 6 * parameters + 6 * layers * width * sequence;
}

/// Models with an analytic count.
[[nodiscard]] const std::vector<std::string>& counted_models();
/// The count for `model` ("simple", "resnet50"); nullopt for a model gpuperf cannot count.
[[nodiscard]] std::optional<ModelCount> count_model(const std::string& model);

/// The datasheet peak key used for a run's precision: fp32 -> "fp32", tf32 -> "tf32" (or "fp32"
/// where the part has no TF32 path, as then TF32 mode runs FP32 math), fp16 -> "fp16" (FP32
/// accumulate), bf16 -> "bf16", fp64 -> "fp64_tensor" where present else "fp64". Empty for an
/// unknown precision. `note` (optional) receives the reason for a fallback.
[[nodiscard]] std::string peak_key_for_precision(const std::string& precision, const GpuSpec* spec,
                                                 std::string* note = nullptr);

/// Assumptions for the cost and power figures.
struct EfficiencyOptions {
  /// Rental price per GPU-hour (USD); when set it is the cost basis.
  double price_per_hour_usd = std::numeric_limits<double>::quiet_NaN();
  /// Purchase price (USD) overriding the datasheet's launch price.
  double purchase_price_usd = std::numeric_limits<double>::quiet_NaN();
  /// Years over which a purchase is written off, used 24 hours a day.
  double amortization_years = 3;
  /// Electricity price added to a purchase-based cost (USD per kWh).
  double electricity_usd_per_kwh = 0.15;
  /// Measured mean board power (W) overriding the record's "power_mean_watts" metric.
  double measured_power_watts = std::numeric_limits<double>::quiet_NaN();

  /// Throws ConfigError naming the first negative or non-finite field.
  void validate() const;
};

/// Derived figures for one run. NaN where an input is missing; `notes` says which and why.
struct Efficiency {
  double samples_per_second = 0;  ///< median window throughput (overall if no windows)
  double flops_per_sample = std::numeric_limits<double>::quiet_NaN();
  double achieved_flops_per_second = std::numeric_limits<double>::quiet_NaN();
  std::string peak_key;  ///< datasheet key compared against, e.g. "bf16"
  double peak_flops_per_second = std::numeric_limits<double>::quiet_NaN();
  double fraction_of_peak = std::numeric_limits<double>::quiet_NaN();
  double power_watts = std::numeric_limits<double>::quiet_NaN();
  std::string power_basis;  ///< "measured", "TDP" or "power limit"
  double samples_per_joule = std::numeric_limits<double>::quiet_NaN();  ///< = samples/s per W
  double cost_usd_per_million_samples = std::numeric_limits<double>::quiet_NaN();
  std::string cost_basis;  ///< the assumptions behind the cost, in words
  std::vector<std::string> notes;
};

/// The figures of a measurement that its efficiency is derived from.
struct EfficiencyInput {
  std::string model;               ///< "simple", "resnet50": the FLOP count's key
  std::string workload = "train";  ///< "train" or "inference"
  std::string precision;           ///< fp32, tf32, fp16, bf16, fp64
  double samples_per_second = 0;   ///< the throughput to judge (median window)
  /// FLOPs per sample counted by the run itself (a language model's, which depend on the
  /// sequence length); NaN: the analytic count of `model`.
  double flops_per_sample = std::numeric_limits<double>::quiet_NaN();
  /// Mean board power measured over the run (W); NaN when not measured.
  double measured_power_watts = std::numeric_limits<double>::quiet_NaN();
  /// Samples per joule from the energy counter over the run; NaN when not measured.
  double measured_samples_per_joule = std::numeric_limits<double>::quiet_NaN();
  /// The device's enforced power limit (W); NaN when unknown.
  double power_limit_watts = std::numeric_limits<double>::quiet_NaN();
};

/// Computes the efficiency of a measurement against `spec` (null: no datasheet entry, so no
/// peak, TDP or price). Throws ConfigError on invalid options.
[[nodiscard]] Efficiency compute_efficiency(const EfficiencyInput& input, const GpuSpec* spec,
                                            const EfficiencyOptions& options = {});

}  // namespace gpuperf
