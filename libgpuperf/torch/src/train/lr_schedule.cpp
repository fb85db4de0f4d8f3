#include "gpuperf/train/lr_schedule.h"

#include <cmath>
#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf {

double WarmupCosine::operator()(std::int64_t step) const {
  if (!(base_lr > 0) || warmup_steps < 0 || total_steps <= warmup_steps || !(min_lr >= 0) ||
      min_lr > base_lr || step < 0) {
    throw ConfigError(
        "WarmupCosine: needs base_lr > 0, 0 <= warmup_steps < total_steps, "
        "0 <= min_lr <= base_lr and step >= 0; got base_lr " +
        std::to_string(base_lr) + ", warmup " + std::to_string(warmup_steps) + ", total " +
        std::to_string(total_steps) + ", min_lr " + std::to_string(min_lr) + ", step " +
        std::to_string(step));
  }
  if (step < warmup_steps) {
    return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  }
  if (step >= total_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  return min_lr + 0.5 * (base_lr - min_lr) * (1 + std::cos(M_PI * progress));
}

double StepDecay::operator()(std::int64_t step) const {
  if (!(base_lr > 0) || step_size < 1 || !(gamma > 0) || step < 0) {
    throw ConfigError(
        "StepDecay: needs base_lr > 0, step_size >= 1, gamma > 0 and step >= 0; "
        "got base_lr " +
        std::to_string(base_lr) + ", step_size " + std::to_string(step_size) + ", gamma " +
        std::to_string(gamma) + ", step " + std::to_string(step));
  }
  const std::int64_t decays = step / step_size;  // whole periods only, as torch's StepLR
  return base_lr * std::pow(gamma, static_cast<double>(decays));
}

}  // namespace gpuperf
