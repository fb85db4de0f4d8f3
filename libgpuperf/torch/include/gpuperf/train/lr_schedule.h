#pragma once
// Learning-rate schedules as functions of the step, for TrainStep::set_learning_rate():
//
//   gpuperf::WarmupCosine schedule{0.1, /*warmup_steps=*/500, /*total_steps=*/10000};
//   for (std::int64_t i = 0; i < 10000; ++i) {
//     step.set_learning_rate(schedule(i));
//     step(batch.input, batch.target);
//   }

#include <cstdint>

namespace gpuperf {

/// Linear warm-up from base_lr / warmup_steps to base_lr over the first warmup_steps steps, then
/// cosine annealing to min_lr at total_steps (and min_lr after it), as torch.optim's
/// LinearLR + CosineAnnealingLR chained.
struct WarmupCosine {
  double base_lr = 0;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 0;
  double min_lr = 0;

  /// The rate of step `step` (0-based). Throws ConfigError for a schedule that makes no sense
  /// (base_lr <= 0, total_steps <= warmup_steps, min_lr outside [0, base_lr]).
  [[nodiscard]] double operator()(std::int64_t step) const;
};

/// base_lr x gamma^floor(step / step_size), as torch.optim.lr_scheduler.StepLR.
struct StepDecay {
  double base_lr = 0;
  std::int64_t step_size = 1;
  double gamma = 0.1;

  /// The rate of step `step` (0-based); ConfigError for base_lr <= 0, step_size < 1, gamma <= 0.
  [[nodiscard]] double operator()(std::int64_t step) const;
};

}  // namespace gpuperf
