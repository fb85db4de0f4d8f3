#include "gpuperf/models/weights_file.h"

#include <nlohmann/json.hpp>
#include <torch/utils.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"

namespace gpuperf {
namespace {

// safetensors' dtype names.
const std::vector<std::pair<const char*, torch::ScalarType>>& dtype_names() {
  static const std::vector<std::pair<const char*, torch::ScalarType>> names = {
      {"F64", torch::kDouble},    {"F32", torch::kFloat}, {"F16", torch::kHalf},
      {"BF16", torch::kBFloat16}, {"I64", torch::kLong},  {"I32", torch::kInt},
      {"I16", torch::kShort},     {"I8", torch::kChar},   {"U8", torch::kByte},
      {"BOOL", torch::kBool}};
  return names;
}

// The header may not be larger than this (safetensors' own limit is 100 MB).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

[[noreturn]] void bad_file(const std::string& path, const std::string& problem) {
  throw IoError("safetensors file '" + path + "': " + problem);
}

[[noreturn]] void bad_tensor(const std::string& path, const std::string& name,
                             const std::string& problem) {
  bad_file(path, "tensor '" + name + "' " + problem);
}

std::string read_whole(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    bad_file(path, "cannot be read: " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) bad_file(path, "is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_file(path, "cannot be opened");
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.gcount() != static_cast<std::streamsize>(bytes.size()))
    bad_file(path, "was cut short while reading");
  return bytes;
}

}  // namespace

NamedTensors read_safetensors(const std::string& path) {
  const std::string bytes = read_whole(path);
  if (bytes.size() < 8) bad_file(path, "is shorter than its 8-byte header length");
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) {
    header_bytes =
        (header_bytes << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  }
  if (header_bytes > kMaxHeaderBytes || header_bytes > bytes.size() - 8) {
    bad_file(path, "header length " + std::to_string(header_bytes) + " is larger than the file");
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8,
                                   bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_bytes));
  } catch (const nlohmann::json::exception& e) {
    bad_file(path, std::string("header is not JSON: ") + e.what());
  }
  if (!header.is_object()) bad_file(path, "header is not a JSON object");
  const std::size_t data_begin = 8 + static_cast<std::size_t>(header_bytes);
  const std::size_t data_size = bytes.size() - data_begin;
  NamedTensors tensors;
  for (const auto& item : header.items()) {
    // Not a structured binding: a lambda cannot capture one in C++17.
    const std::string& name = item.key();
    const nlohmann::json& entry = item.value();
    if (name == "__metadata__") continue;
    const auto fail = [&](const std::string& problem) { bad_tensor(path, name, problem); };
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets")) {
      fail("needs dtype, shape and data_offsets");
    }
    const auto& dtype = entry["dtype"];
    torch::ScalarType type = torch::kFloat;
    bool known = false;
    for (const auto& [n, t] : dtype_names()) {
      if (dtype.is_string() && dtype.get<std::string>() == n) type = t, known = true;
    }
    if (!known) fail("has an unknown dtype " + dtype.dump());
    std::vector<std::int64_t> shape;
    std::uint64_t numel = 1;
    if (!entry["shape"].is_array()) fail("has a shape that is not a list");
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<std::uint64_t>() > (1ULL << 40))
        fail("has a bad dimension " + d.dump());
      const auto n = d.get<std::uint64_t>();
      if (n != 0 && numel > (std::numeric_limits<std::uint64_t>::max() >> 8) / n)
        fail("is too large");
      numel *= n;
      shape.push_back(static_cast<std::int64_t>(n));
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      fail("needs data_offsets [begin, end]");
    }
    const auto begin = offsets[0].get<std::uint64_t>();
    const auto end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data_size) fail("has data_offsets outside the file's data");
    const std::uint64_t expected = numel * c10::elementSize(type);
    if (end - begin != expected) {
      fail("holds " + std::to_string(end - begin) + " bytes, its shape and dtype need " +
           std::to_string(expected));
    }
    torch::Tensor t = torch::empty(shape, torch::TensorOptions().dtype(type));
    if (expected > 0) std::memcpy(t.data_ptr(), bytes.data() + data_begin + begin, expected);
    tensors.emplace(name, std::move(t));
  }
  return tensors;
}

void write_safetensors(const NamedTensors& tensors, const std::string& path) {
  nlohmann::json header = nlohmann::json::object();
  std::vector<torch::Tensor> ordered;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    const char* dtype = nullptr;
    for (const auto& [n, t] : dtype_names()) {
      if (t == tensor.scalar_type()) dtype = n;
    }
    if (dtype == nullptr) {
      throw ConfigError("write_safetensors: tensor '" + name + "' has dtype " +
                        std::string(c10::toString(tensor.scalar_type())) +
                        ", which safetensors has no name for");
    }
    torch::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
    const std::uint64_t size = static_cast<std::uint64_t>(t.numel()) * t.element_size();
    header[name] = {
        {"dtype", dtype}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + size}}};
    offset += size;
    ordered.push_back(std::move(t));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8,
              ' ');  // the data starts 8-byte aligned, as safetensors writes it
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<std::size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  bytes += text;
  for (const auto& t : ordered) {
    bytes.append(static_cast<const char*>(t.data_ptr()),
                 static_cast<std::size_t>(t.numel()) * t.element_size());
  }
  write_text_file_atomically(bytes, path);
}

NamedTensors named_tensors(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters())
    out.emplace(p.key(), p.value().detach().to(torch::kCPU));
  for (const auto& b : module.named_buffers())
    out.emplace(b.key(), b.value().detach().to(torch::kCPU));
  return out;
}

void load_named_tensors(torch::nn::Module& module, const NamedTensors& tensors) {
  std::map<std::string, torch::Tensor> targets;
  for (const auto& p : module.named_parameters()) targets.emplace(p.key(), p.value());
  for (const auto& b : module.named_buffers()) targets.emplace(b.key(), b.value());
  for (const auto& [name, target] : targets) {
    const auto found = tensors.find(name);
    if (found == tensors.end())
      throw ConfigError("load_named_tensors: no tensor for '" + name + "'");
    if (found->second.sizes() != target.sizes()) {
      throw ConfigError("load_named_tensors: '" + name + "' has shape " +
                        c10::str(found->second.sizes()) + " in the file, " +
                        c10::str(target.sizes()) + " in the model");
    }
  }
  for (const auto& [name, tensor] : tensors) {
    if (targets.count(name) == 0) {
      throw ConfigError("load_named_tensors: the model has no parameter or buffer '" + name + "'");
    }
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, target] : targets) target.copy_(tensors.at(name));
}

}  // namespace gpuperf
