// The memory planner, the largest-batch search and the will-it-fit advice, against values
// computed by hand in the comments (GB = 1e9 bytes throughout).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/advise/fit.h"
#include "gpuperf/base/error.h"
#include "gpuperf/plan/batch_search.h"
#include "gpuperf/plan/memory_plan.h"
#include "gpuperf/specs/specs.h"

namespace {

using gpuperf::MemoryPlanRequest;
using gpuperf::PlanOptimizer;
using gpuperf::TrainingPrecision;
using gpuperf::ZeroStage;

// A request whose fixed overheads are zero, so that the total is the model states alone.
MemoryPlanRequest states_only(double parameters, int gpus, ZeroStage zero) {
  MemoryPlanRequest r;
  r.model.parameters = parameters;
  r.strategy.gpus = gpus;
  r.strategy.zero = zero;
  r.overheads.cuda_context_bytes = 0;
  r.overheads.workspace_bytes = 0;
  r.overheads.fragmentation_factor = 1;
  return r;
}

double total(const MemoryPlanRequest& r) { return gpuperf::plan_memory(r).total_bytes; }

// GPT-2 124M: L 12, h 768, a 12, s 1024, V 50257.
gpuperf::TransformerShape gpt2_small() {
  gpuperf::TransformerShape t;
  t.layers = 12;
  t.hidden = 768;
  t.heads = 12;
  t.sequence = 1024;
  t.vocab = 50257;
  return t;
}

gpuperf::SpecDatabase shipped_specs() {
  return gpuperf::SpecDatabase::load_file(std::string(GPUPERF_TEST_DATA_DIR) + "/gpu_specs.json");
}

// The fake allocator: a batch above `limit` runs out of memory; peaks grow 1e8 bytes a sample.
struct FakeRun {
  std::int64_t limit = 300;
  std::vector<std::int64_t> flaky;   // batches whose first try fails with another error
  std::vector<std::int64_t> broken;  // batches that always fail with another error
  std::vector<std::int64_t> seen;

  gpuperf::Trial operator()(std::int64_t batch) {
    const bool first = std::count(seen.begin(), seen.end(), batch) == 0;
    seen.push_back(batch);
    const auto in = [batch](const std::vector<std::int64_t>& v) {
      return std::find(v.begin(), v.end(), batch) != v.end();
    };
    if (in(broken) || (first && in(flaky))) {
      return {gpuperf::TrialOutcome::kError, kNaN, "NCCL timeout"};
    }
    if (batch > limit) {
      return {gpuperf::TrialOutcome::kOutOfMemory, kNaN, "CUDA out of memory"};
    }
    return {gpuperf::TrialOutcome::kFits, 1e8 * static_cast<double>(batch), ""};
  }
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
};

std::vector<std::int64_t> batches_of(const gpuperf::BatchSearchResult& r) {
  std::vector<std::int64_t> out;
  for (const auto& t : r.tries) out.push_back(t.batch);
  return out;
}

}  // namespace

TEST_CASE("mixed-precision Adam keeps 16 bytes per parameter on one GPU", "[plan]") {
  // 2 (16-bit weights) + 2 (16-bit gradients) + 4 (fp32 master) + 4 + 4 (Adam's m, v) = 16 B.
  // 1.3e9 x 16 = 20.8e9; 7e9 x 16 = 112e9; 13e9 x 16 = 208e9.
  CHECK(total(states_only(1.3e9, 1, ZeroStage::kNone)) == Approx(20.8e9));
  CHECK(total(states_only(7e9, 1, ZeroStage::kNone)) == Approx(112e9));
  CHECK(total(states_only(13e9, 1, ZeroStage::kNone)) == Approx(208e9));
  const auto plan = gpuperf::plan_memory(states_only(7e9, 1, ZeroStage::kNone));
  CHECK(plan.term("weights").bytes == Approx(14e9));
  CHECK(plan.term("gradients").bytes == Approx(14e9));
  CHECK(plan.term("master weights").bytes == Approx(28e9));
  CHECK(plan.term("optimizer states").bytes == Approx(56e9));
  CHECK(plan.dominant().name == "optimizer states");
}

TEST_CASE("ZeRO stages divide the states they shard by the GPU count", "[plan]") {
  // 8 GPUs, per GPU:
  //   data parallel: 16 B x P + the all-reduce buckets' gradient copy 2 B x P = 18 B x P
  //   ZeRO-1: 2 + 2 + 12/8 = 5.5 B x P     ZeRO-2: 2 + 14/8 = 3.75 B x P     ZeRO-3: 16/8 = 2 B x P
  // 1.3e9: 23.4e9, 7.15e9, 4.875e9, 2.6e9
  CHECK(total(states_only(1.3e9, 8, ZeroStage::kNone)) == Approx(23.4e9));
  CHECK(total(states_only(1.3e9, 8, ZeroStage::kStage1)) == Approx(7.15e9));
  CHECK(total(states_only(1.3e9, 8, ZeroStage::kStage2)) == Approx(4.875e9));
  CHECK(total(states_only(1.3e9, 8, ZeroStage::kStage3)) == Approx(2.6e9));
  // 7e9: 126e9, 38.5e9, 26.25e9, 14e9
  CHECK(total(states_only(7e9, 8, ZeroStage::kNone)) == Approx(126e9));
  CHECK(total(states_only(7e9, 8, ZeroStage::kStage1)) == Approx(38.5e9));
  CHECK(total(states_only(7e9, 8, ZeroStage::kStage2)) == Approx(26.25e9));
  CHECK(total(states_only(7e9, 8, ZeroStage::kStage3)) == Approx(14e9));
  // 13e9: 234e9, 71.5e9, 48.75e9, 26e9
  CHECK(total(states_only(13e9, 8, ZeroStage::kNone)) == Approx(234e9));
  CHECK(total(states_only(13e9, 8, ZeroStage::kStage1)) == Approx(71.5e9));
  CHECK(total(states_only(13e9, 8, ZeroStage::kStage2)) == Approx(48.75e9));
  CHECK(total(states_only(13e9, 8, ZeroStage::kStage3)) == Approx(26e9));
  // On one GPU a ZeRO stage shards nothing: 1.3e9 x 16 = 20.8e9.
  CHECK(total(states_only(1.3e9, 1, ZeroStage::kStage3)) == Approx(20.8e9));
}

TEST_CASE("precision and optimizer set the bytes per parameter", "[plan]") {
  auto r = states_only(1e9, 1, ZeroStage::kNone);
  // fp32 SGD with momentum: 4 weights + 4 gradients + 4 momentum = 12 B.
  r.precision = TrainingPrecision::kFp32;
  r.optimizer = PlanOptimizer::kSgd;
  CHECK(total(r) == Approx(12e9));
  // fp32 SGD without momentum: 4 + 4 = 8 B.
  r.optimizer = PlanOptimizer::kSgdPlain;
  CHECK(total(r) == Approx(8e9));
  // Pure bf16 AdamW: 2 weights + 2 gradients + 2 + 2 bf16 moments, no master = 8 B.
  r.precision = TrainingPrecision::kPureBf16;
  r.optimizer = PlanOptimizer::kAdamW;
  CHECK(total(r) == Approx(8e9));
  // AMP fp16 Adam with the foreach step: 16 B + one fp32 sqrt(v) temporary 4 B = 20 B.
  r.precision = TrainingPrecision::kAmpFp16;
  r.optimizer = PlanOptimizer::kAdam;
  r.fused_optimizer = false;
  CHECK(total(r) == Approx(20e9));
  CHECK(gpuperf::plan_memory(r).term("optimizer step temporaries").bytes == Approx(4e9));
  // The foreach SGD step updates in place: no temporary, 2 + 2 + 4 master + 4 momentum = 12 B.
  r.optimizer = PlanOptimizer::kSgd;
  CHECK(total(r) == Approx(12e9));
}

TEST_CASE("fixed overheads are named terms and fragmentation scales what the allocator holds",
          "[plan]") {
  // fp32 plain SGD, 1e9 params: 8e9 of states + 0.25e9 workspace + 0.05e9 graph pool = 8.3e9
  // held by the allocator; x (1.1 - 1) = 0.83e9 fragmentation; + 0.5e9 context outside it.
  // Total 8.3e9 + 0.83e9 + 0.5e9 = 9.63e9.
  MemoryPlanRequest r;
  r.model.parameters = 1e9;
  r.precision = TrainingPrecision::kFp32;
  r.optimizer = PlanOptimizer::kSgdPlain;
  r.overheads.cuda_context_bytes = 0.5e9;
  r.overheads.workspace_bytes = 0.25e9;
  r.overheads.cuda_graph_pool_bytes = 0.05e9;
  r.overheads.fragmentation_factor = 1.1;
  const auto plan = gpuperf::plan_memory(r);
  CHECK(plan.term("CUDA context").bytes == Approx(0.5e9));
  CHECK(plan.term("cuDNN/cuBLAS workspaces").bytes == Approx(0.25e9));
  CHECK(plan.term("CUDA graph pool").bytes == Approx(0.05e9));
  CHECK(plan.term("allocator fragmentation").bytes == Approx(0.83e9));
  CHECK(plan.total_bytes == Approx(9.63e9));
  for (const auto& term : plan.terms) CHECK_FALSE(term.reason.empty());
}

TEST_CASE("offload moves master weights and optimizer states to the host", "[plan]") {
  // 10e9 AMP Adam on one GPU: the GPU keeps 2 + 2 B = 40e9; the host 4 master + 8 moments =
  // 120e9; per step 2 B gradients down + 2 B weights up = 40e9 bytes, at 50 GB/s 0.8 s.
  auto r = states_only(10e9, 1, ZeroStage::kNone);
  r.strategy.offload_optimizer = true;
  r.strategy.host_link_bytes_per_s = 50e9;
  const auto plan = gpuperf::plan_memory(r);
  CHECK(plan.total_bytes == Approx(40e9));
  CHECK(plan.host_bytes == Approx(120e9));
  CHECK(plan.host_transfer_bytes_per_step == Approx(40e9));
  CHECK(plan.host_transfer_seconds_per_step == Approx(0.8));
  // With ZeRO-2 over 8 GPUs each rank offloads its shard: host 120e9 / 8 = 15e9, transfer
  // 40e9 / 8 = 5e9; the GPU keeps 2 B weights + 2/8 B gradients = 20e9 + 2.5e9 = 22.5e9.
  r.strategy.gpus = 8;
  r.strategy.zero = ZeroStage::kStage2;
  const auto sharded = gpuperf::plan_memory(r);
  CHECK(sharded.host_bytes == Approx(15e9));
  CHECK(sharded.host_transfer_bytes_per_step == Approx(5e9));
  CHECK(sharded.total_bytes == Approx(22.5e9));
}

TEST_CASE("a GPT-2 124M shape gives GPT-2's parameter count", "[plan]") {
  // 12 x (12 x 768^2 + 13 x 768) = 12 x 7,087,872 = 85,054,464 blocks
  // + (50,257 + 1,024) x 768 = 39,383,808 embeddings + 2 x 768 = 1,536 final norm
  // = 124,439,808, the published GPT-2 small count.
  CHECK(gpt2_small().parameters() == 124439808.0);
}

TEST_CASE("transformer activations follow Korthikanti et al. for GPT-2 124M", "[plan]") {
  auto t = gpt2_small();
  t.flash_attention = false;
  // One block, b = 1: s b h (34 + 5 a s / h) = 1024 x 768 x (34 + 5 x 12 x 1024 / 768)
  // = 786,432 x (34 + 80) = 89,653,248 bytes.
  CHECK(gpuperf::transformer_block_activation_bytes(t, 1) == 89653248.0);
  // Flash attention drops the 5 a s^2 b scores and keeps a fp32 logsumexp per row and head:
  // 786,432 x 34 + 4 x 12 x 1024 = 26,738,688 + 49,152 = 26,787,840.
  t.flash_attention = true;
  CHECK(gpuperf::transformer_block_activation_bytes(t, 1) == 26787840.0);
  // The batch scales it linearly: b = 8 -> 214,302,720.
  CHECK(gpuperf::transformer_block_activation_bytes(t, 8) == 214302720.0);

  auto r = states_only(gpt2_small().parameters(), 1, ZeroStage::kNone);
  t.flash_attention = false;
  r.model.transformer = t;
  // 12 blocks x 89,653,248 = 1,075,838,976, + embedding and output layer 4 s b h + 4 s b V =
  // 3,145,728 + 205,852,672 = 208,998,400: 1,284,837,376.
  CHECK(gpuperf::plan_memory(r).term("activations").bytes == 1284837376.0);
  // Checkpointing per block keeps 12 x 2 s b h = 18,874,368 block inputs, one block recomputed
  // (89,653,248) and the output layer (208,998,400): 317,526,016.
  r.strategy.activation_checkpointing = true;
  CHECK(gpuperf::plan_memory(r).term("activations").bytes == 317526016.0);
}

TEST_CASE("ZeRO-3 counts the gathered largest layer of a transformer", "[plan]") {
  // GPT-2's largest unit is the embedding, 50,257 x 768 = 38,597,376 params (a block has
  // 7,087,872). AMP: (2 x 2 B computed + prefetched weights + 2 B gradients) x 38,597,376
  // = 231,584,256 bytes.
  auto r = states_only(gpt2_small().parameters(), 8, ZeroStage::kStage3);
  r.model.transformer = gpt2_small();
  CHECK(gpuperf::plan_memory(r).term("ZeRO-3 gathered layers").bytes == 231584256.0);
  // Without a shape the layer is unknown: not counted, and the plan says so.
  const auto bare = gpuperf::plan_memory(states_only(1e9, 8, ZeroStage::kStage3));
  CHECK(bare.term("ZeRO-3 gathered layers").bytes == 0);
  CHECK(bare.notes.size() == 2);  // the gathered layers and the activations
}

TEST_CASE("a CNN's activations are its measured slope times the micro-batch", "[plan]") {
  // ResNet-50-like: 1e8 bytes per sample x 256 = 25.6e9.
  auto r = states_only(25557032, 1, ZeroStage::kNone);
  r.model.activation_bytes_per_sample = 1e8;
  r.micro_batch = 256;
  CHECK(gpuperf::plan_memory(r).term("activations").bytes == Approx(25.6e9));
}

TEST_CASE("a bad plan request names the option and the value", "[plan]") {
  auto r = states_only(1e9, 1, ZeroStage::kNone);
  r.strategy.gpus = 0;
  CHECK_THROWS_WITH(gpuperf::plan_memory(r),
                    Catch::Equals("MemoryStrategy::gpus: must be 1..4096, got 0"));
  r = states_only(1e9, 1, ZeroStage::kNone);
  r.overheads.fragmentation_factor = 0.5;
  CHECK_THROWS_AS(gpuperf::plan_memory(r), gpuperf::ConfigError);
  r = states_only(std::numeric_limits<double>::quiet_NaN(), 1, ZeroStage::kNone);
  CHECK_THROWS_WITH(gpuperf::plan_memory(r), Catch::StartsWith("ModelFacts::parameters: "));
  r.model.transformer = gpt2_small();
  r.model.transformer->heads = 5;  // 768 is not a multiple of 5
  CHECK_THROWS_WITH(gpuperf::plan_memory(r),
                    Catch::StartsWith("TransformerShape::heads: must divide hidden 768"));
  CHECK_THROWS_WITH(gpuperf::parse_training_precision("fp12"), Catch::Contains("'fp12'"));
  CHECK(gpuperf::parse_training_precision("bf16") == TrainingPrecision::kAmpBf16);
  CHECK_THROWS_WITH(gpuperf::parse_plan_optimizer("lamb"), Catch::Contains("'lamb'"));
}

TEST_CASE("the batch search doubles, then bisects to the largest batch that fits", "[plan]") {
  FakeRun fake;
  const auto result = gpuperf::largest_batch_that_fits(std::ref(fake));
  CHECK(result.largest_fitting == 300);
  CHECK(result.smallest_failing == 301);
  // Doubling 1..256 fits, 512 does not; bisection: 384 no, 320 no, 288 yes, 304 no, 296 yes,
  // 300 yes, 302 no, 301 no.
  const std::vector<std::int64_t> expected = {1,   2,   4,   8,   16,  32,  64,  128, 256,
                                              512, 384, 320, 288, 304, 296, 300, 302, 301};
  CHECK(batches_of(result) == expected);
  CHECK(result.tries[8].outcome == gpuperf::TrialOutcome::kFits);
  CHECK(result.tries[8].peak_bytes == 256e8);
  CHECK(result.tries[9].outcome == gpuperf::TrialOutcome::kOutOfMemory);
  CHECK(result.tries[9].message == "CUDA out of memory");
}

TEST_CASE("the batch search retries a flaky try and records both", "[plan]") {
  FakeRun fake;
  fake.flaky = {64};
  const auto result = gpuperf::largest_batch_that_fits(std::ref(fake));
  CHECK(result.largest_fitting == 300);
  CHECK(result.tries[6].batch == 64);
  CHECK(result.tries[6].outcome == gpuperf::TrialOutcome::kError);
  CHECK(result.tries[7].batch == 64);
  CHECK(result.tries[7].outcome == gpuperf::TrialOutcome::kFits);
}

TEST_CASE("the batch search stops on an error that repeats", "[plan]") {
  FakeRun fake;
  fake.broken = {64};
  CHECK_THROWS_WITH(
      gpuperf::largest_batch_that_fits(std::ref(fake)),
      Catch::Contains("batch 64 failed 2 time(s)") && Catch::Contains("NCCL timeout"));
}

TEST_CASE("the batch search says clearly when batch 1 does not fit", "[plan]") {
  FakeRun fake;
  fake.limit = 0;
  CHECK_THROWS_AS(gpuperf::largest_batch_that_fits(std::ref(fake)), gpuperf::OutOfMemoryError);
  CHECK_THROWS_WITH(gpuperf::largest_batch_that_fits(std::ref(fake)),
                    Catch::Contains("batch 1 does not fit"));
}

TEST_CASE("the batch search bisects below a start batch that does not fit", "[plan]") {
  FakeRun fake;
  gpuperf::BatchSearchOptions options;
  options.start = 500;
  const auto result = gpuperf::largest_batch_that_fits(std::ref(fake), options);
  // 500 no; between 0 and 500: 250 yes, 375 no, 312 no, 281 yes, 296 yes, 304 no, 300 yes,
  // 302 no, 301 no.
  const std::vector<std::int64_t> expected = {500, 250, 375, 312, 281, 296, 304, 300, 302, 301};
  CHECK(batches_of(result) == expected);
  CHECK(result.largest_fitting == 300);
}

TEST_CASE("the batch search reports no failing batch when the limit fits", "[plan]") {
  FakeRun fake;
  fake.limit = 5000;
  gpuperf::BatchSearchOptions options;
  options.max_batch = 1000;
  const auto result = gpuperf::largest_batch_that_fits(std::ref(fake), options);
  CHECK(result.largest_fitting == 1000);
  CHECK(result.smallest_failing == 0);
  CHECK(result.tries.back().batch == 1000);  // 512, then the limit instead of 1024
}

TEST_CASE("10B parameters fit one 80 GB GPU only with offload, and 8 of them with ZeRO-1",
          "[plan][advise]") {
  // The seeds' "A100 80 GB for >10B parameters": AMP Adam keeps 16 B x 10e9 = 160e9 of model
  // states, twice an 80 GB GPU. With the default overheads (0.5e9 context, 256 MiB =
  // 0.268435456e9 workspace, fragmentation 1.1):
  //   1 GPU, no strategy: (160e9 + 0.268e9) x 1.1 + 0.5e9 = 176.80e9: no
  //   + checkpointing: the same (no activations counted): no
  //   + offload: (40e9 + 0.268e9) x 1.1 + 0.5e9 = 44.80e9: fits; the host holds 120e9
  //   8 GPUs, data parallel: (180e9 + 0.268e9) x 1.1 + 0.5e9 = 198.80e9: no
  //   ZeRO-1: (55e9 + 0.268e9) x 1.1 + 0.5e9 = 61.30e9: fits
  //   ZeRO-3: (20e9 + 0.268e9) x 1.1 + 0.5e9 = 22.80e9 (20e9 of model states)
  const auto db = shipped_specs();
  gpuperf::FitRequest request;
  request.plan.model.parameters = 10e9;
  request.gpu = "a100-sxm4-80gb";
  // A bad plan is refused by its field, before any GPU is judged.
  gpuperf::FitRequest bad = request;
  bad.plan.strategy.gpus = 0;
  CHECK_THROWS_WITH(bad.validate(), Catch::Contains("MemoryStrategy::gpus"));
  CHECK_THROWS_WITH(gpuperf::advise_fit(bad, db), Catch::Contains("MemoryStrategy::gpus"));
  CHECK_NOTHROW(request.validate());
  const auto one = gpuperf::advise_fit(request, db);
  REQUIRE(one.ladder.size() == 3);
  CHECK(one.ladder[0].plan.total_bytes == Approx(176.795279e9));
  CHECK(one.ladder[2].plan.total_bytes == Approx(44.795279e9));
  CHECK(one.ladder[2].plan.host_bytes == Approx(120e9));
  REQUIRE(one.gpus.size() == 1);
  CHECK(one.gpus[0].fits == std::vector<bool>{false, false, true});
  CHECK(one.ladder[one.gpus[0].needed].name == "checkpointing + offload");

  request.plan.strategy.gpus = 8;
  const auto eight = gpuperf::advise_fit(request, db);
  REQUIRE(eight.ladder.size() == 6);
  CHECK(eight.ladder[0].plan.total_bytes == Approx(198.795279e9));
  CHECK(eight.ladder[1].plan.total_bytes == Approx(61.295279e9));
  CHECK(eight.ladder[3].name == "ZeRO-3");
  CHECK(eight.ladder[3].plan.total_bytes == Approx(22.795279e9));
  CHECK(eight.ladder[eight.gpus[0].needed].name == "ZeRO-1");

  std::ostringstream text;
  gpuperf::write_fit(text, request, eight);
  CHECK_THAT(text.str(), Catch::Contains("16 B/param = 160 GB on one GPU; 20 GB per GPU with "
                                         "ZeRO-3 over 8 GPUs"));
  CHECK_THAT(text.str(), Catch::Contains("| A100 SXM4 80GB | 80 | no | yes | yes | yes | yes | "
                                         "yes | ZeRO-1 |"));
}

TEST_CASE("the fit advice judges every datasheet GPU, and none fits 13B on one", "[plan][advise]") {
  // 13e9 x 16 B = 208e9 of model states; the largest datasheet memory, 192 GB (MI300X,
  // reference only) or 180 GB (B200), holds it on none: offload is needed, (52e9 + 0.268e9) x
  // 1.1 + 0.5e9 = 57.995e9, which fits the 80 GB entries but not the 48 GB L40S.
  const auto db = shipped_specs();
  gpuperf::FitRequest request;
  request.plan.model.parameters = 13e9;
  const auto advice = gpuperf::advise_fit(request, db);
  CHECK(advice.ladder.back().plan.total_bytes == Approx(57.995279e9));
  for (const auto& g : advice.gpus) {
    INFO(g.spec->id);
    CHECK_FALSE(g.fits[0]);
    CHECK(g.fits.back() == (g.spec->memory_bytes >= 57.995279e9));
  }
  CHECK_THROWS_AS(
      [&] {
        request.gpu = "no-such-gpu";
        return gpuperf::advise_fit(request, db);
      }(),
      gpuperf::ConfigError);
}

TEST_CASE("1.3B, 7B and 13B on 1 and 8 GPUs: every datasheet GPU gets the first strategy that fits",
          "[plan][advise]") {
  // AMP Adam, the default overheads: total = (model states + 0.268435456e9) x 1.1 + 0.5e9.
  // Model states per GPU, P parameters, N = 8:
  //   1 GPU: one GPU 16P; + checkpointing 16P (no activations given); + offload 4P (2 + 2)
  //   8 GPUs: data parallel 16P + 2P of buckets; ZeRO-1 4P + 12P/8; ZeRO-2 2P + 14P/8;
  //           ZeRO-3 16P/8; + checkpointing the same; + offload 4P/8
  struct Case {
    double parameters;
    int gpus;
    std::vector<double> states;  // per rung, bytes
  };
  const std::vector<Case> cases = {
      {1.3e9, 1, {20.8e9, 20.8e9, 5.2e9}},
      {7e9, 1, {112e9, 112e9, 28e9}},
      {13e9, 1, {208e9, 208e9, 52e9}},
      {1.3e9, 8, {23.4e9, 7.15e9, 4.875e9, 2.6e9, 2.6e9, 0.65e9}},
      {7e9, 8, {126e9, 38.5e9, 26.25e9, 14e9, 14e9, 3.5e9}},
      {13e9, 8, {234e9, 71.5e9, 48.75e9, 26e9, 26e9, 6.5e9}},
  };
  const auto db = shipped_specs();
  for (const Case& c : cases) {
    INFO(c.parameters << " parameters on " << c.gpus << " GPUs");
    gpuperf::FitRequest request;
    request.plan.model.parameters = c.parameters;
    request.plan.strategy.gpus = c.gpus;
    request.include_reference_only = true;
    const auto advice = gpuperf::advise_fit(request, db);
    REQUIRE(advice.ladder.size() == c.states.size());
    std::vector<double> totals;
    for (std::size_t i = 0; i < c.states.size(); ++i) {
      totals.push_back((c.states[i] + 0.268435456e9) * 1.1 + 0.5e9);
      CHECK(advice.ladder[i].plan.total_bytes == Approx(totals.back()));
    }
    REQUIRE_FALSE(advice.gpus.empty());
    for (const auto& g : advice.gpus) {
      INFO(g.spec->id << " with " << g.spec->memory_bytes << " bytes");
      int first = -1;
      for (std::size_t i = 0; i < totals.size() && first < 0; ++i) {
        if (totals[i] <= g.spec->memory_bytes) first = static_cast<int>(i);
      }
      CHECK(g.needed == first);
    }
  }
}
