// "Will it fit?": the planner's ladder of strategies against the datasheet memory of each GPU.
// The plans do not depend on the GPU, so they are computed once and printed once; each GPU only
// compares their totals with its memory.
#include "gpuperf/advise/fit.h"

#include <cmath>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
namespace {

std::string model_text(const MemoryPlanRequest& r) {
  std::string text;
  if (!std::isnan(r.model.parameters)) {
    text = format_number(r.model.parameters, 12) + " parameters";
  } else {
    text = format_number(r.model.transformer->parameters(), 12) + " parameters (from the shape)";
  }
  if (r.model.transformer) {
    const TransformerShape& t = *r.model.transformer;
    text += ", transformer L " + std::to_string(t.layers) + ", h " + std::to_string(t.hidden) +
            ", a " + std::to_string(t.heads) + ", s " + std::to_string(t.sequence) + ", V " +
            std::to_string(t.vocab) + (t.flash_attention ? ", flash attention" : ", no flash");
  }
  return text;
}

}  // namespace

std::vector<StrategyPlan> strategy_ladder(const MemoryPlanRequest& request) {
  request.validate();
  std::vector<StrategyPlan> ladder;
  MemoryStrategy s = request.strategy;
  s.zero = ZeroStage::kNone;
  s.activation_checkpointing = false;
  s.offload_optimizer = false;
  auto rung = [&](std::string name) {
    MemoryPlanRequest r = request;
    r.strategy = s;
    ladder.push_back({std::move(name), s, plan_memory(r)});
  };
  rung(s.gpus > 1 ? "data parallel" : "one GPU");
  std::string base;
  if (s.gpus > 1) {
    // ZeRO-1 and -2 cost no more communication than data parallel's all-reduce; ZeRO-3 adds an
    // all-gather of the weights in backward (1.5x the traffic): cheapest first.
    for (ZeroStage z : {ZeroStage::kStage1, ZeroStage::kStage2, ZeroStage::kStage3}) {
      s.zero = z;
      rung(to_string(z));
    }
    base = "ZeRO-3 + ";
  }
  s.activation_checkpointing = true;
  rung(base + "checkpointing");
  s.offload_optimizer = true;
  rung(base + "checkpointing + offload");
  return ladder;
}

void FitRequest::validate() const { plan.validate(); }

FitAdvice advise_fit(const FitRequest& request, const SpecDatabase& db) {
  request.validate();
  FitAdvice advice;
  advice.ladder = strategy_ladder(request.plan);
  std::vector<const GpuSpec*> specs;
  if (!request.gpu.empty()) {
    specs.push_back(&db.resolve(request.gpu, "gpu"));
  } else {
    for (const auto& spec : db.gpus()) {
      if (!spec.reference_only || request.include_reference_only) specs.push_back(&spec);
    }
  }
  for (const GpuSpec* spec : specs) {
    GpuFit fit;
    fit.spec = spec;
    for (std::size_t i = 0; i < advice.ladder.size(); ++i) {
      const bool ok = advice.ladder[i].plan.total_bytes <= spec->memory_bytes;
      fit.fits.push_back(ok);
      if (ok && fit.needed < 0) fit.needed = static_cast<int>(i);
    }
    const double given = request.plan.strategy.host_link_bytes_per_s;
    const double link = given > 0 ? given : spec->pcie_bytes_per_s_per_direction();
    if (link > 0) {
      fit.offload_seconds_per_step = advice.ladder.back().plan.host_transfer_bytes_per_step / link;
    }
    advice.gpus.push_back(fit);
  }
  return advice;
}

void write_fit(std::ostream& out, const FitRequest& request, const FitAdvice& advice) {
  const MemoryPlanRequest& r = request.plan;
  const auto& ladder = advice.ladder;
  out << "Will it fit: " << model_text(r) << "; " << to_string(r.precision) << ", "
      << to_string(r.optimizer) << (r.fused_optimizer ? " (fused step)" : " (foreach step)")
      << ", micro-batch " << r.micro_batch << " per GPU, " << r.strategy.gpus << " GPU(s)\n";
  // The seeds' "80 GB for >10B parameters" is a claim about model states: say them first.
  const MemoryPlan& whole = ladder.front().plan;
  const double params =
      std::isnan(r.model.parameters) ? r.model.transformer->parameters() : r.model.parameters;
  double states = 0;
  for (const char* name : {"weights", "gradients", "master weights", "optimizer states"}) {
    states += whole.term(name).bytes;
  }
  out << "Model states (weights, gradients, master weights, optimizer states): "
      << format_number(states / params, 4) << " B/param = " << format_gb(states) << " on one GPU";
  if (r.strategy.gpus > 1) {
    out << "; " << format_gb(states / r.strategy.gpus) << " per GPU with ZeRO-3 over "
        << r.strategy.gpus << " GPUs";
  }
  out << "\n";
  for (const auto& note : whole.notes) out << "Note: " << note << "\n";

  out << "\nPer-GPU need by strategy (GB = 1e9 bytes):\n\n| term |";
  for (const auto& rung : ladder) out << " " << rung.name << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < ladder.size(); ++i) out << "---:|";
  out << "\n";
  for (std::size_t t = 0; t < ladder.front().plan.terms.size(); ++t) {
    out << "| " << ladder.front().plan.terms[t].name << " |";
    for (const auto& rung : ladder)
      out << " " << format_number(rung.plan.terms[t].bytes / 1e9, 4) << " |";
    out << "\n";
  }
  out << "| **total** |";
  for (const auto& rung : ladder)
    out << " **" << format_number(rung.plan.total_bytes / 1e9, 4) << "** |";
  out << "\n| dominant term |";
  for (const auto& rung : ladder) out << " " << rung.plan.dominant().name << " |";
  out << "\n| host memory per GPU |";
  for (const auto& rung : ladder)
    out << " " << format_number(rung.plan.host_bytes / 1e9, 4) << " |";
  out << "\n";

  out << "\nFits in the datasheet memory of each GPU:\n\n| GPU | memory GB |";
  for (const auto& rung : ladder) out << " " << rung.name << " |";
  out << " needed | offload host link s/step |\n|---|---:|";
  for (std::size_t i = 0; i < ladder.size(); ++i) out << "---|";
  out << "---|---:|\n";
  for (const auto& g : advice.gpus) {
    out << "| " << printable(g.spec->name) << " | " << format_number(g.spec->memory_bytes / 1e9, 4)
        << " |";
    for (const bool ok : g.fits) out << (ok ? " yes |" : " no |");
    out << " " << (g.needed < 0 ? std::string("none fits") : ladder[g.needed].name) << " | "
        << (std::isnan(g.offload_seconds_per_step) ? std::string("n/a")
                                                   : format_number(g.offload_seconds_per_step, 3))
        << " |\n";
  }
  const MemoryPlan& offload = ladder.back().plan;
  out << "\nOffload moves " << format_gb(offload.host_transfer_bytes_per_step)
      << " per GPU per step over the host link (gradients down, updated weights up), "
      << (r.strategy.host_link_bytes_per_s > 0
              ? "at the given " + format_number(r.strategy.host_link_bytes_per_s / 1e9, 4) + " GB/s"
              : std::string("at each GPU's datasheet PCIe x16 rate (a measured rate can be "
                            "given instead)"))
      << "; the host holds " << format_gb(offload.host_bytes) << " per GPU.\n";

  // Each term's formula where it is first used and wherever a later rung changes it.
  out << "\nHow each term is counted:\n";
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    out << "\n" << ladder[i].name << (i == 0 ? "" : " (terms that change)") << ":\n";
    bool changed = false;
    for (std::size_t t = 0; t < ladder[i].plan.terms.size(); ++t) {
      const MemoryTerm& term = ladder[i].plan.terms[t];
      if (i > 0 && term.reason == ladder[i - 1].plan.terms[t].reason) continue;
      out << "  - " << term.name << ": " << format_gb(term.bytes) << " = " << term.reason << "\n";
      changed = true;
    }
    if (!changed) out << "  (none)\n";
  }
}

}  // namespace gpuperf
