#include "testing.h"

#include <ATen/Context.h>
#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/device/device.h"
#include "gpuperf/micro/micro.h"
#include "gpuperf/micro/micro_run.h"
#include "gpuperf/report/micro_markdown.h"
#include "gpuperf/results/micro_datasheet.h"
#include "gpuperf/results/micro_math.h"
#include "gpuperf/results/micro_parse.h"
#include "gpuperf/results/micro_result.h"
#include "gpuperf/specs/specs.h"

namespace {

using Catch::Matchers::Contains;
using gpuperf::GemmDtype;
using gpuperf::MemoryOp;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Small enough for a shared 2-core machine, still several windows for a median.
gpuperf::MicroOptions tiny_options() {
  gpuperf::MicroOptions o;
  o.warmup = 1;
  o.calls_per_window = 3;
  o.windows = 3;
  return o;
}

gpuperf::MicroResult made_up(const std::string& category, const std::string& variant, double median,
                             const std::string& unit, double unit_scale) {
  gpuperf::MicroResult r;
  r.category = category;
  r.variant = variant;
  r.name = category + "/" + variant;
  r.shape = category == "gemm" ? "8192x8192x8192" : "1024 MiB";
  r.unit = unit;
  r.unit_scale = unit_scale;
  r.summary = gpuperf::summarize({median * 0.99, median, median * 1.01});
  return r;
}

// An H200-like datasheet entry (figures in base units, as SpecDatabase stores them).
gpuperf::GpuSpec made_up_spec() {
  gpuperf::GpuSpec s;
  s.id = "test-h200";
  s.name = "Test H200";
  s.memory_bandwidth_bytes_per_s = 4.8e12;
  s.link_bytes_per_s = 900e9;
  s.pcie = "Gen5";
  s.peaks = {{"fp64", 34e12},    {"fp64_tensor", 67e12}, {"fp32", 67e12},  {"tf32", 494.7e12},
             {"fp16", 989.4e12}, {"bf16", 989.4e12},     {"fp8", 1979e12}, {"int8", 1979e12}};
  return s;
}

}  // namespace

TEST_CASE("a GEMM counts two operations per multiply-add term", "[micro]") {
  CHECK(gpuperf::gemm_flops({8192, 8192, 8192}) == 2.0 * 8192 * 8192 * 8192);
  CHECK(gpuperf::gemm_flops({1024, 512, 256}) == 268435456.0);
  // 8192^3 at 787 TFLOP/s: one call takes ~1.40 ms.
  CHECK(gpuperf::rate(gpuperf::gemm_flops({8192, 8192, 8192}), 10, 10 * 1.397e-3, 1e12) ==
        Approx(787.0).epsilon(1e-3));
  CHECK(gpuperf::gemm_operand_bytes(GemmDtype::kBf16, {8192, 8192, 8192}) == 2.0 * 2 * 8192 * 8192);
  CHECK(gpuperf::gemm_operand_bytes(GemmDtype::kFp8, {16, 32, 64}) == 16 * 64 + 64 * 32);
}

TEST_CASE("a copy counts the bytes read and written while reads writes and transfers count once",
          "[micro]") {
  CHECK(gpuperf::memory_bytes_per_call(MemoryOp::kDeviceCopy, kGiB) == 2 * kGiB);
  CHECK(gpuperf::memory_bytes_per_call(MemoryOp::kHostCopy, kGiB) == 2 * kGiB);
  CHECK(gpuperf::memory_bytes_per_call(MemoryOp::kDeviceRead, kGiB) == kGiB);
  CHECK(gpuperf::memory_bytes_per_call(MemoryOp::kDeviceWrite, kGiB) == kGiB);
  CHECK(gpuperf::memory_bytes_per_call(MemoryOp::kHostToDevicePinned, kGiB) == kGiB);
  CHECK(gpuperf::memory_bytes_per_call(MemoryOp::kDeviceToHostPageable, kGiB) == kGiB);
  // 1 GiB copied 10 times in 5.04 ms: 2 * 2^30 * 10 / 5.04e-3 / 1e9 = 4261.0 GB/s (decimal GB).
  CHECK(gpuperf::rate(2 * kGiB, 10, 5.04e-3, 1e9) == Approx(4261.0).epsilon(1e-4));
  CHECK_THROWS_AS(gpuperf::rate(kGiB, 1, 0.0, 1e9), gpuperf::ConfigError);
}

TEST_CASE("operand sets rotate past three L2 caches and never fewer than the minimum", "[micro]") {
  const double mib = 1024.0 * 1024.0;
  // 8192^2 bf16 pair (256 MiB) is beyond 3 x 60 MB already: the minimum decides.
  CHECK(gpuperf::rotation_sets(256 * mib, 60e6, 3, 4) == 4);
  // 1024^2 bf16 pair (4 MiB): ceil(180e6 / 4 MiB) = 43.
  CHECK(gpuperf::rotation_sets(4 * mib, 60e6, 3, 4) == 43);
  CHECK(gpuperf::rotation_sets(1, 0, 3, 2) == 2);
  CHECK_THROWS_AS(gpuperf::rotation_sets(0, 60e6, 3, 4), gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::rotation_sets(1, 60e6, 3, 0), gpuperf::ConfigError);
}

TEST_CASE("dtype and shape parsing errors name the option and the value", "[micro]") {
  const auto dtypes = gpuperf::parse_gemm_dtypes("fp32,BF16,fp32,int8", "dtypes");
  CHECK((dtypes == std::vector<GemmDtype>{GemmDtype::kFp32, GemmDtype::kBf16, GemmDtype::kInt8}));
  CHECK_THROWS_WITH(gpuperf::parse_gemm_dtypes("fp32,fp12", "dtypes"),
                    Contains("dtypes: ") && Contains("fp12"));
  CHECK_THROWS_WITH(gpuperf::parse_gemm_dtypes("fp32,,bf16", "dtypes"),
                    Contains("dtypes: ") && Contains("empty item"));
  CHECK_THROWS_AS(gpuperf::parse_gemm_dtypes("", "dtypes"), gpuperf::ConfigError);

  const auto square = gpuperf::parse_gemm_shape("8192", "gemm-shape");
  CHECK((square.m == 8192 && square.n == 8192 && square.k == 8192));
  const auto shape = gpuperf::parse_gemm_shape("4096x1024x512", "gemm-shape");
  CHECK((shape.m == 4096 && shape.n == 1024 && shape.k == 512));
  CHECK(shape.str() == "4096x1024x512");
  for (const char* bad : {"0", "1x2", "1x2x3x4", "-4", "12a", "x", ""}) {
    CHECK_THROWS_WITH(gpuperf::parse_gemm_shape(bad, "gemm-shape"),
                      Contains("gemm-shape: ") && Contains(std::string("'") + bad + "'"));
  }
}

TEST_CASE("A microbenchmark run names the option that makes it invalid, before running",
          "[micro]") {
  gpuperf::MicroRun run;
  run.device = "cpu";
  run.gemm = false;
  run.memory = false;
  CHECK_THROWS_WITH(gpuperf::run_micro(run), Contains("MicroRun::gemm: "));
  run.gemm = true;
  run.gemm_shape = gpuperf::GemmShape{64, 0, 64};
  CHECK_THROWS_WITH(gpuperf::run_micro(run), Contains("MicroRun::gemm_shape: must be > 0, got 0"));
  run.gemm_shape.reset();
  run.ranks = 1;
  CHECK_THROWS_WITH(gpuperf::run_micro(run), Contains("MicroRun::ranks: must be >= 2"));
  run.ranks = 0;
  run.timing.windows = 0;
  CHECK_THROWS_WITH(gpuperf::run_micro(run), Contains("MicroTiming::windows: must be >= 1, got 0"));
  run.timing.windows = 3;
  // The kernel trace is every run's field (RunBasics); microbenchmarks refuse it, not ignore it.
  run.kernel_trace = "trace.json";
  CHECK_THROWS_WITH(gpuperf::run_micro(run),
                    Contains("MicroRun::kernel_trace") && Contains("must be empty"));
}

// A MicroRun has one seed, RunBasics::seed: its timing has none that could disagree with it;
// the MicroOptions each measurement gets carry it.
template <typename T, typename = void>
struct HasSeed : std::false_type {};
template <typename T>
struct HasSeed<T, std::void_t<decltype(std::declval<T&>().seed)>> : std::true_type {};
static_assert(!HasSeed<decltype(gpuperf::MicroRun::timing)>::value);
static_assert(std::is_same_v<decltype(std::declval<gpuperf::MicroRun&>().seed), std::int64_t>);
static_assert(HasSeed<gpuperf::MicroOptions>::value);

TEST_CASE("a tiny CPU GEMM run returns positive finite rates in TFLOP/s", "[micro]") {
  for (GemmDtype dtype : {GemmDtype::kFp64, GemmDtype::kFp32}) {
    const auto r = gpuperf::run_gemm(dtype, {64, 64, 64}, torch::kCPU, tiny_options());
    INFO(r.name << ": " << r.status);
    REQUIRE(r.ok());
    CHECK(r.unit == "TFLOP/s");
    CHECK(r.windows.size() == 3);
    CHECK(std::isfinite(r.value()));
    CHECK(r.value() > 0);
    CHECK(r.work_per_call == 2.0 * 64 * 64 * 64);
    CHECK(r.operand_sets >= 4);
  }
}

TEST_CASE("GEMM types the CPU lacks come back unsupported with the reason", "[micro]") {
  const auto tf32 = gpuperf::run_gemm(GemmDtype::kTf32, {64, 64, 64}, torch::kCPU, tiny_options());
  CHECK_THAT(tf32.status, Contains("unsupported") && Contains("TF32"));
  CHECK(std::isnan(tf32.value()));
  const auto int8 = gpuperf::run_gemm(GemmDtype::kInt8, {64, 64, 64}, torch::kCPU, tiny_options());
  CHECK_THAT(int8.status, Contains("unsupported") && Contains("_int_mm"));
  CHECK(int8.unit == "TOP/s");
  const auto fp8 = gpuperf::run_gemm(GemmDtype::kFp8, {64, 64, 64}, torch::kCPU, tiny_options());
  CHECK_THAT(fp8.status, Contains("unsupported") && Contains("_scaled_mm"));
}

TEST_CASE("a tiny CPU memory run returns positive finite rates in GB/s", "[micro]") {
  const double bytes = 1024.0 * 1024.0;
  for (MemoryOp op : gpuperf::default_memory_ops(torch::kCPU)) {
    const auto r = gpuperf::run_memory(op, bytes, torch::kCPU, tiny_options());
    INFO(r.name);
    REQUIRE(r.ok());
    CHECK(r.unit == "GB/s");
    CHECK(std::isfinite(r.value()));
    CHECK(r.value() > 0);
    CHECK_THAT(r.note, Contains("CPU variant"));
  }
  CHECK_THROWS_AS(gpuperf::run_memory(MemoryOp::kDeviceCopy, bytes, torch::kCPU, tiny_options()),
                  gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::run_memory(MemoryOp::kHostCopy, 6, torch::kCPU, tiny_options()),
                  gpuperf::ConfigError);
}

TEST_CASE("MatmulTf32Guard restores the previous TF32 setting", "[micro]") {
  const bool before = at::globalContext().allowTF32CuBLAS();
  at::globalContext().setAllowTF32CuBLAS(false);
  {
    gpuperf::MatmulTf32Guard guard(true);
    CHECK(at::globalContext().allowTF32CuBLAS());
  }
  CHECK_FALSE(at::globalContext().allowTF32CuBLAS());
  at::globalContext().setAllowTF32CuBLAS(before);
}

TEST_CASE("the seeds' table shows measured over datasheet for a made-up result set", "[micro]") {
  gpuperf::MicroReport report;
  report.device.name = "NVIDIA H200";
  report.device.kind = "cuda";
  report.variant = "gpu";
  report.results.push_back(made_up("gemm", "fp64", 56, "TFLOP/s", 1e12));
  report.results.push_back(made_up("gemm", "fp32", 51.2, "TFLOP/s", 1e12));
  report.results.push_back(made_up("gemm", "tf32", 410, "TFLOP/s", 1e12));
  report.results.push_back(made_up("gemm", "bf16", 787, "TFLOP/s", 1e12));
  report.results.push_back(made_up("gemm", "int8", 896, "TOP/s", 1e12));
  auto fp8 = made_up("gemm", "fp8", 0, "TFLOP/s", 1e12);
  fp8.status = "unsupported: fp8 needs compute capability >= 8.9";
  report.results.push_back(fp8);
  report.results.push_back(made_up("memory", "device-copy", 4260, "GB/s", 1e9));
  report.results.push_back(made_up("memory", "h2d-pinned", 55.5, "GB/s", 1e9));
  const gpuperf::GpuSpec spec = made_up_spec();
  gpuperf::apply_datasheet(report, &spec);

  CHECK(report.find("gemm/fp64")->datasheet_key == "fp64_tensor");
  CHECK(report.find("gemm/fp64")->datasheet == Approx(67));
  CHECK(report.find("gemm/bf16")->percent_of_datasheet == Approx(100 * 787 / 989.4));
  CHECK(report.find("memory/device-copy")->datasheet == Approx(4800));
  CHECK(report.find("memory/h2d-pinned")->datasheet == Approx(64));  // PCIe Gen5 x16, one way
  CHECK(std::isnan(report.find("gemm/fp8")->percent_of_datasheet));

  const auto row = gpuperf::seeds_table_row(report);
  REQUIRE(row.size() == gpuperf::seeds_table_columns().size());
  CHECK(row == std::vector<std::string>{"NVIDIA H200", "51.2 / 67.0", "410 / 495", "-", "787 / 989",
                                        "896 / 1,979", "- / 1,979", "4,260 / 4,800", "- / 450"});

  std::ostringstream md;
  gpuperf::write_markdown(md, report);
  const std::string text = md.str();
  CHECK_THAT(
      text, Contains("| GPU | FP32 | TF32 | FP16 | BF16 | INT8 | FP8 | memory GB/s | link GB/s |"));
  CHECK_THAT(text,
             Contains("| NVIDIA H200 | 51.2 / 67.0 | 410 / 495 | - | 787 / 989 | 896 / 1,979 | "
                      "- / 1,979 | 4,260 / 4,800 | - / 450 |"));
  CHECK_THAT(text,
             Contains("| gemm/bf16 | 8192x8192x8192 | 787 | TFLOP/s | 783..791 | 989 | 80% |"));
  CHECK_THAT(
      text,
      Contains("| gemm/fp8 | 8192x8192x8192 | unsupported: fp8 needs compute capability >= 8.9 |"));
  CHECK_THAT(text, Contains("Datasheet: Test H200."));

  const std::string json = gpuperf::to_json(report);
  CHECK_THAT(json, Contains("\"schema\": \"gpuperf.micro/1\""));
  CHECK_THAT(json, Contains("\"name\": \"gemm/fp8\""));
  CHECK_THAT(json, Contains("\"median\": null"));
  CHECK_THAT(json, Contains("\"FP32\": \"51.2 / 67.0\""));

  gpuperf::apply_datasheet(report, nullptr);
  CHECK(std::isnan(report.find("gemm/bf16")->datasheet));
  CHECK(gpuperf::seeds_table_row(report)[4] == "787 / -");
}

TEST_CASE("a CPU report labels its row as the CPU variant", "[micro]") {
  gpuperf::MicroReport report;
  report.device.name = "AMD EPYC";
  report.variant = "cpu";
  report.results.push_back(made_up("gemm", "fp32", 0.05, "TFLOP/s", 1e12));
  std::ostringstream md;
  gpuperf::write_seeds_table_markdown(md, {report});
  CHECK_THAT(md.str(),
             Contains("| AMD EPYC (CPU variant) | 0.0500 / - | - | - | - | - | - | - | - / - |"));
}

TEST_CASE("a small CUDA GEMM returns a positive rate in every dtype", "[micro][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const torch::Device device(torch::kCUDA, 0);
  for (GemmDtype dtype : gpuperf::all_gemm_dtypes()) {
    std::string reason;
    if (dtype == GemmDtype::kFp8 && !gpuperf::gemm_supported(dtype, device, &reason)) {
      // fp8 tensor cores exist from compute capability 8.9 (Ada) and 9.0 (Hopper): there fp8
      // must run, so this cannot pass by skipping on the GPUs that have it.
      const std::string cc = gpuperf::collect_fingerprint(device).compute_capability;
      INFO("fp8 unsupported on compute capability " << cc << ": " << reason);
      CHECK(std::stod(cc.empty() ? "0" : cc) < 8.9);
      continue;
    }
    const auto r = gpuperf::run_gemm(dtype, {1024, 1024, 1024}, device, tiny_options());
    INFO(r.name << ": " << r.status);
    REQUIRE(r.ok());
    CHECK(std::isfinite(r.value()));
    CHECK(r.value() > 0);
    CHECK(r.operand_sets >= 4);
  }
}

TEST_CASE("the timed GEMM op in each dtype matches an fp64 reference", "[micro][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const torch::Device device(torch::kCUDA, 0);
  // int8 (_int_mm) wants M > 16 and K, N multiples of 8; fp8 (_scaled_mm) multiples of 16.
  const gpuperf::GemmShape shape{256, 192, 512};
  for (GemmDtype dtype : gpuperf::all_gemm_dtypes()) {
    if (!gpuperf::gemm_supported(dtype, device)) continue;
    // Relative to the largest reference entry. fp32's bound is far below TF32's error, so it
    // also shows that the fp32 case really runs with TF32 off.
    double tolerance = 0;
    switch (dtype) {
      case GemmDtype::kFp64:
        tolerance = 1e-12;
        break;
      case GemmDtype::kFp32:
        tolerance = 1e-5;
        break;
      case GemmDtype::kTf32:
        tolerance = 1e-2;
        break;
      case GemmDtype::kFp16:
        tolerance = 1e-2;
        break;
      case GemmDtype::kBf16:
        tolerance = 2e-2;
        break;
      case GemmDtype::kInt8:
        tolerance = 0;
        break;  // int32 accumulation is exact here
      case GemmDtype::kFp8:
        tolerance = 2e-2;
        break;  // inputs exact in e4m3; bf16 output
    }
    torch::manual_seed(1);
    const auto ops = gpuperf::make_gemm_operands(dtype, shape, device);
    std::optional<gpuperf::MatmulTf32Guard> tf32;
    if (dtype == GemmDtype::kFp32 || dtype == GemmDtype::kTf32)
      tf32.emplace(dtype == GemmDtype::kTf32);
    // To fp64 through fp32 (fp8 has no direct conversion), except fp64 itself: an fp32 hop
    // would round its operands and put a 1e-8 error into the reference.
    auto to_fp64 = [&](const torch::Tensor& t) {
      return dtype == GemmDtype::kFp64 ? t : t.to(torch::kFloat32).to(torch::kFloat64);
    };
    const torch::Tensor got = to_fp64(gpuperf::gemm_call(dtype, ops));
    const torch::Tensor a = to_fp64(ops.a);
    const torch::Tensor b = to_fp64(ops.b);
    const torch::Tensor want = torch::mm(a, b);
    REQUIRE(got.sizes() == want.sizes());
    const double error = (got - want).abs().max().item<double>() / want.abs().max().item<double>();
    INFO(gpuperf::to_string(dtype) << ": relative error " << error);
    CHECK(error <= tolerance);
    CHECK(want.abs().max().item<double>() > 0);
  }
}

TEST_CASE("device copy and pinned transfers report positive GB/s", "[micro][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const torch::Device device(torch::kCUDA, 0);
  const double mib = 1024.0 * 1024.0;
  for (MemoryOp op : gpuperf::default_memory_ops(device)) {
    const auto r = gpuperf::run_memory(op, 64 * mib, device, tiny_options());
    INFO(r.name);
    REQUIRE(r.ok());
    CHECK(std::isfinite(r.value()));
    CHECK(r.value() > 0);
  }
}
