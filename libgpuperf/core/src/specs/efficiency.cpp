// Analytic FLOP counts and efficiency figures. The counting rules are in docs/efficiency.md:
// only convolutions and linear layers are counted, one MAC = 2 FLOPs.
#include "gpuperf/specs/efficiency.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Builds layer counts from shapes, so the models read like their definitions.
class Counter {
 public:
  explicit Counter(ModelCount& count) : count_(count) {}

  // A k x k convolution producing `out` channels of `h` x `w`; BatchNorm adds 2 parameters per
  // output channel (its running statistics are buffers, not parameters).
  void conv(const std::string& name, double in, double out, double k, double h, double w, bool bias,
            bool batch_norm) {
    LayerCount layer;
    layer.name = name;
    layer.macs = out * h * w * in * k * k;
    layer.parameters = out * in * k * k + (bias ? out : 0) + (batch_norm ? 2 * out : 0);
    layer.output_elements = out * h * w;
    add(layer);
  }

  void linear(const std::string& name, double in, double out) {
    add({name, in * out, in * out + out, out});
  }

 private:
  void add(const LayerCount& layer) {
    count_.layers.push_back(layer);
    count_.forward_macs += layer.macs;
    count_.parameters += layer.parameters;
    count_.activation_elements += layer.output_elements;
    count_.largest_output_elements =
        std::max(count_.largest_output_elements, layer.output_elements);
  }

  ModelCount& count_;
};

// The seed's SimpleModel: conv 3->64 k3 p1, ReLU, conv 64->128 k3 p1, ReLU, flatten,
// linear 128*32*32 -> 10, on 3x32x32 inputs. Padding 1 keeps 32x32.
ModelCount simple_model() {
  ModelCount m;
  m.model = "simple";
  m.input_shape = {3, 32, 32};
  Counter c(m);
  c.conv("conv1", 3, 64, 3, 32, 32, true, false);
  c.conv("conv2", 64, 128, 3, 32, 32, true, false);
  c.linear("fc", 128.0 * 32 * 32, 10);
  return m;
}

// torchvision ResNet-50 v1.5 at 224x224 (stride 2 in the bottleneck's 3x3, not its first 1x1),
// 1000 classes. Convolutions have no bias; each is followed by BatchNorm.
ModelCount resnet50() {
  ModelCount m;
  m.model = "resnet50";
  m.input_shape = {3, 224, 224};
  Counter c(m);
  c.conv("conv1", 3, 64, 7, 112, 112, false, true);
  double size = 56;  // after the 3x3 stride-2 max pool
  double in = 64;
  const int blocks[4] = {3, 4, 6, 3};
  const double widths[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const double width = widths[stage];
    for (int b = 0; b < blocks[stage]; ++b) {
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(b);
      const bool downsample = stage > 0 && b == 0;
      const double out_size = downsample ? size / 2 : size;
      c.conv(prefix + ".conv1", in, width, 1, size, size, false, true);
      c.conv(prefix + ".conv2", width, width, 3, out_size, out_size, false, true);
      c.conv(prefix + ".conv3", width, 4 * width, 1, out_size, out_size, false, true);
      if (b == 0) c.conv(prefix + ".downsample", in, 4 * width, 1, out_size, out_size, false, true);
      in = 4 * width;
      size = out_size;
    }
  }
  c.linear("fc", 2048, 1000);
  return m;
}

void finish(ModelCount& m) {
  m.forward_flops = 2 * m.forward_macs;
  m.training_flops = kTrainingFlopsFactor * m.forward_flops;
}

}  // namespace

double ModelCount::flops_for(const std::string& workload) const {
  return workload == "inference" ? forward_flops : training_flops;
}

const std::vector<std::string>& counted_models() {
  static const std::vector<std::string> models = {"simple", "resnet50"};
  return models;
}

std::optional<ModelCount> count_model(const std::string& model) {
  ModelCount m;
  if (model == "simple") {
    m = simple_model();
  } else if (model == "resnet50") {
    m = resnet50();
  } else {
    return std::nullopt;
  }
  finish(m);
  return m;
}

std::string peak_key_for_precision(const std::string& precision, const GpuSpec* spec,
                                   std::string* note) {
  auto say = [&](const std::string& text) {
    if (note != nullptr) *note = text;
  };
  if (precision == "fp32") return "fp32";
  if (precision == "fp16" || precision == "bf16") return precision;
  if (precision == "tf32") {
    if (spec != nullptr && spec->peak("tf32") == 0) {
      say(spec->name + " has no TF32 path: TF32 mode runs FP32 math, compared with the FP32 peak");
      return "fp32";
    }
    return "tf32";
  }
  if (precision == "fp64") {
    if (spec != nullptr && spec->peak("fp64_tensor") > 0) return "fp64_tensor";
    return "fp64";
  }
  say("precision '" + precision + "' has no datasheet peak");
  return "";
}

void EfficiencyOptions::validate() const {
  auto check = [](double v, const char* name, bool allow_nan) {
    if (std::isnan(v) && allow_nan) return;
    if (!std::isfinite(v) || v < 0) {
      throw ConfigError(std::string("EfficiencyOptions::") + name,
                        "must be a finite number >= 0, got " + format_number(v));
    }
  };
  check(price_per_hour_usd, "price_per_hour_usd", true);
  check(purchase_price_usd, "purchase_price_usd", true);
  check(amortization_years, "amortization_years", false);
  if (!(amortization_years > 0)) {
    throw ConfigError("efficiency option amortization_years must be > 0, got " +
                      format_number(amortization_years));
  }
  check(electricity_usd_per_kwh, "electricity_usd_per_kwh", false);
  check(measured_power_watts, "measured_power_watts", true);
}

namespace {

// The datasheet peak for the run's precision, and the fraction of it achieved.
void add_peak(Efficiency& e, const EfficiencyInput& input, const GpuSpec* spec) {
  std::string note;
  e.peak_key = peak_key_for_precision(input.precision, spec, &note);
  if (!note.empty()) e.notes.push_back(note);
  if (spec != nullptr && !e.peak_key.empty()) {
    const double peak = spec->peak(e.peak_key);
    if (peak > 0) {
      e.peak_flops_per_second = peak;
      e.fraction_of_peak = e.achieved_flops_per_second / peak;
    } else {
      e.notes.push_back(spec->name + ": datasheet " + e.peak_key + " peak " +
                        (peak == 0 ? "does not exist" : "is not confirmed"));
    }
  }
}

// The power behind samples per joule: measured (given, or recorded in the run), else the TDP,
// else the power limit.
void add_power(Efficiency& e, const EfficiencyInput& input, const GpuSpec* spec,
               const EfficiencyOptions& options) {
  double measured = options.measured_power_watts;
  if (std::isnan(measured) && input.measured_power_watts > 0) measured = input.measured_power_watts;
  if (measured > 0) {
    e.power_watts = measured;
    e.power_basis = "measured";
  } else if (spec != nullptr && spec->tdp_watts > 0) {
    e.power_watts = spec->tdp_watts;
    e.power_basis = "TDP";
    e.notes.push_back("no measured power: samples per joule uses the TDP (" +
                      format_number(spec->tdp_watts) + " W), an upper bound on draw");
  } else if (input.power_limit_watts > 0) {
    e.power_watts = input.power_limit_watts;
    e.power_basis = "power limit";
  }
  if (e.power_watts > 0) e.samples_per_joule = e.samples_per_second / e.power_watts;
  // The energy counter over the timed windows is the better figure when the run sampled it.
  if (std::isnan(options.measured_power_watts) && input.measured_samples_per_joule > 0) {
    e.samples_per_joule = input.measured_samples_per_joule;
  }
}

// Cost per million samples: at a rental price, else a purchase price written off over the
// amortization period plus the energy at the power found above.
void add_cost(Efficiency& e, const GpuSpec* spec, const EfficiencyOptions& options) {
  const double seconds_per_million = 1e6 / e.samples_per_second;
  if (options.price_per_hour_usd >= 0) {
    e.cost_usd_per_million_samples = options.price_per_hour_usd * seconds_per_million / 3600;
    e.cost_basis = "rental at " + format_number(options.price_per_hour_usd) + " USD per GPU-hour";
    return;
  }
  const double price = options.purchase_price_usd >= 0 ? options.purchase_price_usd
                                                       : (spec != nullptr ? spec->price_usd : kNaN);
  if (!(price >= 0)) {
    e.notes.emplace_back("no price: give a price per hour or a purchase price for a cost");
    return;
  }
  const double hours = options.amortization_years * 365.25 * 24;
  const double capital = price / hours * seconds_per_million / 3600;
  double energy = 0;
  if (e.power_watts > 0) {
    energy = e.power_watts / 1000 * seconds_per_million / 3600 * options.electricity_usd_per_kwh;
  }
  e.cost_usd_per_million_samples = capital + energy;
  e.cost_basis = "purchase " + format_number(price) + " USD written off over " +
                 format_number(options.amortization_years) + " years of 24/7 use";
  if (e.power_watts > 0) {
    e.cost_basis += ", plus energy at " + format_number(options.electricity_usd_per_kwh) +
                    " USD/kWh and " + format_number(e.power_watts) + " W (" + e.power_basis + ")";
  }
  e.cost_basis += "; host, cooling and idle time not included";
}

}  // namespace

Efficiency compute_efficiency(const EfficiencyInput& input, const GpuSpec* spec,
                              const EfficiencyOptions& options) {
  options.validate();
  Efficiency e;
  e.samples_per_second = input.samples_per_second;
  if (!(e.samples_per_second > 0) || !std::isfinite(e.samples_per_second)) {
    e.notes.emplace_back("no positive throughput in the record: nothing derived");
    e.samples_per_second = kNaN;
    return e;
  }
  if (spec == nullptr) e.notes.emplace_back("no datasheet entry: no peak, TDP or price");

  const auto count = count_model(input.model);
  if (input.flops_per_sample > 0) {
    e.flops_per_sample = input.flops_per_sample;
    e.achieved_flops_per_second = e.flops_per_sample * e.samples_per_second;
  } else if (count) {
    e.flops_per_sample = count->flops_for(input.workload);
    e.achieved_flops_per_second = e.flops_per_sample * e.samples_per_second;
  } else {
    e.notes.push_back("model '" + input.model + "' has no FLOP count");
  }
  add_peak(e, input, spec);
  add_power(e, input, spec, options);
  add_cost(e, spec, options);
  return e;
}

}  // namespace gpuperf
