#include "gpuperf/base/choices.h"

#include <array>
#include <utility>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

template <typename Enum, std::size_t N>
using Names = std::array<std::pair<Enum, const char*>, N>;

constexpr Names<Precision, 4> kPrecisions{{{Precision::kFp32, "fp32"},
                                           {Precision::kTf32, "tf32"},
                                           {Precision::kFp16, "fp16"},
                                           {Precision::kBf16, "bf16"}}};
constexpr Names<MemoryFormat, 2> kMemoryFormats{
    {{MemoryFormat::kContiguous, "contiguous"}, {MemoryFormat::kChannelsLast, "channels_last"}}};
constexpr Names<Switch, 3> kSwitches{
    {{Switch::kAuto, "auto"}, {Switch::kOn, "on"}, {Switch::kOff, "off"}}};
constexpr Names<OptimizerKind, 3> kOptimizers{{{OptimizerKind::kAdam, "adam"},
                                               {OptimizerKind::kSgd, "sgd"},
                                               {OptimizerKind::kAdamW, "adamw"}}};
constexpr Names<NumericFormat, 6> kNumericFormats{{{NumericFormat::kFp32, "fp32"},
                                                   {NumericFormat::kTf32, "tf32"},
                                                   {NumericFormat::kFp16, "fp16"},
                                                   {NumericFormat::kBf16, "bf16"},
                                                   {NumericFormat::kInt8, "int8"},
                                                   {NumericFormat::kFp8, "fp8"}}};
constexpr Names<WorkloadKind, 2> kWorkloadKinds{
    {{WorkloadKind::kTrain, "train"}, {WorkloadKind::kInference, "inference"}}};
constexpr Names<ImageDecode, 3> kImageDecodes{
    {{ImageDecode::kAuto, "auto"}, {ImageDecode::kCpu, "cpu"}, {ImageDecode::kGpu, "gpu"}}};

template <typename Enum, std::size_t N>
std::string name_of(const Names<Enum, N>& names, Enum value) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "?";
}

template <typename Enum, std::size_t N>
std::vector<std::string> all_names(const Names<Enum, N>& names) {
  std::vector<std::string> out;
  for (const auto& entry : names) out.emplace_back(entry.second);
  return out;
}

template <typename Enum, std::size_t N>
Enum parse(const Names<Enum, N>& names, std::string_view text, std::string_view option) {
  for (const auto& [value, name] : names) {
    if (text == name) return value;
  }
  std::string choices;
  for (const auto& entry : names)
    choices += (choices.empty() ? "" : ", ") + std::string(entry.second);
  throw ConfigError(std::string(option),
                    "unknown value '" + std::string(text) + "' (choose one of: " + choices + ")");
}

}  // namespace

std::string to_string(Precision value) { return name_of(kPrecisions, value); }
std::string to_string(MemoryFormat value) { return name_of(kMemoryFormats, value); }
std::string to_string(OptimizerKind value) { return name_of(kOptimizers, value); }
std::string to_string(NumericFormat value) { return name_of(kNumericFormats, value); }
std::string to_string(WorkloadKind value) { return name_of(kWorkloadKinds, value); }
std::string to_string(ImageDecode value) { return name_of(kImageDecodes, value); }

Precision parse_precision(std::string_view text, std::string_view option) {
  return parse(kPrecisions, text, option);
}
MemoryFormat parse_memory_format(std::string_view text, std::string_view option) {
  return parse(kMemoryFormats, text, option);
}
OptimizerKind parse_optimizer(std::string_view text, std::string_view option) {
  return parse(kOptimizers, text, option);
}
NumericFormat parse_numeric_format(std::string_view text, std::string_view option) {
  return parse(kNumericFormats, text, option);
}
WorkloadKind parse_workload_kind(std::string_view text, std::string_view option) {
  return parse(kWorkloadKinds, text, option);
}
ImageDecode parse_image_decode(std::string_view text, std::string_view option) {
  return parse(kImageDecodes, text, option);
}

std::vector<std::string> precision_names() { return all_names(kPrecisions); }
std::vector<std::string> memory_format_names() { return all_names(kMemoryFormats); }
std::vector<std::string> optimizer_names() { return all_names(kOptimizers); }
std::vector<std::string> numeric_format_names() { return all_names(kNumericFormats); }
std::vector<std::string> workload_kind_names() { return all_names(kWorkloadKinds); }

std::string to_string(Switch value) { return name_of(kSwitches, value); }

Switch parse_switch(std::string_view text, std::string_view option) {
  for (const auto& [value, name] : kSwitches) {
    if (text == name) return value;
  }
  throw ConfigError(std::string(option),
                    "unknown value '" + std::string(text) + "' (choose auto, on or off)");
}

}  // namespace gpuperf
