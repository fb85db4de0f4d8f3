#pragma once
// How TrainStep makes gradients agree across data-parallel replicas, without knowing how: the
// data-parallel layer (gpuperf/distributed/data_parallel.h) implements it over c10d.
//
//   step.set_gradient_sync(std::make_shared<gpuperf::DataParallelSync>(step.module(), group));
//   step(x, y);  // backward -> sync.after_backward() -> unscale -> optimizer step

#include <string>

namespace gpuperf {

/// Called by TrainStep around backward. Implementations may start reductions from gradient hooks
/// while backward runs and finish them in after_backward().
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  /// At the start of each step: it runs `micro_batches` backward passes (gradient accumulation)
  /// before after_backward(); gradients are complete only after the last of them.
  virtual void begin_step(int micro_batches) { (void)micro_batches; }
  /// Right after backward, before unscaling, clipping and the optimizer step: when it returns,
  /// every parameter's gradient holds the mean over the replicas (in stream order on a GPU).
  virtual void after_backward() = 0;
  /// Empty when the sync may run inside CUDA-graph capture; otherwise why not (the step then
  /// runs eagerly and says so).
  [[nodiscard]] virtual std::string capture_unsupported_reason() const { return ""; }
};

}  // namespace gpuperf
