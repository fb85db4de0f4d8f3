#pragma once
// The shared vocabulary of runs: precision, numeric format, workload kind, memory format,
// optimizer and auto/on/off switches, parsed from and printed as the strings that the programs and
// the JSON results use.

#include <string>
#include <string_view>
#include <vector>

namespace gpuperf {

/// Numeric precision of a training step.
enum class Precision {
  kFp32,  ///< fp32, TF32 disallowed
  kTf32,  ///< fp32 storage, TF32 tensor-core matmuls and convolutions allowed
  kFp16,  ///< autocast to fp16 with a GradScaler
  kBf16,  ///< autocast to bf16, no scaling needed
};

/// Numeric format of a workload's math: the training precisions, and the 8-bit formats that
/// inference (not training) may also run in.
enum class NumericFormat { kFp32, kTf32, kFp16, kBf16, kInt8, kFp8 };

/// What a workload runs: training steps, or inference (forward passes only).
enum class WorkloadKind { kTrain, kInference };

/// Layout of 4-D activations and weights.
enum class MemoryFormat { kContiguous, kChannelsLast };

/// Optimizer of a training step.
enum class OptimizerKind {
  kAdam,   ///< the seed's: Adam, lr 1e-3
  kSgd,    ///< SGD with momentum (the usual ResNet-50 recipe)
  kAdamW,  ///< Adam with decoupled weight decay
};

/// A feature that a run may use: kAuto lets the run decide from the device (and records what it
/// chose), kOn demands it (an error where it cannot run), kOff refuses it.
enum class Switch { kAuto, kOn, kOff };

/// Where an input pipeline decodes JPEG files.
enum class ImageDecode {
  kAuto,  ///< the GPU for a CUDA device when the build has nvJPEG, else the CPU
  kCpu,   ///< libjpeg-turbo on the loader's threads
  kGpu,   ///< nvJPEG on the device (a CUDA device and a build with nvJPEG)
};

[[nodiscard]] std::string to_string(Precision value);
[[nodiscard]] std::string to_string(MemoryFormat value);
[[nodiscard]] std::string to_string(OptimizerKind value);
[[nodiscard]] std::string to_string(Switch value);
[[nodiscard]] std::string to_string(NumericFormat value);
[[nodiscard]] std::string to_string(WorkloadKind value);
[[nodiscard]] std::string to_string(ImageDecode value);

/// Parses "fp32", "tf32", "fp16", "bf16"; throws ConfigError naming `option` and the value.
[[nodiscard]] Precision parse_precision(std::string_view text,
                                        std::string_view option = "precision");
/// Parses "contiguous", "channels_last".
[[nodiscard]] MemoryFormat parse_memory_format(std::string_view text,
                                               std::string_view option = "memory-format");
/// Parses "adam", "sgd", "adamw".
[[nodiscard]] OptimizerKind parse_optimizer(std::string_view text,
                                            std::string_view option = "optimizer");

/// Parses "fp32", "tf32", "fp16", "bf16", "int8", "fp8"; throws ConfigError naming `option`.
[[nodiscard]] NumericFormat parse_numeric_format(std::string_view text,
                                                 std::string_view option = "precision");
/// Parses "train", "inference"; throws ConfigError naming `option` and the value.
[[nodiscard]] WorkloadKind parse_workload_kind(std::string_view text,
                                               std::string_view option = "mode");
/// Parses "auto", "cpu", "gpu"; throws ConfigError naming `option` and the value.
[[nodiscard]] ImageDecode parse_image_decode(std::string_view text,
                                             std::string_view option = "decode");
/// fp16 or bf16: two bytes per value.
[[nodiscard]] constexpr bool is_16_bit(NumericFormat value) {
  return value == NumericFormat::kFp16 || value == NumericFormat::kBf16;
}
/// int8 or fp8: one byte per value, inference only.
[[nodiscard]] constexpr bool is_8_bit(NumericFormat value) {
  return value == NumericFormat::kInt8 || value == NumericFormat::kFp8;
}

/// Parses "auto", "on", "off"; throws ConfigError naming `option`: "unknown value '<text>' (choose
/// auto, on or off)".
[[nodiscard]] Switch parse_switch(std::string_view text, std::string_view option);
/// A switch resolved against what the device allows: kOn -> true, kOff -> false, kAuto ->
/// `automatic`.
[[nodiscard]] inline bool resolve_switch(Switch value, bool automatic) {
  return value == Switch::kOn || (value == Switch::kAuto && automatic);
}

/// The accepted spellings, for help texts.
[[nodiscard]] std::vector<std::string> precision_names();
[[nodiscard]] std::vector<std::string> memory_format_names();
[[nodiscard]] std::vector<std::string> optimizer_names();
[[nodiscard]] std::vector<std::string> numeric_format_names();
[[nodiscard]] std::vector<std::string> workload_kind_names();

}  // namespace gpuperf
