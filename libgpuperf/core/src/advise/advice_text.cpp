// The advisor's text printer, write_advice(): the workload, what the figures rest on, one table
// per evidence tier and each GPU's reasons. It only formats a ranking that advise() decided.
// It stays in advise/ because report/ sits below advise/ (docs/architecture.md), so a printer
// there cannot see GpuAdvice.
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuperf/advise/advisor.h"
#include "gpuperf/base/format.h"
#include "gpuperf/specs/efficiency.h"

namespace gpuperf {
namespace {

// The columns the tables show, decided once for the whole ranking.
struct Columns {
  std::string unit;        // "sample", or "token" for a parameter count without a sequence
  bool inference = false;  // latency column
  bool run = false;        // the run's hours and cost (epochs or tokens given)
  bool priced = false;     // price per GPU-hour and its basis
};

// When the default-table prices of `ranking` were read: "2026-09-25", or "2026-09-20 to
// 2026-09-25" for several dates; empty when no GPU is priced from the table.
std::string default_table_dates(const std::vector<GpuAdvice>& ranking) {
  std::string oldest;
  std::string newest;
  for (const auto& a : ranking) {
    if (!a.table_price) continue;
    if (oldest.empty() || a.table_price->date < oldest) oldest = a.table_price->date;
    if (newest.empty() || a.table_price->date > newest) newest = a.table_price->date;
  }
  return oldest == newest ? oldest : oldest + " to " + newest;
}

// The price and the run's columns appear when asked for (a price given or a run), and the price
// column whenever a default-table price stands beside other bases.
Columns columns_for(const AdvisorRequest& request, const std::string& table_dates) {
  const auto count = request.model.empty() ? std::nullopt : count_model(request.model);
  Columns c;
  c.unit = (!count && request.sequence_length == 0) ? "token" : "sample";
  c.inference = request.mode == WorkloadKind::kInference;
  c.run = !std::isnan(request.epochs) || !std::isnan(request.tokens);
  c.priced = c.run || !std::isnan(request.price_per_hour_usd) ||
             !request.price_per_hour_by_gpu.empty() || !table_dates.empty();
  return c;
}

// "Workload: train resnet50, bf16, sgd, batch 256 per GPU, 1 GPU(s)", and the budgets and run.
void write_workload(std::ostream& out, const AdvisorRequest& request) {
  const bool inference = request.mode == WorkloadKind::kInference;
  out << "Workload: " << to_string(request.mode) << " "
      << (request.model.empty() ? format_number(request.parameters, 6) + " parameters"
                                : request.model)
      << ", " << to_string(request.precision)
      << (inference ? "" : ", " + to_string(optimizer_for(request))) << ", batch "
      << (request.batch_size > 0 ? std::to_string(request.batch_size) : "unknown") << " per GPU, "
      << request.gpu_count << " GPU(s)";
  if (!std::isnan(request.budget_usd))
    out << ", budget " << format_fixed_or(request.budget_usd, 0) << " USD";
  if (!std::isnan(request.latency_budget_seconds)) {
    out << ", p99 latency budget " << format_ms(request.latency_budget_seconds);
  }
  if (!std::isnan(request.epochs))
    out << ", a run of " << format_number(request.epochs, 6) << " epochs";
  if (!std::isnan(request.tokens))
    out << ", a run of " << format_number(request.tokens, 6) << " tokens";
}

// What the throughputs rest on: the GPUs measured, else published figures, else datasheets.
void write_basis(std::ostream& out, const std::vector<GpuAdvice>& ranking, bool inference) {
  std::string measured_on;
  bool published = false;
  for (const auto& a : ranking) {
    if (a.throughput_basis == ThroughputBasis::kMeasured) {
      measured_on += (measured_on.empty() ? "" : ", ") + a.spec->name;
    }
    published = published || a.throughput_basis == ThroughputBasis::kPublished ||
                a.throughput_basis == ThroughputBasis::kMlperf;
  }
  out << "\nBasis: ";
  if (!measured_on.empty()) {
    out << "measured on " << measured_on
        << "; every other throughput is published or a datasheet estimate, labelled as such";
  } else if (published) {
    out << "no measured result for this workload; published figures where labelled, datasheet "
           "estimates elsewhere";
  } else {
    out << "datasheet figures only: no measured " << (inference ? "inference " : "")
        << "result matches this workload (advise() was given none), so every throughput below "
           "is an estimate"
        << (inference ? " and no latency is known" : "");
  }
}

void write_table_prices_note(std::ostream& out, const std::string& table_dates) {
  if (table_dates.empty()) return;
  out << "\nPrices: GPUs marked (table) are costed at the default table's on-demand rental "
         "prices, read "
      << table_dates
      << "; prices go stale and vary by provider and term (each GPU's cost basis names its "
         "source)";
}

const char* tier_title(EvidenceTier tier) {
  switch (tier) {
    case EvidenceTier::kMeasured:
      return "Measured on this workload (your results)";
    case EvidenceTier::kPublished:
      return "Published figures (PyTorch per GPU, gpuperf's stack but another setup: indicative, "
             "not comparable with a measurement)";
    case EvidenceTier::kMlperf:
      return "MLPerf figures (another stack: its own framework, optimizer, data pipeline and "
             "tuning; not comparable with PyTorch figures, never scaled to other GPUs)";
    case EvidenceTier::kEstimate:
      return "Datasheet estimates (scaled from a measured or PyTorch published figure by peak "
             "ratios, else a fraction of the peak)";
    case EvidenceTier::kUnusable:
      break;
  }
  return "Not usable for this workload (does not fit, misses the latency budget, or no figure)";
}

void write_table_header(std::ostream& out, const Columns& c) {
  out << "\n| rank | GPU | fits | memory need / have | fast link | " << c.unit
      << "s/s (all GPUs) | basis | " << (c.inference ? "p50 / p99 ms (batch) | " : "")
      << (c.priced ? "USD per GPU-h (basis) | " : "") << "USD per M " << c.unit << "s | "
      << (c.run ? "run h | run USD | " : "") << "J per " << c.unit << " | price USD |\n"
      << "|---:|---|---|---|---|---:|---|" << (c.inference ? "---|" : "")
      << (c.priced ? "---:|" : "") << "---:|" << (c.run ? "---:|---:|" : "") << "---:|---:|\n";
}

// "0.512 / 0.734 (8)" or "not measured", and " misses budget" when it does.
std::string latency_cell(const GpuAdvice& a) {
  std::string cell = a.measured_batch_size > 0
                         ? format_fixed_or(a.latency_p50 * 1e3, 3) + " / " +
                               format_fixed_or(a.latency_p99 * 1e3, 3) + " (" +
                               std::to_string(a.measured_batch_size) + ")"
                         : std::string("not measured");
  if (a.latency_status == LatencyStatus::kMissesBudget) {
    cell += " " + to_string(a.latency_status);
  }
  return cell;
}

std::string price_cell(const GpuAdvice& a) {
  const char* basis = "";
  switch (a.price_source) {
    case PriceSource::kGivenForGpu:
      basis = " (this GPU)";
      break;
    case PriceSource::kGivenForAll:
      basis = " (all GPUs)";
      break;
    case PriceSource::kDefaultTable:
      basis = " (table)";
      break;
    case PriceSource::kPurchase:
      basis = " (purchase)";
      break;
    case PriceSource::kNone:
      break;
  }
  return format_fixed_or(a.price_per_hour_usd, 2) + basis;
}

std::string fits_cell(const GpuAdvice& a) {
  if (a.fits) return "yes";
  return a.fits_sharded ? a.memory_strategy : std::string("no");
}

std::string link_cell(const GpuAdvice& a) {
  if (!a.fast_link_needed) return "-";
  return a.spec->link_bytes_per_s > 0 ? "needed, has " + a.spec->link_name
                                      : std::string("needed, none");
}

void write_row(std::ostream& out, int rank, const GpuAdvice& a, const Columns& c) {
  out << "| " << rank << " | " << a.spec->name << " | " << fits_cell(a) << " | "
      << format_gb(a.memory_need_bytes) << " / " << format_gb(a.spec->memory_bytes) << " | "
      << link_cell(a) << " | " << format_fixed_or(a.samples_per_second, 0) << " | "
      << (a.throughput_basis == ThroughputBasis::kNone ? "-" : to_string(a.throughput_basis))
      << " | ";
  if (c.inference) out << latency_cell(a) << " | ";
  if (c.priced) out << price_cell(a) << " | ";
  out << format_fixed_or(a.cost_usd_per_million, 3) << " | ";
  if (c.run)
    out << format_fixed_or(a.run_hours, 1) << " | " << format_fixed_or(a.run_cost_usd, 0) << " | ";
  out << format_fixed_or(a.joules_per_sample, 4) << " | "
      << (std::isnan(a.total_price_usd) ? std::string("?") : format_fixed_or(a.total_price_usd, 0))
      << (a.over_budget ? " (over budget)" : "") << " |\n";
}

// One table per evidence tier: a skimming reader never compares a measurement with a
// published or estimated figure in one column without seeing which is which.
void write_tables(std::ostream& out, const std::vector<GpuAdvice>& ranking, const Columns& c) {
  int rank = 1;
  std::optional<EvidenceTier> current;
  for (const auto& a : ranking) {
    const EvidenceTier tier = evidence_tier(a);
    if (tier != current) {
      out << (current ? "\n### " : "\n\n### ") << tier_title(tier) << "\n";
      write_table_header(out, c);
      current = tier;
    }
    write_row(out, rank++, a, c);
  }
}

void write_reasons(std::ostream& out, const std::vector<GpuAdvice>& ranking) {
  out << "\nReasons:\n";
  for (const auto& a : ranking) {
    out << "\n" << a.spec->name << " (" << a.spec->id << "; source: " << a.spec->source << ")\n";
    for (const auto& line : a.reasons) out << "  - " << line << "\n";
  }
}

}  // namespace

void write_advice(std::ostream& out, const AdvisorRequest& request,
                  const std::vector<GpuAdvice>& ranking) {
  const std::string table_dates = default_table_dates(ranking);
  const Columns columns = columns_for(request, table_dates);
  write_workload(out, request);
  write_basis(out, ranking, columns.inference);
  write_table_prices_note(out, table_dates);
  write_tables(out, ranking, columns);
  write_reasons(out, ranking);
}

}  // namespace gpuperf
