#pragma once
// The GPU advisor: ranks the GPUs of the spec database for a workload and says why, line by
// line, so a person can check every step (memory, link, throughput, cost, energy).
//
//   gpuperf::AdvisorRequest request;
//   request.model = "resnet50";
//   request.precision = gpuperf::NumericFormat::kBf16;
//   request.batch_size = 256;
//   auto ranking = gpuperf::advise(request, db, measured_runs, published);
//   gpuperf::write_advice(std::cout, request, ranking);
//
// Inference: measured inference results (gpuperf.inference/1 to /3) give each GPU's throughput
// at the best batch size whose p99 per-call latency fits the budget:
//
//   request.mode = gpuperf::WorkloadKind::kInference;
//   request.latency_budget_seconds = 5e-3;
//   auto ranking = gpuperf::advise_with(request, db, gpuperf::load_results(files), published);
//
// A run's time and cost at each GPU's own rental price (the others at one price for all):
//
//   request.price_per_hour_by_gpu = {{"h100-sxm5-80gb", 2.49}, {"H200 SXM 141GB", 3.5}};
//   request.price_per_hour_usd = 1.2;
//   request.epochs = 90;  // image models: ImageNet-1k epochs; LMs: request.tokens = 2e12
//
// GPUs given no price take the default table's dated on-demand price where it has one (pass no
// table to keep the purchase-price basis):
//
//   const auto prices = gpuperf::load_rental_prices(
//       gpuperf::find_data_file("gpu_rental_prices.json"), db);
//   auto ranking = gpuperf::advise_with(request, db, results, published, prices);

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuperf/base/choices.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/rental_prices.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf {

/// The workload to place on a GPU.
struct AdvisorRequest {
  /// A counted model ("simple", "resnet50"), or empty with `parameters` set.
  std::string model;
  /// Trainable parameters; required without a counted model, overrides the model's count.
  double parameters = std::numeric_limits<double>::quiet_NaN();
  WorkloadKind mode = WorkloadKind::kTrain;
  /// fp32, tf32, fp16, bf16; int8 and fp8 in inference only.
  NumericFormat precision = NumericFormat::kBf16;
  /// Train: adam, adamw (8 B/param), sgd (4 B/param momentum); nullopt: the model's usual one
  /// (optimizer_for()).
  std::optional<OptimizerKind> optimizer;
  std::int64_t batch_size = 0;  ///< per GPU; 0 when unknown
  /// Tokens per sample for a parameter-count model: FLOPs per sample = 6 (train) or 2
  /// (inference) x parameters x sequence_length. 0: work is counted per token.
  std::int64_t sequence_length = 0;
  /// Activation memory per GPU in bytes when the caller knows it (overrides the estimate).
  double activation_bytes = std::numeric_limits<double>::quiet_NaN();
  /// For all GPUs: their purchase price, or with a run and a rental price the run's cost; NaN:
  /// none.
  double budget_usd = std::numeric_limits<double>::quiet_NaN();
  int gpu_count = 1;
  /// Rental price per GPU-hour for every GPU not in price_per_hour_by_gpu (NaN: the default
  /// table's price where advise_with() was given one for the GPU, else the purchase price written
  /// off over 3 years).
  double price_per_hour_usd = std::numeric_limits<double>::quiet_NaN();
  /// Rental price per GPU-hour (USD, > 0) of single GPUs, keyed by datasheet id, name or device
  /// name (as SpecDatabase::resolve() matches them); two keys may not name one entry.
  std::map<std::string, double> price_per_hour_by_gpu;
  /// Train, a counted image model: the run's length in ImageNet-1k epochs of
  /// kImageNet1kTrainImages images each (NaN: no run). Exclusive with `tokens`.
  double epochs = std::numeric_limits<double>::quiet_NaN();
  /// Train, a parameter-count model: the run's length in tokens, samples = tokens /
  /// sequence_length (tokens themselves without a sequence length); NaN: no run.
  double tokens = std::numeric_limits<double>::quiet_NaN();
  /// Fraction of the datasheet peak assumed when nothing measured or published exists.
  double assumed_utilization = 0.3;
  /// Also rank entries marked reference_only (not measurable with gpuperf).
  bool include_reference_only = false;
  /// Inference only: the largest p99 per-call latency allowed, seconds (NaN: no budget). Checked
  /// against measured results only: a datasheet says nothing about latency.
  double latency_budget_seconds = std::numeric_limits<double>::quiet_NaN();
  /// Train: host CPU cores decoding JPEG files per GPU. With a run of this workload measured on
  /// files (TrainingRun::data: its loader's images per second per busy core), each GPU's rate is
  /// capped at cores x that rate x GPUs, and the reasons say whether the input keeps up. NaN: the
  /// measured run's own thread count.
  double host_cores_per_gpu = std::numeric_limits<double>::quiet_NaN();

  /// Throws ConfigError naming the first bad field and its value.
  void validate() const;
};

/// Memory a workload needs on one GPU, in bytes, each part stated.
struct MemoryEstimate {
  double weights = 0;
  double gradients = 0;
  double optimizer_state = 0;
  double activations = std::numeric_limits<double>::quiet_NaN();  ///< NaN: not estimated
  double reserve = 0;  ///< CUDA context, allocator slack, workspaces
  /// Sum of the parts (activations counted as 0 when NaN).
  [[nodiscard]] double total() const;
};

/// Where the price per GPU-hour of a GPU's cost figures comes from.
enum class PriceSource {
  kNone,          ///< no price: no cost figures
  kGivenForGpu,   ///< AdvisorRequest::price_per_hour_by_gpu
  kGivenForAll,   ///< AdvisorRequest::price_per_hour_usd
  kDefaultTable,  ///< the default table's on-demand rental price (RentalPrice)
  kPurchase,      ///< the datasheet's purchase price over 3 years of 24/7 use, plus TDP energy
};

// The advisor's own result vocabulary. No other module writes or reads these: efficiency's
// power_basis ("measured", "TDP", "power limit") is a sibling with other values and spellings, so
// they live here, beside PriceSource, rather than in base/choices.h.

/// What a GPU's throughput figure rests on.
enum class ThroughputBasis {
  kNone,       ///< no figure
  kMeasured,   ///< a result measured on this GPU for this workload
  kPublished,  ///< a published PyTorch per-GPU figure
  kMlperf,     ///< an MLPerf submission's figure
  kEstimate,   ///< scaled by datasheet peaks, or a fraction of the peak
};

/// Where a GPU's energy per unit of work comes from.
enum class EnergyBasis {
  kNone,         ///< no figure
  kMeasured,     ///< the measured run's telemetry
  kTdpEstimate,  ///< the datasheet TDP over the throughput
};

/// A latency budget checked against a GPU's measured per-call latency.
enum class LatencyStatus {
  kNoBudget,      ///< the request gives no latency budget
  kMeetsBudget,   ///< a measured batch size's p99 fits the budget
  kMissesBudget,  ///< measured, and no batch size's p99 fits it
  kNotMeasured,   ///< a budget, but no measured latency on this GPU
};

/// "measured", "published", "MLPerf", "estimate"; "" for kNone.
[[nodiscard]] std::string to_string(ThroughputBasis value);
/// "measured", "estimate: TDP"; "" for kNone.
[[nodiscard]] std::string to_string(EnergyBasis value);
/// "meets budget", "misses budget", "not measured"; "" for kNoBudget.
[[nodiscard]] std::string to_string(LatencyStatus value);

/// The advisor's view of one GPU.
// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding): fields in the order they are decided
struct GpuAdvice {
  const GpuSpec* spec = nullptr;
  /// The need of one unsharded replica, part by part (the advisor's own count).
  MemoryEstimate memory;
  bool fits = false;          ///< everything fits on each GPU (data parallel)
  bool fits_sharded = false;  ///< model states fit only when sharded across gpu_count GPUs
  /// Bytes per GPU under `memory_strategy`: memory.total() on one GPU; with more, the memory
  /// planner's per-GPU total (plus the reserve) of the first strategy that fits, or of the last
  /// tried when none does.
  double memory_need_bytes = std::numeric_limits<double>::quiet_NaN();
  /// "one GPU", "data parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3" (training), "weights sharded"
  /// (inference).
  std::string memory_strategy;
  bool fast_link_needed = false;
  double samples_per_second = std::numeric_limits<double>::quiet_NaN();  ///< all GPUs together
  ThroughputBasis throughput_basis = ThroughputBasis::kNone;
  double price_per_hour_usd = std::numeric_limits<double>::quiet_NaN();  ///< per GPU, as used
  PriceSource price_source = PriceSource::kNone;  ///< where price_per_hour_usd comes from
  /// kDefaultTable: the table's entry (provider, date, source); nullopt otherwise.
  std::optional<RentalPrice> table_price;
  double cost_usd_per_million = std::numeric_limits<double>::quiet_NaN();
  /// The requested run (epochs or tokens) on all gpu_count GPUs: wall-clock hours, and hours x
  /// gpu_count x price_per_hour_usd; NaN without a run, a throughput or a price.
  double run_hours = std::numeric_limits<double>::quiet_NaN();
  double run_cost_usd = std::numeric_limits<double>::quiet_NaN();
  double joules_per_sample = std::numeric_limits<double>::quiet_NaN();
  EnergyBasis energy_basis = EnergyBasis::kNone;
  double total_price_usd = std::numeric_limits<double>::quiet_NaN();  ///< purchase, all GPUs
  /// Over the budget: the run's cost at a rental price (given or the default table's) when a run
  /// is given, else the purchase price of all GPUs.
  bool over_budget = false;
  /// Inference with measured results: the batch size whose throughput is quoted, and its
  /// per-call latency (seconds); 0 and NaN when not measured on this GPU.
  std::int64_t measured_batch_size = 0;
  double latency_p50 = std::numeric_limits<double>::quiet_NaN();
  double latency_p99 = std::numeric_limits<double>::quiet_NaN();
  LatencyStatus latency_status = LatencyStatus::kNoBudget;
  std::vector<std::string> reasons;  ///< one per line, in the order they were decided
};

/// What a GPU's throughput rests on; the ranking keeps the tiers apart, in this order, so that a
/// published figure, an MLPerf submission's or a datasheet scaling never outranks a measurement,
/// and figures of different software stacks are never ranked against each other.
enum class EvidenceTier {
  kMeasured,   ///< a result measured on this GPU for this workload
  kPublished,  ///< a published PyTorch per-GPU figure (gpuperf's stack, another setup)
  kMlperf,     ///< an MLPerf submission's figure only (another stack, heavily tuned)
  kEstimate,   ///< scaled by datasheet peaks from a measured or PyTorch published figure
  kUnusable,   ///< does not fit, misses the latency budget, or has no throughput at all
};

/// The tier of `advice`.
[[nodiscard]] EvidenceTier evidence_tier(const GpuAdvice& advice);

/// The optimizer the request trains with: its own, else the model's usual one (SGD with
/// momentum for resnet50, as torchvision's and MLPerf's reference recipes train it; Adam
/// otherwise).
[[nodiscard]] OptimizerKind optimizer_for(const AdvisorRequest& request);

/// Ranks every (non reference-only) GPU of `db`: by evidence tier (measured, published, MLPerf,
/// estimate, unusable), then fitting and within budget first, then by throughput. `measured`
/// runs take precedence over `published` PyTorch figures, then MLPerf ones, then datasheet
/// scaling, which scales only from measured or PyTorch figures. A figure in a precision its GPU
/// has no datasheet path for is not used. Inference at batch 1 or under a latency budget gets no
/// throughput without a measurement. Energy is a measured run's own where it has telemetry, else
/// a TDP estimate. Each GPU's price per GPU-hour, which every cost figure uses: its own
/// (price_per_hour_by_gpu), else the one for all, else its entry of `default_prices` (the
/// default rental table, load_rental_prices()), else its purchase price. Throws ConfigError for
/// an invalid request, or a `default_prices` entry that names no GPU of `db`, names one twice or
/// has no finite price > 0.
[[nodiscard]] std::vector<GpuAdvice> advise(const AdvisorRequest& request, const SpecDatabase& db,
                                            const std::vector<LoadedRun>& measured = {},
                                            const std::vector<PublishedResult>& published = {},
                                            const std::vector<RentalPrice>& default_prices = {});

/// As above, with measured results of both kinds: training runs serve train requests, inference
/// results inference requests. With a latency budget, a GPU whose measured batch sizes all miss
/// it ranks after those that meet it or were not measured.
[[nodiscard]] std::vector<GpuAdvice> advise_with(
    const AdvisorRequest& request, const SpecDatabase& db, const LoadedResults& results,
    const std::vector<PublishedResult>& published = {},
    const std::vector<RentalPrice>& default_prices = {});

/// Prints the ranking as a table followed by each GPU's reasons. The price column appears with a
/// run, a price given, or a GPU priced from the default table.
void write_advice(std::ostream& out, const AdvisorRequest& request,
                  const std::vector<GpuAdvice>& ranking);

}  // namespace gpuperf
