// The advise module's advisor: ranking by fit, budget and throughput tiers (measured, published,
// estimated), costs at rental and purchase prices, energy, inference under a latency budget,
// data-parallel scaling, and its reasons.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <tuple>

#include "gpuperf/advise/advisor.h"
#include "gpuperf/base/error.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/rental_prices.h"
#include "gpuperf/specs/specs.h"

#include "specs_fixtures.h"

using gpuperf::testing::resnet_run;
using gpuperf::testing::shipped_specs;

namespace {

const std::string kData = GPUPERF_TEST_DATA_DIR;

const gpuperf::GpuAdvice& advice_for(const std::vector<gpuperf::GpuAdvice>& ranking,
                                     const char* id) {
  const auto it = std::find_if(ranking.begin(), ranking.end(),
                               [&](const gpuperf::GpuAdvice& a) { return a.spec->id == id; });
  REQUIRE(it != ranking.end());
  return *it;
}

bool says(const gpuperf::GpuAdvice& a, const std::string& text) {
  return std::any_of(a.reasons.begin(), a.reasons.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

gpuperf::RentalPrice table_price(const std::string& id, double usd, const std::string& note) {
  return {id, usd, "Test Cloud", "https://example.com/pricing", "2026-01-31", "", note};
}

}  // namespace

TEST_CASE("the advisor ranks by fit, budget and throughput, with reasons", "[specs][advisor]") {
  const auto& db = shipped_specs();
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kBf16;
  request.batch_size = 256;
  request.budget_usd = 2000;
  const auto ranking = gpuperf::advise(request, db, {}, {});
  REQUIRE_FALSE(ranking.empty());
  // Within budget and with a price: only the GeForce cards under 2000 USD rank first.
  CHECK(ranking[0].spec->id == "rtx-5090");
  CHECK_FALSE(ranking[0].over_budget);
  for (const auto& a : ranking) CHECK(a.spec->id != "mi300x");
  CHECK(ranking[0].throughput_basis == gpuperf::ThroughputBasis::kEstimate);

  // With measured results, the measured GPU uses them and others scale from them.
  gpuperf::LoadedRun run{"h200.json", resnet_run(4690)};
  run.record.config.precision = "bf16";
  request.budget_usd = std::nan("");
  const auto measured = gpuperf::advise(request, db, {run}, {});
  const auto h200 = std::find_if(measured.begin(), measured.end(),
                                 [](const auto& a) { return a.spec->id == "h200-sxm-141gb"; });
  REQUIRE(h200 != measured.end());
  CHECK(h200->throughput_basis == gpuperf::ThroughputBasis::kMeasured);
  CHECK(h200->samples_per_second == Approx(4690));
  const auto h100 = std::find_if(measured.begin(), measured.end(),
                                 [](const auto& a) { return a.spec->id == "h100-sxm5-80gb"; });
  CHECK(h100->samples_per_second == Approx(4690));  // same bf16 peak
  CHECK(h100->throughput_basis == gpuperf::ThroughputBasis::kEstimate);
  CHECK(std::any_of(h100->reasons.begin(), h100->reasons.end(), [](const std::string& line) {
    return line.find("estimate, H200 SXM 141GB measured 4690") != std::string::npos;
  }));

  // The requested precision's own measurement comes before a faster one of the other 2-byte
  // type; with only the other type measured, it stands in and the reasons say so.
  gpuperf::LoadedRun fp16_run{"h200-fp16.json", resnet_run(5200)};
  fp16_run.record.config.precision = "fp16";
  const auto mixed = gpuperf::advise(request, db, {fp16_run, run}, {});
  const auto h200_mixed = std::find_if(
      mixed.begin(), mixed.end(), [](const auto& a) { return a.spec->id == "h200-sxm-141gb"; });
  REQUIRE(h200_mixed != mixed.end());
  CHECK(h200_mixed->samples_per_second == Approx(4690));
  const auto says_carried = [](const gpuperf::GpuAdvice& a) {
    return std::any_of(a.reasons.begin(), a.reasons.end(), [](const std::string& line) {
      return line.find("precision: fp16 figure used for a bf16 request") != std::string::npos;
    });
  };
  CHECK_FALSE(says_carried(*h200_mixed));
  const auto fp16_only = gpuperf::advise(request, db, {fp16_run}, {});
  const auto h200_fp16 = std::find_if(fp16_only.begin(), fp16_only.end(),
                                      [](const auto& a) { return a.spec->id == "h200-sxm-141gb"; });
  REQUIRE(h200_fp16 != fp16_only.end());
  CHECK(h200_fp16->samples_per_second == Approx(5200));
  CHECK(says_carried(*h200_fp16));

  // A 70B-parameter model (1.26 TB of model states with Adam) fits 16 H200s only sharded.
  gpuperf::AdvisorRequest big;
  big.parameters = 70e9;
  big.gpu_count = 16;
  const auto sharded = gpuperf::advise(big, db);
  const auto h200big = std::find_if(sharded.begin(), sharded.end(),
                                    [](const auto& a) { return a.spec->id == "h200-sxm-141gb"; });
  CHECK_FALSE(h200big->fits);
  CHECK(h200big->fits_sharded);
  CHECK(h200big->fast_link_needed);
  CHECK(h200big->memory.weights == Approx(70e9 * 6));
  CHECK(h200big->memory.optimizer_state == Approx(70e9 * 8));
  const auto t4 = std::find_if(sharded.begin(), sharded.end(),
                               [](const auto& a) { return a.spec->id == "t4"; });
  CHECK_FALSE(t4->fits_sharded);
  CHECK(sharded.back().spec->id != "h200-sxm-141gb");

  std::ostringstream text;
  gpuperf::write_advice(text, big, sharded);
  CHECK_THAT(text.str(),
             Catch::Contains("optimizer state (adam)") && Catch::Contains("sharded over 16 GPUs"));
}

TEST_CASE("the advisor trains each model with its usual optimizer unless told",
          "[specs][advisor]") {
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  CHECK(gpuperf::optimizer_for(request) ==
        gpuperf::OptimizerKind::kSgd);  // torchvision's and MLPerf's recipe
  request.model = "simple";
  CHECK(gpuperf::optimizer_for(request) == gpuperf::OptimizerKind::kAdam);  // the seed's
  request.model.clear();
  request.parameters = 7e9;
  CHECK(gpuperf::optimizer_for(request) == gpuperf::OptimizerKind::kAdam);
  request.optimizer = gpuperf::OptimizerKind::kSgd;
  CHECK(gpuperf::optimizer_for(request) == gpuperf::OptimizerKind::kSgd);
  // The memory line says which one it counted: SGD's 4 bytes per parameter for resnet50.
  gpuperf::AdvisorRequest resnet;
  resnet.model = "resnet50";
  const auto ranking = gpuperf::advise(resnet, shipped_specs(), {}, {});
  REQUIRE_FALSE(ranking.empty());
  std::string reasons;
  for (const auto& line : ranking.front().reasons) reasons += line + "\n";
  CHECK_THAT(reasons, Catch::Contains("optimizer state (sgd)"));
}

TEST_CASE("batch-1 inference is never estimated from a datasheet peak", "[specs][advisor]") {
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.mode = gpuperf::WorkloadKind::kInference;
  request.precision = gpuperf::NumericFormat::kFp16;
  request.batch_size = 1;
  const auto ranking = gpuperf::advise(request, shipped_specs(), {}, {});
  REQUIRE_FALSE(ranking.empty());
  for (const auto& a : ranking) {
    INFO(a.spec->id);
    CHECK(std::isnan(a.samples_per_second));
  }
  std::string reasons;
  for (const auto& line : ranking.front().reasons) reasons += line + "\n";
  CHECK_THAT(reasons, Catch::Contains("batch-1 inference is launch-bound"));
  request.batch_size = 64;  // a full batch is compute-bound enough for a scaled estimate
  const auto batched = gpuperf::advise(request, shipped_specs(), {}, {});
  CHECK(std::any_of(batched.begin(), batched.end(),
                    [](const auto& a) { return a.samples_per_second > 0; }));
}

TEST_CASE("a published figure stands in only for a precision the GPU has", "[specs][advisor]") {
  // The shipped V100 figure is AMP (fp16); the V100 has no bf16: a bf16 request must not rank it
  // by that figure, while an fp16 request may.
  const auto& db = shipped_specs();
  const auto published = gpuperf::load_published_results(kData + "/published_results.json");
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.optimizer = gpuperf::OptimizerKind::kSgd;
  const auto v100_of = [&](gpuperf::NumericFormat precision) {
    request.precision = precision;
    const auto ranking = gpuperf::advise(request, db, {}, published);
    const auto v100 = std::find_if(ranking.begin(), ranking.end(),
                                   [](const auto& a) { return a.spec->id == "v100-sxm2-16gb"; });
    REQUIRE(v100 != ranking.end());
    return *v100;
  };
  CHECK(v100_of(gpuperf::NumericFormat::kFp16).throughput_basis ==
        gpuperf::ThroughputBasis::kPublished);
  const auto bf16 = v100_of(gpuperf::NumericFormat::kBf16);
  CHECK(bf16.throughput_basis != gpuperf::ThroughputBasis::kPublished);
  CHECK(std::isnan(bf16.samples_per_second));
  std::string reasons;
  for (const auto& line : bf16.reasons) reasons += line + "\n";
  CHECK_THAT(reasons, Catch::Contains("not used: the datasheet gives this GPU no bf16 rate"));
}

TEST_CASE("the advisor's bases and latency statuses print as the table and reasons spell them",
          "[specs][advisor]") {
  CHECK(gpuperf::to_string(gpuperf::ThroughputBasis::kMeasured) == "measured");
  CHECK(gpuperf::to_string(gpuperf::ThroughputBasis::kPublished) == "published");
  CHECK(gpuperf::to_string(gpuperf::ThroughputBasis::kMlperf) == "MLPerf");
  CHECK(gpuperf::to_string(gpuperf::ThroughputBasis::kEstimate) == "estimate");
  CHECK(gpuperf::to_string(gpuperf::ThroughputBasis::kNone).empty());
  CHECK(gpuperf::to_string(gpuperf::EnergyBasis::kMeasured) == "measured");
  CHECK(gpuperf::to_string(gpuperf::EnergyBasis::kTdpEstimate) == "estimate: TDP");
  CHECK(gpuperf::to_string(gpuperf::EnergyBasis::kNone).empty());
  CHECK(gpuperf::to_string(gpuperf::LatencyStatus::kMeetsBudget) == "meets budget");
  CHECK(gpuperf::to_string(gpuperf::LatencyStatus::kMissesBudget) == "misses budget");
  CHECK(gpuperf::to_string(gpuperf::LatencyStatus::kNotMeasured) == "not measured");
  CHECK(gpuperf::to_string(gpuperf::LatencyStatus::kNoBudget).empty());
}

TEST_CASE("the advisor ranks measured, published and estimated figures in separate tiers",
          "[specs][advisor]") {
  // The shipped published figures include an A100 at 2,470 img/s (PyTorch); a measured H200 at
  // 2,000 still ranks first, in its own table, and every estimate after every published figure,
  // whatever the numbers.
  const auto& db = shipped_specs();
  const auto published = gpuperf::load_published_results(kData + "/published_results.json");
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kFp16;
  gpuperf::LoadedRun run{"h200.json", resnet_run(2000)};
  run.record.config.precision = "fp16";
  const auto ranking = gpuperf::advise(request, db, {run}, published);
  REQUIRE(ranking.size() > 3);
  CHECK(ranking[0].spec->id == "h200-sxm-141gb");
  CHECK(gpuperf::evidence_tier(ranking[0]) == gpuperf::EvidenceTier::kMeasured);
  for (std::size_t i = 1; i < ranking.size(); ++i) {
    INFO(ranking[i].spec->id);
    CHECK(gpuperf::evidence_tier(ranking[i - 1]) <= gpuperf::evidence_tier(ranking[i]));
  }
  const auto a100 = std::find_if(ranking.begin(), ranking.end(),
                                 [](const auto& a) { return a.spec->id == "a100-sxm4-80gb"; });
  REQUIRE(a100 != ranking.end());
  CHECK(a100->throughput_basis == gpuperf::ThroughputBasis::kPublished);
  CHECK(a100->samples_per_second > ranking[0].samples_per_second);  // faster, yet ranked after

  std::ostringstream text;
  gpuperf::write_advice(text, request, ranking);
  const std::string out = text.str();
  const auto measured_at = out.find("### Measured on this workload");
  const auto published_at = out.find("### Published figures");
  const auto estimate_at = out.find("### Datasheet estimates");
  REQUIRE(measured_at != std::string::npos);
  CHECK(measured_at < published_at);
  CHECK(published_at < estimate_at);
  CHECK(estimate_at != std::string::npos);
  CHECK(out.find("H200 SXM 141GB") < published_at);
}

namespace {

gpuperf::PublishedResult published_figure(const std::string& gpu_id, const std::string& precision,
                                          double per_gpu, gpuperf::PublishedStack stack) {
  gpuperf::PublishedResult p;
  p.gpu = p.gpu_id = gpu_id;
  p.model = "resnet50";
  p.precision = precision;
  p.images_per_second_low = p.images_per_second_high = per_gpu;
  p.stack = stack;
  p.source = "test";
  p.setup = "test setup";
  return p;
}

}  // namespace

TEST_CASE("published figures of different stacks are never ranked or scaled together",
          "[specs][advisor]") {
  const auto& db = shipped_specs();
  const auto published = gpuperf::load_published_results(kData + "/published_results.json");
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kFp16;
  const auto ranking = gpuperf::advise(request, db, {}, published);
  // The H100 SXM quotes Lambda's PyTorch 2,616 img/s, not MLPerf's 7,100 (MXNet, LARS, DALI):
  // beside the H100 PCIe's PyTorch 1,866 that is 1.40x, not 3.8x.
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(h100.throughput_basis == gpuperf::ThroughputBasis::kPublished);
  CHECK(h100.samples_per_second == Approx(2616));
  CHECK(says(h100, "published 7100 img/s per GPU, MLPerf"));
  CHECK(says(h100, "not used: MLPerf is another stack"));
  CHECK(h100.samples_per_second / advice_for(ranking, "h100-pcie-80gb").samples_per_second ==
        Approx(2616.0 / 1866));
  // Estimates scale from the fastest PyTorch figure, the H100 SXM's 2,616 (same fp16 peak on the
  // H200; the B200: 2616 x 2250 / 989.4 = 5949), never from MLPerf's 7,100.
  const auto& h200 = advice_for(ranking, "h200-sxm-141gb");
  CHECK(h200.throughput_basis == gpuperf::ThroughputBasis::kEstimate);
  CHECK(h200.samples_per_second == Approx(2616));
  CHECK(advice_for(ranking, "b200").samples_per_second == Approx(2616 * 2250 / 989.4));

  // Only the MLPerf figure: the H100 SXM quotes it in a tier of its own; nothing scales from it,
  // and the estimates say so (30% of the H200's 989.4 TFLOPS over ResNet-50's training FLOPs).
  const std::vector<gpuperf::PublishedResult> mlperf_only = {published[13]};
  const auto alone = gpuperf::advise(request, db, {}, mlperf_only);
  const auto& h100_mlperf = advice_for(alone, "h100-sxm5-80gb");
  CHECK(h100_mlperf.throughput_basis == gpuperf::ThroughputBasis::kMlperf);
  CHECK(h100_mlperf.samples_per_second == Approx(7100));
  CHECK(gpuperf::evidence_tier(h100_mlperf) == gpuperf::EvidenceTier::kMlperf);
  const auto& h200_alone = advice_for(alone, "h200-sxm-141gb");
  const double flops = gpuperf::count_model("resnet50")->training_flops;
  CHECK(h200_alone.samples_per_second == Approx(0.3 * 989.4e12 / flops));
  CHECK(says(h200_alone, "the MLPerf figures (H100 SXM5 80GB) are another stack, never scaled"));

  // A PyTorch A100 at 2,470 ranks before the MLPerf H100 at 7,100, each in its own table, and
  // every estimate after both.
  const std::vector<gpuperf::PublishedResult> both = {published[2], published[13]};
  const auto mixed = gpuperf::advise(request, db, {}, both);
  CHECK(mixed[0].spec->id == "a100-sxm4-80gb");
  CHECK(mixed[1].spec->id == "h100-sxm5-80gb");
  CHECK(gpuperf::evidence_tier(mixed[2]) == gpuperf::EvidenceTier::kEstimate);
  std::ostringstream text;
  gpuperf::write_advice(text, request, mixed);
  const std::string out = text.str();
  const auto published_at = out.find("### Published figures (PyTorch per GPU");
  const auto mlperf_at = out.find("### MLPerf figures");
  const auto estimate_at = out.find("### Datasheet estimates");
  REQUIRE(mlperf_at != std::string::npos);
  CHECK(published_at < mlperf_at);
  CHECK(mlperf_at < estimate_at);
  CHECK(estimate_at != std::string::npos);
}

TEST_CASE("a figure in a precision its GPU cannot run is not used for that GPU or scaled",
          "[specs][advisor]") {
  const auto& db = shipped_specs();
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kBf16;
  const double flops = gpuperf::count_model("resnet50")->training_flops;
  // A "bf16" figure said to be a V100's cannot be one (Volta has no bf16): the V100 does not
  // quote it, and the A100 is not scaled from it (30% of its 312 TFLOPS instead).
  const std::vector<gpuperf::PublishedResult> impossible = {
      published_figure("v100-sxm2-16gb", "bf16", 2000, gpuperf::PublishedStack::kPyTorch)};
  const auto ranking = gpuperf::advise(request, db, {}, impossible);
  const auto& v100 = advice_for(ranking, "v100-sxm2-16gb");
  CHECK(v100.throughput_basis == gpuperf::ThroughputBasis::kNone);
  CHECK(std::isnan(v100.samples_per_second));
  CHECK(says(v100, "not used: it is bf16, and the datasheet gives this GPU no bf16 path"));
  CHECK(advice_for(ranking, "a100-sxm4-80gb").samples_per_second == Approx(0.3 * 312e12 / flops));
  // The same for fp16 requests: the figure is still not this GPU's.
  request.precision = gpuperf::NumericFormat::kFp16;
  const auto fp16 = gpuperf::advise(request, db, {}, impossible);
  CHECK(advice_for(fp16, "v100-sxm2-16gb").throughput_basis == gpuperf::ThroughputBasis::kEstimate);

  // A V100 measured in fp16 does not stand in for a bf16 request: the V100 cannot run one.
  request.precision = gpuperf::NumericFormat::kBf16;
  gpuperf::LoadedRun run{"v100.json", resnet_run(1100)};
  run.record.device.name = "Tesla V100-SXM2-16GB";
  run.record.device.sm_count = 80;
  run.record.device.memory_bytes = 16e9;
  const auto measured = gpuperf::advise(request, db, {run}, {});
  const auto& v100_measured = advice_for(measured, "v100-sxm2-16gb");
  CHECK(v100_measured.throughput_basis == gpuperf::ThroughputBasis::kNone);
  CHECK(says(v100_measured,
             "measured 1100 samples/s (v100.json, fp16, bs 256) not used: the "
             "datasheet gives this GPU no bf16 rate, so it cannot run a bf16 "
             "request"));
  request.precision = gpuperf::NumericFormat::kFp16;
  CHECK(advice_for(gpuperf::advise(request, db, {run}, {}), "v100-sxm2-16gb").throughput_basis ==
        gpuperf::ThroughputBasis::kMeasured);
}

TEST_CASE("a measured run's energy per sample replaces the TDP estimate", "[specs][advisor]") {
  const auto& db = shipped_specs();
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kBf16;
  gpuperf::LoadedRun run{"h200.json", resnet_run(4690)};
  run.record.config.precision = "bf16";
  run.record.telemetry.available = true;
  run.record.telemetry.energy_source = "energy counter";
  run.record.telemetry.energy_per_sample_joules = 0.2;  // above the TDP's 700 / 4690 = 0.1493
  const auto ranking = gpuperf::advise(request, db, {run}, {});
  const auto& h200 = advice_for(ranking, "h200-sxm-141gb");
  CHECK(h200.joules_per_sample == Approx(0.2));
  CHECK(h200.energy_basis == gpuperf::EnergyBasis::kMeasured);
  CHECK(says(h200,
             "energy: measured, 0.2000 J per sample (energy counter over the timed "
             "windows, h200.json)"));
  // The H100, estimated at the same 4690 samples/s: 700 W TDP / 4690 = 0.1493 J, an estimate.
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(h100.joules_per_sample == Approx(700.0 / 4690));
  CHECK(h100.energy_basis == gpuperf::EnergyBasis::kTdpEstimate);
  CHECK(says(h100, "energy: estimate, 700 W TDP x 1 / 4690 samples/s = 0.1493 J per sample"));
  for (const auto& a : ranking) CHECK_FALSE(says(a, "upper bound"));
  // On 2 GPUs (linear without a batch size) the measured GPUs' draw, 0.2 x 4690 = 938 W each,
  // over 9380 samples/s is again 0.2 J.
  request.gpu_count = 2;
  const auto two = gpuperf::advise(request, db, {run}, {});
  CHECK(advice_for(two, "h200-sxm-141gb").joules_per_sample == Approx(0.2 * 4690 * 2 / 9380));
  CHECK(says(advice_for(two, "h200-sxm-141gb"), "= 938 W per GPU; x 2 / 9380 samples/s"));
}

TEST_CASE("inference under a latency budget gets no throughput without a measurement",
          "[specs][advisor][inference]") {
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.mode = gpuperf::WorkloadKind::kInference;
  request.precision = gpuperf::NumericFormat::kFp16;
  request.batch_size = 64;
  request.latency_budget_seconds = 5e-3;
  const auto ranking = gpuperf::advise(request, shipped_specs(), {}, {});
  for (const auto& a : ranking) {
    INFO(a.spec->id);
    CHECK(std::isnan(a.samples_per_second));
    CHECK(says(a,
               "a latency budget needs a measured latency: a datasheet cannot give batch-1 "
               "latency, so no estimate"));
  }
}

TEST_CASE("a run measured on JPEG files caps each GPU at what the host cores decode",
          "[specs][advisor]") {
  const auto& db = shipped_specs();
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kFp16;
  gpuperf::LoadedRun run{"h200-files.json", resnet_run(5438)};
  run.record.config.precision = "fp16";
  run.record.metrics["loader_images_per_second_per_core"] = 300;
  run.record.metrics["loader_threads"] = 14;
  // The run's own 14 threads: 4,200 img/s, below the H200's 5,438.
  auto ranking = gpuperf::advise(request, db, {run}, {});
  REQUIRE(ranking[0].spec->id == "h200-sxm-141gb");
  CHECK(ranking[0].samples_per_second == Approx(14 * 300));
  CHECK(says(ranking[0],
             "input-bound: JPEG decoding on the host delivers 14 CPU cores per GPU "
             "(the measured run's threads) x 300 img/s per core (h200-files.json)"));
  // 32 cores per GPU keep up: the measured rate stands, and the reasons say why.
  request.host_cores_per_gpu = 32;
  ranking = gpuperf::advise(request, db, {run}, {});
  CHECK(ranking[0].samples_per_second == Approx(5438));
  CHECK(says(ranking[0], "the input keeps up: 32 CPU cores per GPU x 300 img/s per core"));
  // Two GPUs need twice the input: 2 x 8 cores x 300 = 4,800 img/s caps both together.
  request.host_cores_per_gpu = 8;
  request.gpu_count = 2;
  ranking = gpuperf::advise(request, db, {run}, {});
  for (const auto& a : ranking) {
    INFO(a.spec->id);
    CHECK(a.samples_per_second <= 2 * 8 * 300 + 1e-6);
  }
  // A run whose files the GPU decoded: its per-core figure is file reading, no cap on cores.
  request.gpu_count = 1;
  ranking = gpuperf::advise(request, db, {run}, {});
  for (const auto& a : ranking) CHECK(a.samples_per_second <= 8 * 300 + 1e-6);
  run.record.metrics["loader_decodes_on_gpu"] = 1;
  ranking = gpuperf::advise(request, db, {run}, {});
  REQUIRE(ranking[0].spec->id == "h200-sxm-141gb");
  CHECK(ranking[0].samples_per_second == Approx(5438));
  // One whose GPU path had its threads decode every file (the adaptive share from 1): their rate
  // per core is decoding. 8 cores x 300 = 2,400 img/s is below the 5,438 they would need: said,
  // with nvJPEG to take the rest, and not capped; the run's own 14 threads x 400 keep up.
  run.record.metrics["loader_host_decode_share"] = 1;
  ranking = gpuperf::advise(request, db, {run}, {});
  REQUIRE(ranking[0].spec->id == "h200-sxm-141gb");
  CHECK(ranking[0].samples_per_second == Approx(5438));
  CHECK(says(ranking[0],
             "the host decodes 8 CPU cores per GPU x 300 img/s per core (h200-files.json) x 1 "
             "GPU(s) = 2400 img/s, below the 5438 img/s that run's host share (100% of the "
             "files) needs at this rate: nvJPEG would take more of each batch"));
  request.host_cores_per_gpu = std::numeric_limits<double>::quiet_NaN();
  run.record.metrics["loader_images_per_second_per_core"] = 400;
  ranking = gpuperf::advise(request, db, {run}, {});
  CHECK(says(ranking[0],
             "the input keeps up: 14 CPU cores per GPU (the measured run's threads) x "
             "400 img/s per core (h200-files.json) x 1 GPU(s) = 5600 img/s decode "
             "the run's host share (100% of the files)"));
  request.host_cores_per_gpu = 8;
  // Without a run on files nothing is capped.
  run.record.metrics.clear();
  ranking = gpuperf::advise(request, db, {run}, {});
  CHECK(ranking[0].samples_per_second == Approx(5438));
  request.mode = gpuperf::WorkloadKind::kInference;
  CHECK_THROWS_WITH(request.validate(), Catch::Contains("AdvisorRequest::host_cores_per_gpu: '8' "
                                                        "applies to training only"));
  request.mode = gpuperf::WorkloadKind::kTrain;
  request.host_cores_per_gpu = 0;
  CHECK_THROWS_WITH(request.validate(), Catch::Contains("AdvisorRequest::host_cores_per_gpu"));
}

TEST_CASE("the advisor rejects bad requests naming the field", "[specs][advisor]") {
  gpuperf::AdvisorRequest r;
  r.parameters = -5;
  CHECK_THROWS_WITH(r.validate(), Catch::Contains("AdvisorRequest::parameters: '-5'"));
  r = {};
  CHECK_THROWS_WITH(r.validate(), Catch::Contains("model name or a parameter count"));
  r.model = "gpt9";
  CHECK_THROWS_WITH(r.validate(), Catch::Contains("AdvisorRequest::model: 'gpt9'"));
  r.model = "resnet50";
  r.budget_usd = -100;
  CHECK_THROWS_WITH(r.validate(), Catch::Contains("AdvisorRequest::budget_usd: '-100'"));
  r.budget_usd = 100;
  r.precision = gpuperf::NumericFormat::kInt8;  // inference only
  CHECK_THROWS_WITH(r.validate(), Catch::Contains("AdvisorRequest::precision: 'int8'"));
  r.precision = gpuperf::NumericFormat::kBf16;
  r.gpu_count = 0;
  CHECK_THROWS_WITH(r.validate(), Catch::Contains("AdvisorRequest::gpu_count: '0'"));
  // A counted model and a parameter count that contradicts it.
  r.gpu_count = 1;
  r.parameters = 7e9;
  CHECK_THROWS_WITH(r.validate(), Catch::StartsWith("AdvisorRequest::parameters: '7e+09' "
                                                    "contradicts model 'resnet50'"));
  r.parameters = 25557032;  // its own count: no contradiction
  CHECK_NOTHROW(r.validate());
}

TEST_CASE("each GPU is costed at its own rental price, then the price for all, then its purchase",
          "[specs][advisor]") {
  // resnet50 bf16 measured at 4690 img/s on the H200; the H100 SXM5 (the same bf16 peak, 989.4
  // TFLOPS) is estimated at 4690 too. One GPU each.
  gpuperf::LoadedRun run{"h200.json", resnet_run(4690)};
  run.record.config.precision = "bf16";
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.batch_size = 256;
  request.price_per_hour_by_gpu = {{"H200 SXM 141GB", 3.5}};  // by name
  request.price_per_hour_usd = 2.0;
  auto ranking = gpuperf::advise(request, shipped_specs(), {run}, {});
  const auto& h200 = advice_for(ranking, "h200-sxm-141gb");
  CHECK(h200.price_source == gpuperf::PriceSource::kGivenForGpu);
  CHECK(h200.price_per_hour_usd == 3.5);
  // 3.5 USD/h / 3600 s/h / 4690 img/s x 1e6 = 0.2072968 USD per million images.
  CHECK(h200.cost_usd_per_million == Approx(0.2072968).epsilon(1e-6));
  CHECK(says(h200, "cost basis: 3.50 USD per GPU-hour, given for this GPU (rental)"));
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(h100.price_source == gpuperf::PriceSource::kGivenForAll);
  // 2 / 3600 / 4690 x 1e6 = 0.1184553.
  CHECK(h100.cost_usd_per_million == Approx(0.1184553).epsilon(1e-6));
  CHECK(says(h100, "cost basis: 2.00 USD per GPU-hour, given for every GPU without its own price"));

  // Without the price for all, a GPU not named falls back to its purchase price: the RTX 4090's
  // 1599 USD / (3 x 8766 h) + 450 W x 0.15 USD/kWh = 0.0608031 + 0.0675 = 0.1283031 USD/h.
  request.price_per_hour_usd = std::nan("");
  request.price_per_hour_by_gpu = {{"h100-sxm5-80gb", 2.49}, {"NVIDIA H200", 3.5}};  // id, device
  ranking = gpuperf::advise(request, shipped_specs(), {run}, {});
  const auto& rtx = advice_for(ranking, "rtx-4090");
  CHECK(rtx.price_source == gpuperf::PriceSource::kPurchase);
  CHECK(rtx.price_per_hour_usd == Approx(0.1283031).epsilon(1e-6));
  CHECK(advice_for(ranking, "h100-sxm5-80gb").price_per_hour_usd == 2.49);
  CHECK(advice_for(ranking, "h200-sxm-141gb").price_per_hour_usd == 3.5);
  // No price at all (the A100 SXM4 80GB has none in the datasheet): no cost.
  const auto& a100 = advice_for(ranking, "a100-sxm4-80gb");
  CHECK(a100.price_source == gpuperf::PriceSource::kNone);
  CHECK(std::isnan(a100.cost_usd_per_million));

  // Names that are no entry, or two names of one entry, are refused before anything is ranked.
  request.price_per_hour_by_gpu = {{"Voodoo 5", 2}};
  CHECK_THROWS_WITH(gpuperf::advise(request, shipped_specs(), {run}, {}),
                    Catch::StartsWith("AdvisorRequest::price_per_hour_by_gpu: 'Voodoo 5=2': "
                                      "unknown GPU 'Voodoo 5'"));
  request.price_per_hour_by_gpu = {{"h100-sxm5-80gb", 2}, {"H100 SXM5 80GB", 3}};
  CHECK_THROWS_WITH(gpuperf::advise(request, shipped_specs(), {run}, {}),
                    Catch::Contains("'h100-sxm5-80gb=2': prices h100-sxm5-80gb a second time "
                                    "(also as 'H100 SXM5 80GB')"));
  request.price_per_hour_by_gpu = {{"h100-sxm5-80gb", 0}};
  CHECK_THROWS_WITH(request.validate(),
                    Catch::StartsWith("AdvisorRequest::price_per_hour_by_gpu: 'h100-sxm5-80gb=0' "
                                      "must be a finite price > 0"));
  request.price_per_hour_by_gpu = {{"h100-sxm5-80gb", std::nan("")}};
  CHECK_THROWS_AS(request.validate(), gpuperf::ConfigError);
}

TEST_CASE("a GPU given no price takes the default table's, before its purchase price",
          "[specs][advisor][prices]") {
  // resnet50 bf16 measured at 4690 img/s on the H200; the H100 SXM5 (the same bf16 peak) is
  // estimated at 4690 too. One GPU each.
  gpuperf::LoadedRun run{"h200.json", resnet_run(4690)};
  run.record.config.precision = "bf16";
  const std::vector<gpuperf::RentalPrice> table = {
      table_price("h100-sxm5-80gb", 2.69, "single GPU, H100 SXM 80 GB"),
      table_price("h200-sxm-141gb", 3.99, ""), table_price("rtx-4090", 0.44, "")};
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.batch_size = 256;

  // Its own price beats the price for all, which beats the table: the H200 at 3.5 (not 3.99),
  // the H100 at 2.0 (not 2.69).
  request.price_per_hour_by_gpu = {{"h200-sxm-141gb", 3.5}};
  request.price_per_hour_usd = 2.0;
  auto ranking = gpuperf::advise(request, shipped_specs(), {run}, {}, table);
  CHECK(advice_for(ranking, "h200-sxm-141gb").price_source == gpuperf::PriceSource::kGivenForGpu);
  CHECK(advice_for(ranking, "h200-sxm-141gb").price_per_hour_usd == 3.5);
  CHECK(advice_for(ranking, "h100-sxm5-80gb").price_source == gpuperf::PriceSource::kGivenForAll);
  CHECK(advice_for(ranking, "h100-sxm5-80gb").price_per_hour_usd == 2.0);
  CHECK_FALSE(advice_for(ranking, "h100-sxm5-80gb").table_price);

  // Without the price for all, the table beats the purchase price: the H100 at 2.69 USD/h, 2.69 /
  // 3600 / 4690 x 1e6 = 0.1593224 USD per million images; the RTX 4090 at 0.44. The RTX 3090,
  // not in the table, keeps its purchase price: 1499 USD / (3 x 8766 h) + 350 W x 0.15 USD/kWh =
  // 0.0570005 + 0.0525 = 0.1095005 USD/h. The A100 SXM4 80GB has neither: no cost.
  request.price_per_hour_usd = std::nan("");
  ranking = gpuperf::advise(request, shipped_specs(), {run}, {}, table);
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(h100.price_source == gpuperf::PriceSource::kDefaultTable);
  CHECK(h100.price_per_hour_usd == 2.69);
  CHECK(h100.cost_usd_per_million == Approx(0.1593224).epsilon(1e-6));
  REQUIRE(h100.table_price);
  CHECK(h100.table_price->provider == "Test Cloud");
  CHECK(says(h100,
             "cost basis: 2.69 USD per GPU-hour, on-demand at Test Cloud, 2026-01-31 "
             "(https://example.com/pricing; single GPU, H100 SXM 80 GB); prices vary by provider "
             "and term: give this GPU's own in AdvisorRequest::price_per_hour_by_gpu"));
  CHECK(advice_for(ranking, "h200-sxm-141gb").price_per_hour_usd == 3.5);
  CHECK(advice_for(ranking, "rtx-4090").price_source == gpuperf::PriceSource::kDefaultTable);
  CHECK(advice_for(ranking, "rtx-4090").price_per_hour_usd == 0.44);
  CHECK(says(advice_for(ranking, "rtx-4090"),
             "on-demand at Test Cloud, 2026-01-31 (https://example.com/pricing); prices vary"));
  CHECK(advice_for(ranking, "rtx-3090").price_source == gpuperf::PriceSource::kPurchase);
  CHECK(advice_for(ranking, "rtx-3090").price_per_hour_usd == Approx(0.1095005).epsilon(1e-6));
  CHECK(advice_for(ranking, "a100-sxm4-80gb").price_source == gpuperf::PriceSource::kNone);
  // The table shows the basis of every price and says how old the table's are.
  std::ostringstream out;
  gpuperf::write_advice(out, request, ranking);
  CHECK_THAT(out.str(), Catch::Contains("USD per GPU-h (basis) |") &&
                            Catch::Contains("| 2.69 (table) | 0.159 |") &&
                            Catch::Contains("| 3.50 (this GPU) | 0.207 |") &&
                            Catch::Contains("Prices: GPUs marked (table) are costed at the "
                                            "default table's on-demand rental prices, read "
                                            "2026-01-31;"));

  // With no table (the program's --no-default-prices), the purchase price is the basis again: the
  // H100's 30000 USD / (3 x 8766 h) + 700 W x 0.15 USD/kWh = 1.1407712 + 0.105 = 1.2457712 USD/h,
  // the RTX 4090's 0.1283031; and no price column without a price given or a run.
  request.price_per_hour_by_gpu.clear();
  ranking = gpuperf::advise(request, shipped_specs(), {run}, {});
  CHECK(advice_for(ranking, "h100-sxm5-80gb").price_source == gpuperf::PriceSource::kPurchase);
  CHECK(advice_for(ranking, "h100-sxm5-80gb").price_per_hour_usd ==
        Approx(1.2457712).epsilon(1e-6));
  CHECK(advice_for(ranking, "rtx-4090").price_per_hour_usd == Approx(0.1283031).epsilon(1e-6));
  CHECK(says(advice_for(ranking, "h100-sxm5-80gb"), "cost basis: price 30000 USD"));
  std::ostringstream plain;
  gpuperf::write_advice(plain, request, ranking);
  CHECK_THAT(plain.str(), !Catch::Contains("(basis)") && !Catch::Contains("Prices:"));

  // A table entry that names no datasheet GPU, names one twice or has no price is refused.
  CHECK_THROWS_WITH(
      gpuperf::advise(request, shipped_specs(), {run}, {}, {table_price("voodoo-5", 1, "")}),
      Catch::StartsWith("default_prices: 'voodoo-5=1': 'voodoo-5' is not a "
                        "datasheet id"));
  CHECK_THROWS_WITH(gpuperf::advise(request, shipped_specs(), {run}, {},
                                    {table[0], table_price("h100-sxm5-80gb", 3, "")}),
                    Catch::Contains("'h100-sxm5-80gb=3': prices h100-sxm5-80gb a second time"));
  CHECK_THROWS_WITH(
      gpuperf::advise(request, shipped_specs(), {run}, {}, {table_price("l4", 0, "")}),
      Catch::StartsWith("default_prices: 'l4=0' must be a finite price > 0"));
}

TEST_CASE("a run at a default-table price is budgeted at its cost, as a rented run",
          "[specs][advisor][prices]") {
  gpuperf::LoadedRun run{"h200.json", resnet_run(4690)};
  run.record.config.precision = "bf16";
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.batch_size = 256;
  request.epochs = 90;
  request.budget_usd = 20;
  const std::vector<gpuperf::RentalPrice> table = {table_price("h100-sxm5-80gb", 2.69, "")};
  // 90 x 1,281,167 images / 4690 img/s / 3600 = 6.829248 h; x 2.69 USD/h = 18.37068 USD, within
  // the 20 USD budget.
  auto ranking = gpuperf::advise(request, shipped_specs(), {run}, {}, table);
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(h100.run_cost_usd == Approx(18.37068).epsilon(1e-6));
  CHECK_FALSE(h100.over_budget);
  CHECK(says(h100,
             "run cost: 6.83 h x 1 GPU(s) x 2.690 USD per GPU-hour (on-demand at Test Cloud, "
             "2026-01-31) = 18.37 USD"));
  CHECK(says(h100, "budget: the rented run costs 18.37 USD, within 20 USD"));
  // Without the table the H100's basis is its purchase price, and so is the budget's: 30000 USD.
  ranking = gpuperf::advise(request, shipped_specs(), {run}, {});
  const auto& bought = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(bought.over_budget);
  CHECK(says(bought, "budget: 1 x 30000 = 30000 USD purchase exceeds 20 USD"));
}

TEST_CASE("a run of epochs or tokens gets its hours and its cost at each GPU's price",
          "[specs][advisor]") {
  gpuperf::LoadedRun run{"h200.json", resnet_run(4690)};
  run.record.config.precision = "bf16";
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.batch_size = 256;
  request.epochs = 90;
  request.price_per_hour_by_gpu = {{"h200-sxm-141gb", 3.5}};
  request.price_per_hour_usd = 2.0;
  request.budget_usd = 20;
  auto ranking = gpuperf::advise(request, shipped_specs(), {run}, {});
  // 90 x 1,281,167 = 115,305,030 images / 4690 img/s / 3600 = 6.829248 h; at 3.5 USD/h on one
  // GPU 23.90237 USD, over the 20 USD budget; the H100 (estimated at 4690) at 2 USD/h 13.65850.
  const auto& h200 = advice_for(ranking, "h200-sxm-141gb");
  CHECK(h200.run_hours == Approx(6.829248).epsilon(1e-6));
  CHECK(h200.run_cost_usd == Approx(23.90237).epsilon(1e-6));
  CHECK(h200.over_budget);
  CHECK(says(h200,
             "run: 90 epochs x 1,281,167 ImageNet-1k images = 115,305,030 samples / 4690 "
             "samples/s (1 GPU(s) together) / 3600 = 6.83 h"));
  CHECK(says(h200,
             "run cost: 6.83 h x 1 GPU(s) x 3.500 USD per GPU-hour (given for this GPU) = "
             "23.90 USD"));
  CHECK(says(h200, "budget: the rented run costs 23.90 USD, exceeds 20 USD"));
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK(h100.run_cost_usd == Approx(13.65850).epsilon(1e-6));
  CHECK_FALSE(h100.over_budget);
  std::ostringstream table;
  gpuperf::write_advice(table, request, ranking);
  CHECK_THAT(table.str(), Catch::Contains("run h | run USD |") &&
                              Catch::Contains("| 3.50 (this GPU) | 0.207 | 6.8 | 24 |"));

  // 7e9 parameters, 4096 tokens per sample, 1e9 tokens on the H200 at 30% of its 989.4 TFLOPS
  // bf16 peak: 6 x 7e9 x 1e9 FLOP / 296.82e12 FLOP/s / 3600 = 39.30553 h; at 3.5 USD/h 137.5693
  // USD. On 8 GPUs (no batch size: linear scaling) the run takes 1/8 of the hours and costs the
  // same: 4.913191 h x 8 GPUs x 3.5 USD/h.
  gpuperf::AdvisorRequest lm;
  lm.parameters = 7e9;
  lm.sequence_length = 4096;
  lm.tokens = 1e9;
  lm.price_per_hour_by_gpu = {{"h200", 3.5}};
  for (const int gpus : {1, 8}) {
    INFO(gpus << " GPUs");
    lm.gpu_count = gpus;
    const auto lm_ranking = gpuperf::advise(lm, shipped_specs());
    const auto& a = advice_for(lm_ranking, "h200-sxm-141gb");
    CHECK(a.run_hours == Approx(39.30553 / gpus).epsilon(1e-6));
    CHECK(a.run_cost_usd == Approx(137.5693).epsilon(1e-6));
    CHECK(says(a, "1e+09 tokens / 4096 per sample = 244140.6 samples"));
  }

  // The options are checked: > 0 and finite, one of them, training only, the right model kind.
  gpuperf::AdvisorRequest bad;
  bad.model = "resnet50";
  bad.epochs = 0;
  CHECK_THROWS_WITH(bad.validate(),
                    Catch::StartsWith("AdvisorRequest::epochs: '0' must be a number > 0"));
  bad.epochs = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(bad.validate(), Catch::StartsWith("AdvisorRequest::epochs: 'inf'"));
  bad.epochs = 90;
  bad.tokens = 1e9;
  CHECK_THROWS_WITH(bad.validate(), Catch::StartsWith("AdvisorRequest::epochs: '90' and tokens "
                                                      "'1e+09' both give the run"));
  bad.tokens = std::nan("");
  bad.mode = gpuperf::WorkloadKind::kInference;
  CHECK_THROWS_WITH(bad.validate(),
                    Catch::StartsWith("AdvisorRequest::epochs: '90' applies to training only"));
  bad.mode = gpuperf::WorkloadKind::kTrain;
  bad.model.clear();
  bad.parameters = 7e9;
  CHECK_THROWS_WITH(bad.validate(), Catch::StartsWith("AdvisorRequest::epochs: '90' applies to "
                                                      "an image model"));
  bad.epochs = std::nan("");
  bad.tokens = 1e9;
  CHECK_NOTHROW(bad.validate());
  bad.model = "resnet50";
  bad.parameters = std::nan("");
  CHECK_THROWS_WITH(bad.validate(), Catch::StartsWith("AdvisorRequest::tokens: '1e+09' applies "
                                                      "to a parameter-count model"));
}

TEST_CASE("on several GPUs the memory need is the per-GPU need of the sharding that fits",
          "[specs][advisor]") {
  // 16e9 parameters, bf16 Adam, 8 GPUs, no activations. The planner counts, per GPU (P params):
  // data parallel 2P weights + 2P gradients + 4P master + 8P states + 2P buckets = 18P; ZeRO-1
  // 4P + 12P/8; ZeRO-2 2P + 14P/8; ZeRO-3 16P/8. The reserve: 1e9 + 5% of the memory.
  //   H100 SXM5 80GB (reserve 5e9): 288e9, ZeRO-1 88e9 + 5e9 = 93e9: no;
  //     ZeRO-2 32e9 + 28e9 + 5e9 = 65e9: fits
  //   H200 141GB (reserve 8.05e9): ZeRO-1 64e9 + 24e9 + 8.05e9 = 96.05e9: fits
  //   RTX 4090 24GB (reserve 2.2e9): ZeRO-3 32e9 + 2.2e9 = 34.2e9: nothing fits
  gpuperf::AdvisorRequest request;
  request.parameters = 16e9;
  request.gpu_count = 8;
  const auto ranking = gpuperf::advise(request, shipped_specs());
  const auto& h100 = advice_for(ranking, "h100-sxm5-80gb");
  CHECK_FALSE(h100.fits);
  CHECK(h100.fits_sharded);
  CHECK(h100.memory_strategy == "ZeRO-2");
  CHECK(h100.memory_need_bytes == Approx(65e9));
  CHECK(says(h100, "ZeRO-1, optimizer states sharded over 8 GPUs:"));
  CHECK(says(h100, "= 93 GB per GPU of 80 GB: does not fit"));
  CHECK(says(h100, "ZeRO-2, optimizer states and gradients sharded over 8 GPUs:"));
  CHECK(says(h100, "= 65 GB per GPU of 80 GB: fits"));
  CHECK(says(h100, "needs ZeRO-2"));
  const auto& h200 = advice_for(ranking, "h200-sxm-141gb");
  CHECK(h200.memory_strategy == "ZeRO-1");
  CHECK(h200.memory_need_bytes == Approx(96.05e9));
  const auto& rtx = advice_for(ranking, "rtx-4090");
  CHECK_FALSE(rtx.fits);
  CHECK_FALSE(rtx.fits_sharded);
  CHECK(rtx.memory_need_bytes == Approx(34.2e9));
  CHECK(says(rtx, "no sharding fits"));
  // The unsharded replica's parts stay the advisor's own count.
  CHECK(h100.memory.weights == Approx(16e9 * 6));

  std::ostringstream table;
  gpuperf::write_advice(table, request, ranking);
  CHECK_THAT(table.str(), Catch::Contains("| H100 SXM5 80GB | ZeRO-2 | 65 GB / 80 GB |") &&
                              Catch::Contains("| H200 SXM 141GB | ZeRO-1 | 96.05 GB / 141 GB |") &&
                              Catch::Contains("| GeForce RTX 4090 | no | 34.2 GB / 24 GB |"));

  // 30e9 on 8 H200s: ZeRO-2 60e9 + 52.5e9 + 8.05e9 = 120.55e9 fits; on 8 H100s only ZeRO-3,
  // 480e9 / 8 + 5e9 = 65e9, which all-gathers the weights: a fast link.
  request.parameters = 30e9;
  const auto large = gpuperf::advise(request, shipped_specs());
  CHECK(advice_for(large, "h200-sxm-141gb").memory_strategy == "ZeRO-2");
  CHECK(advice_for(large, "h200-sxm-141gb").memory_need_bytes == Approx(120.55e9));
  const auto& h100_large = advice_for(large, "h100-sxm5-80gb");
  CHECK(h100_large.memory_strategy == "ZeRO-3");
  CHECK(h100_large.memory_need_bytes == Approx(65e9));
  CHECK(h100_large.fast_link_needed);
  CHECK(says(h100_large, "gathered layers are not counted"));

  // Data parallel fits: the planner's replica with its all-reduce buckets, 18 x 1e9 + 5e9.
  request.parameters = 1e9;
  const auto small = gpuperf::advise(request, shipped_specs());
  const auto& h100_small = advice_for(small, "h100-sxm5-80gb");
  CHECK(h100_small.fits);
  CHECK(h100_small.memory_strategy == "data parallel");
  CHECK(h100_small.memory_need_bytes == Approx(23e9));
}

TEST_CASE("the inference advisor quotes the best measured batch size within the latency budget",
          "[specs][advisor][inference]") {
  const auto& db = shipped_specs();
  // A measured H200 result (figures from docs/examples/h200-resnet50-infer-fp16-cl-graph.json):
  // batch 1 p50 0.918 / p99 0.922 ms, batch 64 4.355 / 4.369 ms, batch 512 29.299 / 29.338 ms.
  gpuperf::InferenceResult r;
  r.model = "resnet50";
  r.precision = "fp16";
  r.cuda_graph = true;
  r.fingerprint.name = "NVIDIA H200";
  for (auto [batch, p50, p99] : {std::tuple<std::int64_t, double, double>{1, 0.918e-3, 0.922e-3},
                                 {64, 4.355e-3, 4.369e-3},
                                 {512, 29.299e-3, 29.338e-3}}) {
    gpuperf::BatchSizeResult b;
    b.batch_size = batch;
    b.latency.count = 200;
    b.latency.p50 = p50;
    b.latency.p99 = p99;
    b.throughput_median = static_cast<double>(batch) / p50;
    r.batches.push_back(b);
  }
  gpuperf::LoadedResults measured;
  // An eager run first (docs/examples/h200-resnet50-infer-fp16-cl-eager.json, batch 1: p50 3.649,
  // p99 4.503 ms): every GPU quotes, and scales from, the best measured setting, not the first.
  gpuperf::InferenceResult eager = r;
  eager.cuda_graph = false;
  eager.batches.resize(1);
  eager.batches[0].latency.p50 = 3.649e-3;
  eager.batches[0].latency.p99 = 4.503e-3;
  eager.batches[0].throughput_median = 1 / 3.649e-3;
  measured.inference.push_back({"h200-eager.json", eager});
  measured.inference.push_back({"h200-infer.json", r});
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.mode = gpuperf::WorkloadKind::kInference;
  request.precision = gpuperf::NumericFormat::kFp16;
  auto find = [](const std::vector<gpuperf::GpuAdvice>& ranking, const std::string& id) {
    const auto it = std::find_if(ranking.begin(), ranking.end(),
                                 [&](const auto& a) { return a.spec->id == id; });
    REQUIRE(it != ranking.end());
    return *it;
  };

  // No budget: the best throughput, batch 512.
  auto h200 = find(gpuperf::advise_with(request, db, measured), "h200-sxm-141gb");
  CHECK(h200.throughput_basis == gpuperf::ThroughputBasis::kMeasured);
  CHECK(h200.measured_batch_size == 512);
  CHECK(h200.samples_per_second == Approx(512 / 29.299e-3));
  CHECK(h200.latency_status == gpuperf::LatencyStatus::kNoBudget);

  // 5 ms: batch 512 misses, batch 64 (p99 4.369 ms) is the best that fits; it ranks before the
  // unmeasured GPUs even where their datasheet estimate is higher.
  request.latency_budget_seconds = 5e-3;
  auto ranking = gpuperf::advise_with(request, db, measured);
  h200 = find(ranking, "h200-sxm-141gb");
  CHECK(h200.measured_batch_size == 64);
  CHECK(h200.samples_per_second == Approx(64 / 4.355e-3));
  CHECK(h200.latency_p99 == Approx(4.369e-3));
  CHECK(h200.latency_status == gpuperf::LatencyStatus::kMeetsBudget);
  CHECK(ranking[0].spec->id == "h200-sxm-141gb");
  // The unmeasured GPUs get no throughput: only a measured latency can meet a budget.
  const auto b200 = find(ranking, "b200");
  CHECK(b200.latency_status == gpuperf::LatencyStatus::kNotMeasured);
  CHECK(b200.throughput_basis == gpuperf::ThroughputBasis::kNone);
  CHECK(std::isnan(b200.samples_per_second));

  // 0.5 ms: nothing measured fits; the H200 says so and ranks after GPUs not measured.
  request.latency_budget_seconds = 0.5e-3;
  ranking = gpuperf::advise_with(request, db, measured);
  h200 = find(ranking, "h200-sxm-141gb");
  CHECK(h200.latency_status == gpuperf::LatencyStatus::kMissesBudget);
  CHECK(std::isnan(h200.samples_per_second));
  CHECK(ranking[0].spec->id != "h200-sxm-141gb");
  CHECK(std::any_of(h200.reasons.begin(), h200.reasons.end(), [](const std::string& line) {
    return line.find("no batch size meets p99 <= 0.500 ms: batch 1 has p99 0.922 ms") !=
           std::string::npos;
  }));
  std::ostringstream text;
  gpuperf::write_advice(text, request, ranking);
  CHECK_THAT(text.str(), Catch::Contains("Basis: measured on H200 SXM 141GB") &&
                             Catch::Contains("0.918 / 0.922 (1) misses budget"));

  // A batch size the file does not hold: not used, and said on that GPU.
  request.latency_budget_seconds = std::nan("");
  request.batch_size = 128;
  h200 = find(gpuperf::advise_with(request, db, measured), "h200-sxm-141gb");
  CHECK(h200.throughput_basis == gpuperf::ThroughputBasis::kEstimate);
  CHECK(std::any_of(h200.reasons.begin(), h200.reasons.end(), [](const std::string& line) {
    return line.find("has no batch 128 (measured: 1, 64, 512)") != std::string::npos;
  }));

  // Nothing measured: the output says the figures are datasheet estimates only.
  request.batch_size = 0;
  std::ostringstream plain;
  gpuperf::write_advice(plain, request, gpuperf::advise_with(request, db, {}));
  CHECK_THAT(plain.str(), Catch::Contains("Basis: datasheet figures only: no measured inference "
                                          "result matches this workload (advise() was given "
                                          "none), so every throughput below is an estimate") &&
                              Catch::Contains("no latency is known"));

  // A latency budget is for inference, and positive.
  request.latency_budget_seconds = -1;
  CHECK_THROWS_WITH(request.validate(),
                    Catch::Contains("AdvisorRequest::latency_budget_seconds: '-1'"));
  request.latency_budget_seconds = 1e-3;
  request.mode = gpuperf::WorkloadKind::kTrain;
  CHECK_THROWS_WITH(request.validate(), Catch::Contains("applies to inference only"));
}

TEST_CASE("the advisor scales by a measured data-parallel run and quotes the link model beside it",
          "[specs][advisor][distributed]") {
  const auto& db = shipped_specs();
  gpuperf::AdvisorRequest request;
  request.model = "resnet50";
  request.precision = gpuperf::NumericFormat::kBf16;
  request.batch_size = 256;
  request.gpu_count = 2;
  const auto h200_of = [](const std::vector<gpuperf::GpuAdvice>& ranking) {
    const auto it = std::find_if(ranking.begin(), ranking.end(),
                                 [](const auto& a) { return a.spec->id == "h200-sxm-141gb"; });
    REQUIRE(it != ranking.end());
    return *it;
  };
  const auto says = [](const gpuperf::GpuAdvice& a, const std::string& text) {
    return std::any_of(a.reasons.begin(), a.reasons.end(), [&](const std::string& line) {
      return line.find(text) != std::string::npos;
    });
  };
  gpuperf::LoadedRun one{"h200-1gpu.json", resnet_run(1000)};
  one.record.config.precision = "bf16";
  // Without a data-parallel run: the datasheet link model (compute-bound here: 2 x 1000).
  const auto linked = h200_of(gpuperf::advise(request, db, {one}, {}));
  CHECK(linked.samples_per_second == Approx(2000));
  CHECK_FALSE(says(linked, "measured scaling"));

  // Two ranks at 1800 together: 90% of 2 x 1000. Rank 0's 900 is not taken as the per-GPU rate.
  gpuperf::LoadedRun two{"h200-2gpu.json", resnet_run(900)};
  two.record.config.precision = "bf16";
  two.record.distributed.world_size = 2;
  two.record.distributed.interconnect = "NVLink";
  two.record.distributed.global_throughput = 1800;
  auto a = h200_of(gpuperf::advise(request, db, {two, one}, {}));
  CHECK(a.throughput_basis == gpuperf::ThroughputBasis::kMeasured);
  CHECK(a.samples_per_second == Approx(1800));
  CHECK(says(a, "measured scaling: 90.0% on 2 GPUs (NVLink, h200-2gpu.json)"));
  CHECK(says(a, "the 1-GPU run h200-1gpu.json"));
  CHECK(says(a, "the link model predicts 100.0% (2000 samples/s)"));
  CHECK(says(a, "ran data-parallel on 2 GPUs"));
  // Other GPUs keep the link model: the run measured the H200's scaling only.
  const auto ranking = gpuperf::advise(request, db, {two, one}, {});
  for (const auto& other : ranking) {
    if (other.spec->id != "h200-sxm-141gb") CHECK_FALSE(says(other, "measured scaling"));
  }

  // Four GPUs: the same efficiency, extrapolated and said to be.
  request.gpu_count = 4;
  a = h200_of(gpuperf::advise(request, db, {two, one}, {}));
  CHECK(a.samples_per_second == Approx(3600));
  CHECK(says(a, "extrapolated from 2 to 4 GPUs at the same efficiency (not measured on 4)"));

  // The record's own efficiency comes first; without it or a 1-GPU run, the link model.
  two.record.distributed.scaling_efficiency = 0.85;
  two.record.distributed.baseline_throughput = 1050;
  a = h200_of(gpuperf::advise(request, db, {two, one}, {}));
  CHECK(a.samples_per_second == Approx(4 * 1000 * 0.85));
  CHECK(says(a, "measured scaling: 85.0% on 2 GPUs (NVLink, h200-2gpu.json)"));
  CHECK(says(a, "its recorded baseline"));
  two.record.distributed.scaling_efficiency = std::nan("");
  a = h200_of(gpuperf::advise(request, db, {two}, {}));
  CHECK(says(a, "measured scaling: not known from h200-2gpu.json"));
  CHECK_FALSE(says(a, "the link model predicts"));

  // One GPU asked for: the scaling is not used at all.
  request.gpu_count = 1;
  a = h200_of(gpuperf::advise(request, db, {two, one}, {}));
  CHECK(a.samples_per_second == Approx(1000));
  CHECK_FALSE(says(a, "measured scaling"));
}
