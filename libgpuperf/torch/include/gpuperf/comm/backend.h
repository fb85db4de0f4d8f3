#pragma once
// The c10d backend that carries collectives, one name for the data-parallel process group
// (distributed/) and the collective microbenchmarks (micro/) alike.
//
//   gpuperf::C10dBackend b = gpuperf::parse_c10d_backend("auto", "ProcessGroupOptions::backend");
//   b = gpuperf::resolve_c10d_backend(b, torch::kCUDA);  // kNccl

#include <c10/core/Device.h>

#include <string>

namespace gpuperf {

/// Which c10d backend carries the collectives.
enum class C10dBackend {
  kAuto,  ///< NCCL for CUDA devices, Gloo for the CPU
  kNccl,
  kGloo,
};

/// "auto", "nccl", "gloo".
[[nodiscard]] std::string to_string(C10dBackend backend);

/// Parses "auto", "nccl", "gloo"; ConfigError naming `option` and the value otherwise.
[[nodiscard]] C10dBackend parse_c10d_backend(const std::string& text, const std::string& option);

/// `backend` with kAuto made concrete for tensors on `device`: NCCL for CUDA, Gloo otherwise.
[[nodiscard]] C10dBackend resolve_c10d_backend(C10dBackend backend, const c10::Device& device);

}  // namespace gpuperf
