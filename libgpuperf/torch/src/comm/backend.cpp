#include "gpuperf/comm/backend.h"

#include "gpuperf/base/error.h"

namespace gpuperf {

std::string to_string(C10dBackend backend) {
  switch (backend) {
    case C10dBackend::kNccl:
      return "nccl";
    case C10dBackend::kGloo:
      return "gloo";
    default:
      return "auto";
  }
}

C10dBackend parse_c10d_backend(const std::string& text, const std::string& option) {
  if (text == "auto") return C10dBackend::kAuto;
  if (text == "nccl") return C10dBackend::kNccl;
  if (text == "gloo") return C10dBackend::kGloo;
  throw ConfigError(option, "unknown value '" + text + "' (choose auto, nccl or gloo)");
}

C10dBackend resolve_c10d_backend(C10dBackend backend, const c10::Device& device) {
  if (backend != C10dBackend::kAuto) return backend;
  return device.is_cuda() ? C10dBackend::kNccl : C10dBackend::kGloo;
}

}  // namespace gpuperf
