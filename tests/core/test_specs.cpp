// The specs module: the datasheet database, efficiency figures, published results and rental
// prices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <tuple>

#include "gpuperf/base/error.h"
#include "gpuperf/results/run_record.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/specs/published.h"
#include "gpuperf/specs/rental_prices.h"
#include "gpuperf/specs/specs.h"

#include "specs_fixtures.h"

using gpuperf::testing::resnet_run;
using gpuperf::testing::shipped_specs;

namespace {

const std::string kData = GPUPERF_TEST_DATA_DIR;

std::string minimal_entry(const std::string& id, const std::string& extra = "") {
  return R"({"id": ")" + id + R"(", "name": "Test GPU", "memory_gb": 10, "bandwidth_gb_s": 100,
            "peak_tflops": {"fp32": 10, "bf16": 100}, "source": "test")" +
         extra + "}";
}

std::string spec_file(const std::string& entries) {
  return R"({"schema": "gpuperf.specs/1", "gpus": [)" + entries + "]}";
}

// A rental-price file of one entry with `fields` after its gpu_id.
std::string price_file(const std::string& gpu_id, const std::string& fields) {
  return R"({"schema": "gpuperf.rental_prices/1", "prices": [{"gpu_id": ")" + gpu_id + R"(", )" +
         fields + "}]}";
}

}  // namespace

TEST_CASE("the shipped spec database holds every reference GPU with sources", "[specs]") {
  const auto& db = shipped_specs();
  CHECK(db.gpus().size() == 16);
  for (const auto& gpu : db.gpus()) {
    INFO(gpu.id);
    CHECK_FALSE(gpu.source.empty());
    CHECK(gpu.memory_bytes > 0);
    CHECK(gpu.memory_bandwidth_bytes_per_s > 0);
    CHECK(gpu.peak("fp32") > 0);
  }
  const auto* h100 = db.find_id("h100-sxm5-80gb");
  REQUIRE(h100 != nullptr);
  CHECK(h100->peak("bf16") == Approx(989.4e12));
  CHECK(h100->peak("fp8") == Approx(1978.9e12));
  CHECK(h100->link_bytes_per_s == Approx(900e9));
  CHECK(h100->price_usd == Approx(30000));  // upper end of the 25k-30k range
  CHECK(h100->is_approximate("price_usd"));

  // GeForce: the FP32-accumulate rate is half the FP16-accumulate one.
  const auto* rtx4090 = db.find_id("rtx-4090");
  REQUIRE(rtx4090 != nullptr);
  CHECK(rtx4090->peak("fp16") == Approx(165.2e12));
  CHECK(rtx4090->peak("fp16_acc16") == Approx(330.3e12));
  CHECK(rtx4090->peak("tf32") == Approx(82.6e12));
  CHECK(rtx4090->price_usd == 1599);

  // "none" is stored as 0, "?" as NaN.
  const auto* v100 = db.find_id("v100-sxm2-16gb");
  REQUIRE(v100 != nullptr);
  CHECK(v100->peak("tf32") == 0);
  CHECK(v100->peak("bf16") == 0);
  CHECK(std::isnan(v100->price_usd));
  CHECK(std::isnan(db.find_id("rtx-5090")->peak("tf32")));
  CHECK(db.find_id("a100-pcie-80gb")->tdp_watts == 300);
  CHECK(db.find_id("a100-sxm4-80gb")->memory_bandwidth_bytes_per_s == Approx(2039e9));
  CHECK(db.find_id("b200")->memory_bandwidth_bytes_per_s == Approx(8000e9));
  CHECK(db.find_id("mi300x")->reference_only);
}

TEST_CASE("a running GPU is matched by name, SM count and memory", "[specs]") {
  const auto& db = shipped_specs();
  auto id_of = [&](const std::string& name, double sms, double bytes) {
    const auto m = db.match_device(name, sms, bytes);
    return m.spec != nullptr ? m.spec->id : "none: " + m.reason;
  };
  CHECK(id_of("NVIDIA H200", 132, 150.1e9) == "h200-sxm-141gb");
  CHECK(id_of("NVIDIA H100 80GB HBM3", 132, 85.0e9) == "h100-sxm5-80gb");
  CHECK(id_of("NVIDIA H100 PCIe", 114, 85.0e9) == "h100-pcie-80gb");
  CHECK(id_of("NVIDIA A100-SXM4-40GB", 108, 42.5e9) == "a100-sxm4-40gb");
  CHECK(id_of("NVIDIA A100-SXM4-80GB", 108, 85.1e9) == "a100-sxm4-80gb");
  CHECK(id_of("Tesla V100-SXM2-32GB", 80, 34.1e9) == "v100-sxm2-32gb");
  CHECK(id_of("NVIDIA L4", 58, 23.6e9) == "l4");
  CHECK(id_of("NVIDIA L40S", 142, 47.7e9) == "l40s");
  CHECK(id_of("NVIDIA GeForce RTX 4090", 128, 25.4e9) == "rtx-4090");

  const auto nvl = db.match_device("NVIDIA H200 NVL", 132, 150e9);
  CHECK(nvl.spec == nullptr);
  CHECK_THAT(nvl.reason, Catch::Contains("no datasheet entry"));
  const auto ti = db.match_device("NVIDIA GeForce RTX 3090 Ti", 84, 25.4e9);
  CHECK(ti.spec == nullptr);
  CHECK_THAT(ti.reason, Catch::Contains("84 SMs"));
  const auto cpu = db.match_device("AMD EPYC 7763 64-Core Processor", 2, 64e9);
  CHECK(cpu.spec == nullptr);
  CHECK_THAT(cpu.reason, Catch::Contains("no datasheet entry for 'AMD EPYC"));
}

TEST_CASE("user names resolve to entries and unknown names are a ConfigError", "[specs]") {
  const auto& db = shipped_specs();
  CHECK(db.resolve("h100-sxm5-80gb", "--gpu").id == "h100-sxm5-80gb");
  CHECK(db.resolve("GeForce RTX 4090", "--gpu").id == "rtx-4090");
  CHECK(db.resolve("RTX 3090", "--gpu").id == "rtx-3090");
  CHECK_THROWS_AS(db.resolve("Voodoo 5", "--gpu"), gpuperf::ConfigError);
  CHECK_THROWS_WITH(db.resolve("Voodoo 5", "--baseline"),
                    Catch::Contains("--baseline") && Catch::Contains("Voodoo 5"));
}

TEST_CASE("a user spec file patches an entry and adds a new one", "[specs]") {
  gpuperf::SpecDatabase db = shipped_specs();
  const std::size_t before = db.gpus().size();
  db.merge_json(spec_file(R"({"id": "rtx-4090", "price_usd": 1799, "tdp_w": 400},)" +
                          minimal_entry("my-gpu")),
                "user.json");
  CHECK(db.gpus().size() == before + 1);
  const auto* rtx = db.find_id("rtx-4090");
  CHECK(rtx->price_usd == 1799);
  CHECK(rtx->tdp_watts == 400);
  CHECK(rtx->peak("fp16") == Approx(165.2e12));  // untouched fields survive the patch
  CHECK(db.find_id("my-gpu")->peak("bf16") == Approx(100e12));
  CHECK(db.origins().back() == "user.json");

  // A bad file leaves the database as it was.
  CHECK_THROWS(db.merge_json(spec_file(R"({"id": "rtx-4090", "price_usd": -5})"), "bad.json"));
  CHECK(db.find_id("rtx-4090")->price_usd == 1799);
}

TEST_CASE("malformed or foreign spec files name the file and the field", "[specs]") {
  using gpuperf::SpecDatabase;
  CHECK_THROWS_WITH(SpecDatabase::from_json("{", "a.json"),
                    Catch::Contains("a.json") && Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(
      SpecDatabase::from_json(R"({"schema": "gpuperf.run/1"})", "b.json"),
      Catch::Contains("b.json: field 'schema'") && Catch::Contains("gpuperf.specs/1"));
  CHECK_THROWS_WITH(SpecDatabase::from_json(spec_file(""), "c.json"), Catch::Contains("empty"));
  CHECK_THROWS_WITH(
      SpecDatabase::from_json(spec_file(minimal_entry("x", R"(, "tdp_w": -1)")), "d.json"),
      Catch::Contains("d.json: field 'gpus[0] (x).tdp_w' is negative"));
  CHECK_THROWS_WITH(SpecDatabase::from_json(spec_file(R"({"id": "x", "name": "X", "memory_gb": 1,
          "bandwidth_gb_s": 1, "peak_tflops": {"fp33": 1}, "source": "s"})"),
                                            "e.json"),
                    Catch::Contains("peak_tflops.fp33' is not a known data type"));
  CHECK_THROWS_WITH(
      SpecDatabase::from_json(spec_file(minimal_entry("x", R"(, "l2_mb": "big")")), "f.json"),
      Catch::Contains("l2_mb' is the string 'big'"));
  CHECK_THROWS_WITH(
      SpecDatabase::from_json(spec_file(minimal_entry("x") + "," + minimal_entry("x")), "g.json"),
      Catch::Contains("appears twice"));
  // A key twice in one entry: JSON parsers keep the last, so one figure would silently replace
  // the other.
  CHECK_THROWS_WITH(SpecDatabase::from_json(
                        spec_file(minimal_entry("x", R"(, "tdp_w": 700, "tdp_w": 70)")), "i.json"),
                    Catch::Contains("i.json: field 'gpus[0].tdp_w' appears twice"));
  CHECK_THROWS_AS(SpecDatabase::load_file("/nonexistent/specs.json"), gpuperf::IoError);
  CHECK_THROWS_WITH(SpecDatabase::from_json(R"({"schema": 1E999})", "h.json"),
                    Catch::Contains("h.json: not valid JSON"));
  // A malformed data file is an IoError, like a malformed result file.
  CHECK_THROWS_AS(SpecDatabase::from_json("{", "a.json"), gpuperf::IoError);
  CHECK_THROWS_AS(SpecDatabase::from_json(spec_file(""), "c.json"), gpuperf::IoError);
  CHECK_THROWS_AS(
      SpecDatabase::from_json(spec_file(minimal_entry("x", R"(, "tdp_w": -1)")), "d.json"),
      gpuperf::IoError);
  gpuperf::SpecDatabase db = shipped_specs();
  CHECK_THROWS_AS(db.merge_json(spec_file(R"({"id": "rtx-4090", "price_usd": -5})"), "bad.json"),
                  gpuperf::IoError);
  CHECK_THROWS_AS(gpuperf::published_results_from_json(R"({"schema": "x"})", "p.json"),
                  gpuperf::IoError);
}

TEST_CASE("a hostile spec file nested too deep is refused, not a crash", "[specs]") {
  using gpuperf::SpecDatabase;
  // 100000 levels in a field nobody reads: the parser must refuse it before anything walks it.
  const std::size_t depth = 100000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  const std::string text = spec_file(minimal_entry("x", R"(, "unknown_field": )" + deep));
  CHECK_THROWS_AS(SpecDatabase::from_json(text, "deep.json"), gpuperf::IoError);
  CHECK_THROWS_WITH(SpecDatabase::from_json(text, "deep.json"),
                    Catch::Contains("deep.json") && Catch::Contains("nested deeper than 256"));
  gpuperf::SpecDatabase db = shipped_specs();
  CHECK_THROWS_AS(db.merge_json(text, "deep.json"), gpuperf::IoError);
  CHECK(db.gpus().size() == shipped_specs().gpus().size());
  // The limit itself: 256 levels of nesting read, 257 do not.
  auto nested = [&](std::size_t levels) {
    return spec_file(minimal_entry(
        "x", R"(, "unknown_field": )" + std::string(levels, '[') + std::string(levels, ']')));
  };
  // The entry's object sits inside the document's object and the "gpus" array: 3 levels.
  CHECK_NOTHROW(SpecDatabase::from_json(nested(256 - 3), "ok.json"));
  CHECK_THROWS_AS(SpecDatabase::from_json(nested(256 - 2), "deep.json"), gpuperf::IoError);
  // Texts over 64 MiB are refused before parsing.
  const std::string huge = spec_file(
      minimal_entry("x", R"(, "pad": ")" + std::string(std::size_t{65} << 20, 'x') + "\""));
  CHECK_THROWS_WITH(SpecDatabase::from_json(huge, "huge.json"),
                    Catch::Contains("huge.json") && Catch::Contains("64 MiB"));
}

TEST_CASE("the spec file is found through GPUPERF_SPECS and the build tree", "[specs]") {
  ::setenv("GPUPERF_SPECS", (kData + "/gpu_specs.json").c_str(), 1);
  CHECK(gpuperf::default_specs_path() == kData + "/gpu_specs.json");
  ::setenv("GPUPERF_SPECS", "/nonexistent/x.json", 1);
  CHECK_THROWS_WITH(gpuperf::default_specs_path(), Catch::Contains("GPUPERF_SPECS"));
  ::unsetenv("GPUPERF_SPECS");
  CHECK(gpuperf::SpecDatabase::load_default().gpus().size() == 16);
  CHECK_THROWS_AS(gpuperf::default_specs_path("/explicit/path.json"), gpuperf::IoError);
}

TEST_CASE("SimpleModel FLOPs match a layer-by-layer sum written out here", "[specs][efficiency]") {
  // conv 3->64 k3 on 32x32, conv 64->128 k3 on 32x32, linear 131072 -> 10.
  const double macs = 64.0 * 32 * 32 * 3 * 9 + 128.0 * 32 * 32 * 64 * 9 + 131072.0 * 10;
  const double params = (64 * 3 * 9 + 64) + (128 * 64 * 9 + 128) + (131072.0 * 10 + 10);
  const auto count = gpuperf::count_model("simple");
  REQUIRE(count);
  CHECK(count->forward_macs == macs);
  CHECK(count->forward_macs == 78577664);
  CHECK(count->forward_flops == 2 * macs);
  CHECK(count->training_flops == 6 * macs);
  CHECK(count->parameters == params);
  CHECK(count->parameters == 1386378);
}

TEST_CASE("ResNet-50 v1.5 FLOPs and parameters match a per-stage closed form",
          "[specs][efficiency]") {
  // Independent count: per stage s with width w, input channels c_in, output size h (input size
  // 2h for strided stages): bottleneck = 1x1 (c -> w) + 3x3 (w -> w) + 1x1 (w -> 4w), the first
  // block adds a 1x1 projection (c_in -> 4w) and reads its first 1x1 at the input size.
  double macs = 64.0 * 112 * 112 * 3 * 49;
  double params = 64.0 * 3 * 49 + 2 * 64;
  struct Stage {
    double w, blocks, h, in_h, c_in;
  };
  const Stage stages[] = {
      {64, 3, 56, 56, 64}, {128, 4, 28, 56, 256}, {256, 6, 14, 28, 512}, {512, 3, 7, 14, 1024}};
  for (const auto& s : stages) {
    const double c_out = 4 * s.w;
    // First block.
    macs += s.w * s.in_h * s.in_h * s.c_in + s.w * s.h * s.h * s.w * 9 + c_out * s.h * s.h * s.w +
            c_out * s.h * s.h * s.c_in;
    params += s.w * s.c_in + 2 * s.w + s.w * s.w * 9 + 2 * s.w + c_out * s.w + 2 * c_out +
              c_out * s.c_in + 2 * c_out;
    // Remaining blocks.
    const double rest = s.blocks - 1;
    macs += rest * (s.w * s.h * s.h * c_out + s.w * s.h * s.h * s.w * 9 + c_out * s.h * s.h * s.w);
    params += rest * (s.w * c_out + 2 * s.w + s.w * s.w * 9 + 2 * s.w + c_out * s.w + 2 * c_out);
  }
  macs += 2048.0 * 1000;
  params += 2048.0 * 1000 + 1000;

  const auto count = gpuperf::count_model("resnet50");
  REQUIRE(count);
  CHECK(count->forward_macs == Approx(macs).epsilon(1e-12));
  CHECK(count->parameters == Approx(params).epsilon(1e-12));
  CHECK(count->parameters == 25557032);  // torchvision's published count
  CHECK(count->forward_macs / 1e9 == Approx(4.09).epsilon(0.01));
  CHECK(count->training_flops / 1e9 == Approx(24.6).epsilon(0.01));
  CHECK(count->layers.size() == 54);  // 53 convolutions and the classifier
  CHECK_FALSE(gpuperf::count_model("gpt2"));
}

TEST_CASE("efficiency against the datasheet uses the precision's dense peak",
          "[specs][efficiency]") {
  const auto& db = shipped_specs();
  gpuperf::RunRecord r = resnet_run(5720);
  r.config.input_shape = {3, 224, 224};
  const auto m = db.match_device(r.device.name, r.device.sm_count, r.device.memory_bytes);
  REQUIRE(m.spec != nullptr);
  gpuperf::Efficiency e = gpuperf::compute_efficiency(r, m.spec);
  const double flops = gpuperf::count_model("resnet50")->training_flops;
  CHECK(e.peak_key == "fp16");
  CHECK(e.achieved_flops_per_second == Approx(5720 * flops));
  CHECK(e.fraction_of_peak == Approx(5720 * flops / 989.4e12));
  CHECK(e.power_basis == "TDP");
  CHECK(e.samples_per_joule == Approx(5720.0 / 700));
  CHECK(gpuperf::imagenet_projection_seconds(r) == Approx(1281167.0 * 90 / 5720));
  CHECK(std::isnan(e.cost_usd_per_million_samples));  // H200 has no confirmed price

  gpuperf::EfficiencyOptions options;
  options.price_per_hour_usd = 3.6;
  options.measured_power_watts = 650;
  e = gpuperf::compute_efficiency(r, m.spec, options);
  CHECK(e.power_basis == "measured");
  CHECK(e.samples_per_joule == Approx(5720.0 / 650));
  CHECK(e.cost_usd_per_million_samples == Approx(3.6 / 3600 * 1e6 / 5720));
  CHECK_THAT(e.cost_basis, Catch::Contains("3.6 USD per GPU-hour"));

  gpuperf::add_efficiency_metrics(r, e);
  CHECK(r.metrics.at("fraction_of_datasheet_peak") == Approx(e.fraction_of_peak));
  CHECK(r.metrics.at("power_measured") == 1);
  CHECK(r.metrics.at("imagenet_90_epochs_seconds") == Approx(1281167.0 * 90 / 5720));

  // Volta has no TF32 path: TF32 mode is compared with the FP32 peak.
  std::string note;
  CHECK(gpuperf::peak_key_for_precision("tf32", db.find_id("v100-sxm2-16gb"), &note) == "fp32");
  CHECK_THAT(note, Catch::Contains("no TF32 path"));

  // Purchase-based cost on a GeForce part states its assumptions.
  r.device.name = "NVIDIA GeForce RTX 4090";
  r.device.sm_count = 128;
  r.device.memory_bytes = 25.4e9;
  const auto e4090 = gpuperf::compute_efficiency(r, db.find_id("rtx-4090"));
  CHECK(e4090.fraction_of_peak == Approx(5720 * flops / 165.2e12));
  CHECK_THAT(e4090.cost_basis, Catch::Contains("1599 USD") && Catch::Contains("3 years"));

  options.price_per_hour_usd = -1;
  CHECK_THROWS_WITH(gpuperf::compute_efficiency(r, nullptr, options),
                    Catch::Contains("price_per_hour_usd") && Catch::Contains("-1"));
  const auto unknown = gpuperf::compute_efficiency(r, nullptr);
  CHECK(std::isnan(unknown.fraction_of_peak));
  CHECK_THAT(unknown.notes.front(), Catch::Contains("no datasheet entry"));
}

TEST_CASE("the published results file loads with a source per figure", "[specs]") {
  const auto published = gpuperf::load_published_results(kData + "/published_results.json");
  CHECK(published.size() == 14);
  for (const auto& p : published) {
    INFO(p.gpu);
    CHECK_FALSE(p.source.empty());
    CHECK(shipped_specs().find_id(p.gpu_id) != nullptr);
  }
  CHECK(published[4].per_gpu() == Approx(16621.0 / 8));
  // Every figure says its stack: the last is NVIDIA's MLPerf v3.0 submission, the rest PyTorch.
  for (std::size_t i = 0; i < published.size(); ++i) {
    INFO(published[i].source);
    CHECK(published[i].stack ==
          (i == 13 ? gpuperf::PublishedStack::kMlperf : gpuperf::PublishedStack::kPyTorch));
  }
  CHECK(published[13].per_gpu() == Approx((55200.0 + 58400.0) / 2 / 8));  // 7,100
  // Older files without the field: MLPerf where the source or setup says so, else PyTorch; an
  // unknown stack is refused, naming the field.
  const auto one = [](const std::string& fields) {
    return gpuperf::published_results_from_json(
        R"({"schema": "gpuperf.published/1", "results": [{"gpu": "x", "gpu_id": "x",
        "gpu_count": 1, "model": "m", "precision": "amp", "images_per_second": 10, )" +
            fields + "}]}",
        "p.json");
  };
  CHECK(one(R"("source": "MLPerf v3.0 results")")[0].stack == gpuperf::PublishedStack::kMlperf);
  CHECK(one(R"("source": "s", "setup": "MLPerf")")[0].stack == gpuperf::PublishedStack::kMlperf);
  CHECK(one(R"("source": "s")")[0].stack == gpuperf::PublishedStack::kPyTorch);
  CHECK(one(R"("source": "MLPerf", "stack": "pytorch")")[0].stack ==
        gpuperf::PublishedStack::kPyTorch);
  CHECK_THROWS_WITH(one(R"("source": "s", "stack": "mxnet")"),
                    Catch::Contains("p.json: field 'results[0].stack'") &&
                        Catch::Contains("'mxnet', expected 'pytorch' or 'mlperf'"));
  CHECK_THROWS_WITH(gpuperf::published_results_from_json(
                        R"({"schema": "gpuperf.published/1", "results": [{"gpu": "x", "gpu_id":
                        "x", "gpu_count": 1, "model": "m", "precision": "p",
                        "images_per_second": -3, "source": "s"}]})",
                        "p.json"),
                    Catch::Contains("p.json: field 'results[0].images_per_second'"));
}

TEST_CASE("the shipped rental-price table loads, each price a datasheet GPU's, dated and sourced",
          "[specs][prices]") {
  const auto prices =
      gpuperf::load_rental_prices(kData + "/gpu_rental_prices.json", shipped_specs());
  CHECK(prices.size() == 10);
  for (const auto& p : prices) {
    INFO(p.gpu_id);
    CHECK(shipped_specs().find_id(p.gpu_id) != nullptr);
    CHECK(p.usd_per_gpu_hour > 0);
    CHECK(p.usd_per_gpu_hour < 10);  // on-demand per GPU-hour, not an 8-GPU instance's price
    CHECK_FALSE(p.provider.empty());
    CHECK(p.source.rfind("https://", 0) == 0);
    CHECK(p.date.rfind("2026-", 0) == 0);
    CHECK_FALSE(p.note.empty());
  }
  // One entry as its copy of RunPod's page gives it.
  const auto h100 = std::find_if(prices.begin(), prices.end(), [](const gpuperf::RentalPrice& p) {
    return p.gpu_id == "h100-sxm5-80gb";
  });
  REQUIRE(h100 != prices.end());
  CHECK(h100->usd_per_gpu_hour == 3.49);
  CHECK(h100->provider == "RunPod (Secure Cloud)");
  CHECK(h100->source == "https://www.runpod.io/pricing");
  CHECK(h100->date == "2026-09-25");
}

TEST_CASE("a malformed rental-price entry is refused, naming the file and the entry",
          "[specs][prices]") {
  const auto& db = shipped_specs();
  const std::string good =
      R"("usd_per_gpu_hour": 2.5, "provider": "P", "source": "https://p", "date": "2026-01-31")";
  REQUIRE(gpuperf::rental_prices_from_json(price_file("h100-sxm5-80gb", good), "p.json", db)
              .front()
              .usd_per_gpu_hour == 2.5);
  const auto refused = [&](const std::string& id, const std::string& fields) {
    try {
      (void)gpuperf::rental_prices_from_json(price_file(id, fields), "p.json", db);
    } catch (const gpuperf::IoError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused("voodoo-5", good),
             Catch::StartsWith("p.json: field 'prices[0] (voodoo-5).gpu_id' 'voodoo-5' is not an "
                               "id of the datasheet database"));
  const std::string where = "p.json: field 'prices[0] (h100-sxm5-80gb).";
  const auto with_price = [](const std::string& price) {
    return R"("usd_per_gpu_hour": )" + price +
           R"(, "provider": "P", "source": "https://p", "date": "2026-01-31")";
  };
  CHECK_THAT(refused("h100-sxm5-80gb", with_price("0")),
             Catch::StartsWith(where + "usd_per_gpu_hour' is 0, expected > 0"));
  CHECK_THAT(refused("h100-sxm5-80gb", with_price("-2.5")),
             Catch::StartsWith(where + "usd_per_gpu_hour' is -2.5, expected > 0"));
  CHECK_THAT(refused("h100-sxm5-80gb", with_price("1e300")),
             Catch::StartsWith(where + "usd_per_gpu_hour' is 1e+300, expected > 0 and <= 1e+09"));
  // JSON has no infinity: a number past a double's range is refused by the parser, naming the file.
  CHECK_THAT(refused("h100-sxm5-80gb", with_price("1e400")),
             Catch::StartsWith("p.json: not valid JSON") && Catch::Contains("number overflow"));
  CHECK_THAT(refused("h100-sxm5-80gb", with_price("null")),
             Catch::StartsWith(where + "usd_per_gpu_hour' is null"));
  CHECK_THAT(refused("h100-sxm5-80gb", with_price(R"("2.5")")),
             Catch::StartsWith(where + "usd_per_gpu_hour' is not a number"));
  CHECK_THAT(refused("h100-sxm5-80gb", R"("usd_per_gpu_hour": 2.5, "provider": "P",
                                          "date": "2026-01-31")"),
             Catch::StartsWith(where + "source' is missing"));
  CHECK_THAT(refused("h100-sxm5-80gb", R"("usd_per_gpu_hour": 2.5, "provider": "P",
                                          "source": "https://p")"),
             Catch::StartsWith(where + "date' is missing"));
  CHECK_THAT(refused("h100-sxm5-80gb", R"("usd_per_gpu_hour": 2.5, "provider": "P",
                                          "source": "", "date": "2026-01-31")"),
             Catch::StartsWith(where + "source' is empty"));
  CHECK_THAT(refused("h100-sxm5-80gb", R"("usd_per_gpu_hour": 2.5, "provider": "P",
                                          "source": "https://p", "date": "Sept 2026")"),
             Catch::StartsWith(where + "date' is 'Sept 2026', expected YYYY-MM-DD"));
  CHECK_THAT(refused("h100-sxm5-80gb", R"("usd_per_gpu_hour": 2.5, "provider": "P",
                                          "source": "https://p", "date": "2026-13-01")"),
             Catch::StartsWith(where + "date' is '2026-13-01', expected YYYY-MM-DD"));
  // The second entry is named by its index; a GPU priced twice, a foreign file and an empty table
  // are refused too.
  const std::string entry = R"({"gpu_id": "h100-sxm5-80gb", )" + good + "}";
  CHECK_THROWS_WITH(
      gpuperf::rental_prices_from_json(
          R"({"schema": "gpuperf.rental_prices/1", "prices": [)" + entry + ", " + entry + "]}",
          "p.json", db),
      Catch::StartsWith("p.json: field 'prices[1] (h100-sxm5-80gb).gpu_id' 'h100-sxm5-80gb' is "
                        "priced twice in this file"));
  CHECK_THROWS_WITH(gpuperf::rental_prices_from_json(
                        R"({"schema": "gpuperf.published/1", "prices": []})", "p.json", db),
                    Catch::Contains("p.json: field 'schema' is 'gpuperf.published/1', expected "
                                    "'gpuperf.rental_prices/1'"));
  CHECK_THROWS_WITH(gpuperf::rental_prices_from_json(
                        R"({"schema": "gpuperf.rental_prices/1", "prices": []})", "p.json", db),
                    Catch::Contains("p.json: field 'prices' is empty"));
}

TEST_CASE("Datasheet and published figures are range-checked, the error naming file and field",
          "[specs]") {
  using gpuperf::SpecDatabase;
  REQUIRE_NOTHROW(SpecDatabase::from_json(spec_file(minimal_entry("x")), "ok.json"));
  // Past 1e9 GB, GB/s or TFLOP/s no datasheet goes, and in base units the figure would overflow.
  CHECK_THROWS_WITH(
      SpecDatabase::from_json(spec_file(minimal_entry("x", R"(, "tdp_w": 1e300)")), "a.json"),
      Catch::Contains("a.json: field 'gpus[0] (x).tdp_w' is 1e+300"));
  CHECK_THROWS_WITH(SpecDatabase::from_json(spec_file(R"({"id": "x", "name": "X",
          "memory_gb": 1e300, "bandwidth_gb_s": 1, "peak_tflops": {}, "source": "s"})"),
                                            "b.json"),
                    Catch::Contains("b.json: field 'gpus[0] (x).memory_gb'"));
  CHECK_THROWS_WITH(SpecDatabase::from_json(spec_file(R"({"id": "x", "name": "X", "memory_gb": 1,
          "bandwidth_gb_s": 1, "peak_tflops": {"fp16": [1, 1e300]}, "source": "s"})"),
                                            "c.json"),
                    Catch::Contains("c.json: field 'gpus[0] (x).peak_tflops.fp16'"));
  // A GPU without memory or bandwidth ("none", 0) is no GPU; unknown (null) is allowed.
  CHECK_THROWS_WITH(SpecDatabase::from_json(spec_file(R"({"id": "x", "name": "X",
          "memory_gb": "none", "bandwidth_gb_s": 1, "peak_tflops": {}, "source": "s"})"),
                                            "d.json"),
                    Catch::Contains("d.json: field 'gpus[0] (x).memory_gb' is 0"));
  CHECK_THROWS_WITH(SpecDatabase::from_json(spec_file(R"({"id": "x", "name": "X", "memory_gb": 1,
          "bandwidth_gb_s": 0, "peak_tflops": {}, "source": "s"})"),
                                            "e.json"),
                    Catch::Contains("e.json: field 'gpus[0] (x).bandwidth_gb_s' is 0"));
  CHECK_NOTHROW(SpecDatabase::from_json(spec_file(R"({"id": "x", "name": "X", "memory_gb": null,
          "bandwidth_gb_s": null, "peak_tflops": {}, "source": "s"})"),
                                        "f.json"));
  // A user's file merged over the shipped one is checked the same way, and leaves it unchanged.
  SpecDatabase db = shipped_specs();
  CHECK_THROWS_WITH(
      db.merge_json(spec_file(R"({"id": "rtx-4090", "bandwidth_gb_s": 1e12})"), "user.json"),
      Catch::Contains("user.json: field 'gpus[0] (rtx-4090, merged).bandwidth_gb_s'"));
  CHECK(db.find_id("rtx-4090")->memory_bandwidth_bytes_per_s ==
        shipped_specs().find_id("rtx-4090")->memory_bandwidth_bytes_per_s);

  auto published = [](const std::string& fields) {
    return R"({"schema": "gpuperf.published/1", "results": [{"gpu": "x", "gpu_id": "x",
        "model": "m", "precision": "p", "source": "s", )" +
           fields + "}]}";
  };
  CHECK_NOTHROW(gpuperf::published_results_from_json(
      published(R"("gpu_count": 8, "batch_size": 256, "images_per_second": 20000)"), "p.json"));
  CHECK_THROWS_WITH(gpuperf::published_results_from_json(
                        published(R"("gpu_count": 1, "images_per_second": 1e308)"), "p.json"),
                    Catch::Contains("p.json: field 'results[0].images_per_second'"));
  CHECK_THROWS_WITH(gpuperf::published_results_from_json(
                        published(R"("gpu_count": 1, "images_per_second": [5, 1e300])"), "p.json"),
                    Catch::Contains("p.json: field 'results[0].images_per_second'"));
  CHECK_THROWS_WITH(
      gpuperf::published_results_from_json(
          published(R"("gpu_count": 1, "batch_size": 0, "images_per_second": 10)"), "p.json"),
      Catch::Contains("p.json: field 'results[0].batch_size' is 0"));
  CHECK_THROWS_WITH(
      gpuperf::published_results_from_json(
          published(R"("gpu_count": 1, "batch_size": 1e300, "images_per_second": 10)"), "p.json"),
      Catch::Contains("p.json: field 'results[0].batch_size'"));
}

TEST_CASE("Spec and published files nested too deep or over 64 MiB are refused, naming the file",
          "[specs]") {
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  const std::string huge = "[" + std::string((64u << 20) + 1, ' ') + "]";
  CHECK_THROWS_WITH(gpuperf::published_results_from_json(
                        R"({"schema": "gpuperf.published/1", "results": )" + deep + "}", "p.json"),
                    Catch::Contains("p.json") && Catch::Contains("nested deeper than 256"));
  CHECK_THROWS_WITH(gpuperf::published_results_from_json(huge, "p.json"),
                    Catch::Contains("p.json") && Catch::Contains("over the 64 MiB limit"));
  CHECK_THROWS_WITH(gpuperf::SpecDatabase::from_json(huge, "s.json"),
                    Catch::Contains("s.json") && Catch::Contains("over the 64 MiB limit"));
  gpuperf::SpecDatabase db = shipped_specs();
  CHECK_THROWS_AS(db.merge_json(huge, "s.json"), gpuperf::IoError);
  CHECK(db.gpus().size() == shipped_specs().gpus().size());
}
