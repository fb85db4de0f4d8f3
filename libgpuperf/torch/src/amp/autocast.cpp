#include "gpuperf/amp/autocast.h"

#include <c10/core/DeviceType.h>

#include <string>

#include "compat.h"
#include "gpuperf/device/torch_choices.h"
#include "gpuperf/base/error.h"

namespace gpuperf {

bool AutocastGuard::supported(c10::DeviceType device, c10::ScalarType dtype) {
  if (device == c10::DeviceType::CUDA) return dtype == c10::kHalf || dtype == c10::kBFloat16;
  if (device == c10::DeviceType::CPU) {
    return dtype == c10::kBFloat16 || (dtype == c10::kHalf && compat::kCpuAutocastHalf);
  }
  return false;
}

AutocastGuard::AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled,
                             bool cache_enabled)
    : device_(device) {
  if (enabled && !supported(device, dtype)) {
    throw ConfigError(std::string("autocast to ") + c10::toString(dtype) + " on " +
                      c10::DeviceTypeName(device) + " is not supported by LibTorch " +
                      TORCH_VERSION);
  }
  previous_enabled_ = compat::autocast_enabled(device);
  previous_dtype_ = compat::autocast_dtype(device);
  previous_cache_enabled_ = at::autocast::is_autocast_cache_enabled();
  if (enabled) compat::set_autocast_dtype(device, dtype);
  compat::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_cache_enabled(cache_enabled);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  // As torch.autocast.__exit__: the outermost exit drops the cached casts of the weights.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast_enabled(device_, previous_enabled_);
  compat::set_autocast_dtype(device_, previous_dtype_);
  at::autocast::set_autocast_cache_enabled(previous_cache_enabled_);
}

void check_precision_supported(Precision precision, const c10::Device& device) {
  if (precision == Precision::kTf32 && !device.is_cuda()) {
    throw ConfigError("precision", "tf32",
                      "TF32 is a CUDA tensor-core mode; device is " + device.str());
  }
  if (uses_autocast(precision) &&
      !AutocastGuard::supported(device.type(), autocast_dtype(precision))) {
    throw ConfigError("precision", to_string(precision),
                      "not supported on " + device.str() + " by LibTorch " + TORCH_VERSION +
                          (device.is_cpu() ? " (its CPU autocast handles bf16 only)" : ""));
  }
}

}  // namespace gpuperf
