#pragma once
// "Will it fit?" for the GPUs of the datasheet database: the memory planner's per-GPU need under
// a ladder of strategies, cheapest first (data parallel, ZeRO-1, ZeRO-2, ZeRO-3, + activation
// checkpointing, + CPU offload of the optimizer), against each GPU's datasheet memory, and the
// first strategy that fits.
//
//   gpuperf::FitRequest request;
//   request.plan.model.parameters = 10e9;
//   request.plan.strategy.gpus = 8;
//   const auto fits = gpuperf::advise_fit(request, db);
//   gpuperf::write_fit(std::cout, request, fits);
//   // 10e9 parameters, AMP bf16 Adam: 160 GB of model states; on 8 x 80 GB, ZeRO-1 fits.

#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "gpuperf/plan/memory_plan.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {

/// What to place, on how many GPUs, and which GPUs to judge.
struct FitRequest {
  /// The model, precision, optimizer, micro-batch, overheads and `strategy.gpus`; the ladder
  /// sets the strategy's ZeRO stage, checkpointing and offload itself.
  MemoryPlanRequest plan;
  /// A datasheet GPU (id, name or device name); empty: every entry.
  std::string gpu;
  /// Also judge entries marked reference_only.
  bool include_reference_only = false;

  /// Throws ConfigError naming the first bad field of `plan` (MemoryPlanRequest::validate()).
  void validate() const;
};

/// One rung of the strategy ladder and its plan.
struct StrategyPlan {
  std::string name;         ///< "data parallel", "ZeRO-1", ..., "+ checkpointing", "+ offload"
  MemoryStrategy strategy;  ///< the strategy of this rung
  MemoryPlan plan;          ///< its per-GPU plan
};

/// The strategies tried, cheapest first: data parallel, then with more than one GPU ZeRO-1, -2
/// and -3, then the last of those with activation checkpointing, then also with the optimizer
/// offloaded to the host. Throws ConfigError for an invalid request.
[[nodiscard]] std::vector<StrategyPlan> strategy_ladder(const MemoryPlanRequest& request);

/// One GPU's answer.
struct GpuFit {
  const GpuSpec* spec = nullptr;  ///< the datasheet entry judged
  std::vector<bool> fits;         ///< per rung of the ladder: total <= datasheet memory
  int needed = -1;                ///< the first rung that fits; -1: none does
  /// Offload's host-link time per step on this GPU's datasheet PCIe link (or the request's
  /// bandwidth, when given); NaN when unknown.
  double offload_seconds_per_step = std::numeric_limits<double>::quiet_NaN();
};

/// Everything advise_fit() decided.
struct FitAdvice {
  std::vector<StrategyPlan> ladder;  ///< the strategies tried, cheapest first
  std::vector<GpuFit> gpus;          ///< in datasheet order
};

/// The ladder judged on every datasheet GPU (or `request.gpu` alone; ConfigError naming the
/// field `gpu` when it is unknown).
[[nodiscard]] FitAdvice advise_fit(const FitRequest& request, const SpecDatabase& db);

/// Prints the per-strategy terms, one table of GPUs (fits per strategy and the one needed) and
/// how each term was counted.
void write_fit(std::ostream& out, const FitRequest& request, const FitAdvice& advice);

}  // namespace gpuperf
