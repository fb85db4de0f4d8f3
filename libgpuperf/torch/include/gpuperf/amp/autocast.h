#pragma once
// RAII autocast, like Python's `with torch.autocast(device_type, dtype)`:
//
//   {
//     gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kHalf);
//     loss = criterion(model(input), target);
//   }  // previous state restored; the cast-weight cache cleared when the outermost guard exits
//
// Clearing the cache matters: autocast caches fp16/bf16 copies of fp32 weights, and a cache that
// outlives the optimizer step keeps serving the old weights.

#include <c10/core/DeviceType.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "gpuperf/base/choices.h"

namespace gpuperf {

/// Enables autocast for one device type while alive and restores the previous state on exit.
class AutocastGuard {
 public:
  /// `device` is CUDA (fp16 or bf16) or CPU (bf16; fp16 too on LibTorch >= 2.4).
  /// With `enabled` false the guard disables autocast for its scope. `cache_enabled` false stops
  /// autocast caching cast weights, as CUDA-graph capture requires. Throws ConfigError for other
  /// devices or dtypes.
  AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true,
                bool cache_enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

  /// Whether this LibTorch can autocast `device` to `dtype`.
  [[nodiscard]] static bool supported(c10::DeviceType device, c10::ScalarType dtype);

 private:
  c10::DeviceType device_;
  bool previous_enabled_;
  c10::ScalarType previous_dtype_;
  bool previous_cache_enabled_;
};

/// Checks that the precision can run on the device with this LibTorch (TF32 needs CUDA; fp16 and
/// bf16 need an autocast for the device); throws ConfigError naming "precision" otherwise.
void check_precision_supported(Precision precision, const c10::Device& device);

}  // namespace gpuperf
