#pragma once
// run_training()'s checks of a run against its device, without running it (internal): the
// data-parallel launcher says a bad setting once, before it starts the ranks.

#include "gpuperf/train/training_run.h"

namespace gpuperf::detail {

/// Validates `run` and resolves its device-dependent choices as run_training() does (precision
/// support, fused optimizer, CUDA graph, kernel fusion), throwing the same ConfigError; builds
/// nothing and runs nothing.
void check_training_run(const TrainingRun& run);

}  // namespace gpuperf::detail
