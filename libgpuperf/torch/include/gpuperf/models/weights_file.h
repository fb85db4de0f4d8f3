#pragma once
// Named tensors in a safetensors file (the layout of Hugging Face's safetensors: an 8-byte
// little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, the raw
// bytes), so that a model can start from weights another framework wrote, and PyTorch can read
// what gpuperf trained:
//
//   // Python: torchvision's ResNet-50 state_dict written by benchmarks/python/equivalence.py
//   auto tensors = gpuperf::read_safetensors("resnet50.safetensors");
//   gpuperf::ResNet model(gpuperf::ResNetOptions::resnet50());
//   gpuperf::load_named_tensors(*model, tensors);   // torchvision's names are gpuperf's
//   gpuperf::write_safetensors(gpuperf::named_tensors(*model), "after.safetensors");

#include <torch/nn/module.h>
#include <torch/types.h>

#include <map>
#include <string>

namespace gpuperf {

/// Tensors by name, on the CPU.
using NamedTensors = std::map<std::string, torch::Tensor>;

/// Reads every tensor of a safetensors file (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL),
/// on the CPU. IoError naming the file and the tensor when the file cannot be read or does not
/// hold what its header says (offsets outside the data, a size that is not the shape's, an
/// unknown dtype, a header that is not JSON).
[[nodiscard]] NamedTensors read_safetensors(const std::string& path);

/// Writes `tensors` (moved to the CPU, made contiguous) as a safetensors file, atomically.
/// IoError when it cannot be written; ConfigError for a dtype the format has no name for.
void write_safetensors(const NamedTensors& tensors, const std::string& path);

/// Every parameter and buffer of `module` by its full name ("layer1.0.conv1.weight"), detached,
/// on the CPU.
[[nodiscard]] NamedTensors named_tensors(const torch::nn::Module& module);

/// Copies `tensors` into the parameters and buffers of `module` with the same names (converted
/// to each one's dtype and device). ConfigError naming the first parameter or buffer without a
/// tensor, the first tensor without a parameter or buffer, or a shape that differs: a file of
/// another model never loads in part.
void load_named_tensors(torch::nn::Module& module, const NamedTensors& tensors);

}  // namespace gpuperf
