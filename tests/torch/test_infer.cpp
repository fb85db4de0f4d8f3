#include "testing.h"

#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/infer/inference.h"
#include "gpuperf/infer/inference_run.h"
#include "gpuperf/models/registry.h"

namespace {

// What the probe's forward saw the last time it ran.
struct Seen {
  bool inference_mode = false;
  bool grad_mode = true;
  bool training = true;
  bool cudnn_benchmark = false;
};
Seen seen;

// A tiny user model that records the modes it runs under.
struct ProbeImpl : torch::nn::Module {
  explicit ProbeImpl(std::int64_t classes)
      : fc(register_module("fc", torch::nn::Linear(8, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    seen = {c10::InferenceMode::is_enabled(), torch::GradMode::is_enabled(), is_training(),
            at::globalContext().benchmarkCuDNN()};
    return fc(x.flatten(1));
  }
  torch::nn::Linear fc;
};
TORCH_MODULE(Probe);

void register_probe() {
  gpuperf::ModelRegistry::global().add(
      {"probe", "test MLP that records its modes", {8}, 3, [](std::int64_t classes) {
         return torch::nn::AnyModule(Probe(classes));
       }});
}

gpuperf::InferenceOptions quick() {
  gpuperf::InferenceOptions options;
  options.warmup = 2;
  options.iterations = 12;
  return options;
}

void check_ordered(const gpuperf::LatencySummary& l) {
  CHECK(l.min > 0);
  CHECK(l.min <= l.p50);
  CHECK(l.p50 <= l.p90);
  CHECK(l.p90 <= l.p95);
  CHECK(l.p95 <= l.p99);
  CHECK(l.p99 <= l.max);
}

}  // namespace

TEST_CASE("The simple model runs inference on the CPU with ordered percentiles and finite outputs",
          "[infer]") {
  const auto info = gpuperf::ModelRegistry::global().get("simple");
  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("simple"),
                                    info.input_shape, torch::kCPU, quick());
  const torch::Tensor out = session(session.make_batch(4));
  CHECK(out.sizes() == std::vector<std::int64_t>{4, info.default_num_classes});
  CHECK(torch::isfinite(out).all().item<bool>());

  const auto result = session.measure(4);
  CHECK(result.batch_size == 4);
  CHECK(result.iterations == 12);
  check_ordered(result.latency);
  CHECK(result.latency.count == 12);
  CHECK(result.throughput_median == Approx(4 / result.latency.p50));
  CHECK(result.throughput_overall == Approx(4 * 12 / result.total_seconds));
  CHECK(std::isnan(result.peak_memory_bytes));  // the CPU has no allocator statistics
}

TEST_CASE("A user-registered model runs in eval mode under InferenceMode without grad", "[infer]") {
  register_probe();
  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, quick());
  seen = {};
  const torch::Tensor out = session(torch::randn({5, 8}));
  CHECK(seen.inference_mode);
  CHECK_FALSE(seen.grad_mode);
  CHECK_FALSE(seen.training);
  CHECK(out.is_inference());
  CHECK_FALSE(out.requires_grad());
  CHECK(out.sizes() == std::vector<std::int64_t>{5, 3});
  CHECK_FALSE(torch::isnan(out).any().item<bool>());
  // The guard ends with the call.
  CHECK_FALSE(c10::InferenceMode::is_enabled());
}

TEST_CASE("cuDNN times its algorithms only for batch sizes from cudnn_benchmark_from_batch",
          "[infer]") {
  register_probe();
  // The sessions below set the process-wide mode: the other tests get back what they had.
  struct Restore {
    bool mode = at::globalContext().benchmarkCuDNN();
    ~Restore() { at::globalContext().setBenchmarkCuDNN(mode); }
  } restore;
  auto options = quick();
  options.cudnn_benchmark_from_batch = 4;
  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, options);
  // The constructor sets the process-wide mode (as training does); each call sets it for its own
  // batch size and puts it back.
  CHECK(at::globalContext().benchmarkCuDNN());
  for (const std::int64_t batch : {1, 3, 4, 9, 2}) {
    INFO("batch " << batch);
    (void)session(torch::randn({batch, 8}));
    CHECK(seen.cudnn_benchmark == (batch >= 4));
    CHECK(at::globalContext().benchmarkCuDNN());
  }
  const auto result = session.sweep({2, 4});
  CHECK(result.cudnn_benchmark);
  CHECK(result.cudnn_benchmark_from_batch == 4);

  options.cudnn_benchmark = false;
  gpuperf::InferenceSession untuned(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, options);
  (void)untuned(torch::randn({8, 8}));
  CHECK_FALSE(seen.cudnn_benchmark);
  CHECK_FALSE(at::globalContext().benchmarkCuDNN());

  options.cudnn_benchmark_from_batch = 0;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("cudnn_benchmark_from_batch: ") && Catch::Contains("0"));
}

TEST_CASE("The doubling sweep stops at the given maximum and names its headline", "[infer]") {
  CHECK(gpuperf::sweep_batch_sizes({}, 8) == std::vector<std::int64_t>{1, 2, 4, 8});
  CHECK(gpuperf::sweep_batch_sizes({}, 6) == std::vector<std::int64_t>{1, 2, 4, 6});
  CHECK(gpuperf::sweep_batch_sizes({3, 5}, 64) == std::vector<std::int64_t>{3, 5});

  register_probe();
  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, quick());
  const auto result = session.sweep(gpuperf::sweep_batch_sizes({}, 8));
  REQUIRE(result.batches.size() == 4);
  CHECK(result.batches.back().batch_size == 8);
  CHECK_FALSE(result.out_of_memory);
  CHECK_THAT(result.stop_reason, Catch::Contains("all 4"));
  CHECK(result.timer == "steady-clock");
  CHECK_FALSE(result.cuda_graph);
  for (const auto& b : result.batches) check_ordered(b.latency);
  const auto headline = gpuperf::inference_headline(result);
  CHECK(headline.has_batch1);
  CHECK(headline.batch1_p50 == result.batches.front().latency.p50);
  double best = 0;
  for (const auto& b : result.batches) best = std::max(best, b.throughput_median);
  CHECK(headline.best_throughput == best);
}

TEST_CASE("bf16 inference converts the parameters and the inputs", "[infer]") {
  register_probe();
  auto options = quick();
  options.precision = gpuperf::Precision::kBf16;
  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, options);
  for (const auto& p : session.module().parameters()) CHECK(p.scalar_type() == torch::kBFloat16);
  CHECK(session.make_batch(2).scalar_type() == torch::kBFloat16);
  const torch::Tensor out = session(torch::randn({2, 8}));
  CHECK(out.scalar_type() == torch::kBFloat16);
  CHECK(torch::isfinite(out.to(torch::kFloat)).all().item<bool>());
}

TEST_CASE("fp16 on the CPU either runs or is refused naming the precision", "[infer]") {
  register_probe();
  auto options = quick();
  options.precision = gpuperf::Precision::kFp16;
  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, options);
  try {
    const auto result = session.measure(2);
    check_ordered(result.latency);
  } catch (const gpuperf::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("precision fp16: "));
  }
}

TEST_CASE("Bad inference options are refused with the option and the value", "[infer]") {
  register_probe();
  auto options = quick();
  options.warmup = -1;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("InferenceOptions::warmup: ") && Catch::Contains("-1"));
  options = quick();
  options.iterations = 0;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("InferenceOptions::iterations: ") && Catch::Contains("0"));
  CHECK_THROWS_WITH(gpuperf::sweep_batch_sizes({4, 0}, 8),
                    Catch::Contains("batch_sizes: ") && Catch::Contains("0"));
  CHECK_THROWS_WITH(gpuperf::sweep_batch_sizes({}, -2),
                    Catch::Contains("max_batch: ") && Catch::Contains("-2"));
  CHECK_THROWS_WITH(gpuperf::parse_precision("fp8"), Catch::Contains("fp8"));

  gpuperf::InferenceSession session(gpuperf::ModelRegistry::global().create("probe"), {8},
                                    torch::kCPU, quick());
  CHECK_THROWS_WITH(session.make_batch(0), Catch::Contains("batch_size: ") && Catch::Contains("0"));
  CHECK_THROWS_WITH(session.measure(-3), Catch::Contains("-3"));

  options = quick();
  options.cuda_graph = true;
  CHECK_THROWS_WITH(gpuperf::InferenceSession(gpuperf::ModelRegistry::global().create("probe"), {8},
                                              torch::kCPU, options),
                    Catch::Contains("InferenceOptions::cuda_graph: ") && Catch::Contains("cpu"));
}

TEST_CASE("CUDA-graph replay matches eager outputs and times every batch size", "[infer][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const auto info = gpuperf::ModelRegistry::global().get("simple");
  auto options = quick();
  gpuperf::InferenceSession eager(gpuperf::ModelRegistry::global().create("simple"),
                                  info.input_shape, torch::kCUDA, options);
  options.cuda_graph = true;
  gpuperf::InferenceSession graphed(gpuperf::ModelRegistry::global().create("simple"),
                                    info.input_shape, torch::kCUDA, options);
  // Same weights in both sessions, so that outputs can be compared.
  {
    torch::NoGradGuard no_grad;
    auto from = eager.module().parameters();
    auto to = graphed.module().parameters();
    for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  const torch::Tensor x = eager.make_batch(4);
  const torch::Tensor expected = eager(x);
  (void)graphed(x);  // captures
  const torch::Tensor replayed = graphed(x).clone();
  REQUIRE(graphed.graph_fallback_reason().empty());
  CHECK(graphed.captured_batch_sizes() == std::vector<std::int64_t>{4});
  CHECK(torch::allclose(replayed, expected, 1e-4, 1e-4));

  const auto result = graphed.sweep({1, 8});
  CHECK(result.cuda_graph);
  CHECK(result.timer == "cuda-event");
  REQUIRE(result.batches.size() == 2);
  for (const auto& b : result.batches) check_ordered(b.latency);

  // Each batch size's peak memory counts from its own start: the small batch after the large one
  // peaks lower, and each holds at least the weights and its input.
  double weights = 0;
  for (const auto& p : graphed.module().parameters()) {
    weights += static_cast<double>(p.numel() * p.element_size());
  }
  const auto sample = static_cast<double>(graphed.make_batch(1).nbytes());
  const auto large_then_small = graphed.sweep({256, 1});
  REQUIRE(large_then_small.batches.size() == 2);
  const double large = large_then_small.batches[0].peak_memory_bytes;
  const double small = large_then_small.batches[1].peak_memory_bytes;
  CHECK(large >= weights + 256 * sample);
  CHECK(small >= weights + sample);
  CHECK(small < large);
}

TEST_CASE("An inference run from C++ sweeps the listed batch sizes and names a bad option",
          "[infer]") {
  gpuperf::InferenceRun run;
  run.device = "cpu";
  run.batch_sizes = {1, 2};
  run.warmup = 1;
  run.iterations = 2;
  run.quiet = true;
  run.keep_latencies = 100001;
  CHECK_THROWS_WITH(
      gpuperf::run_inference(run),
      Catch::Matchers::Contains("InferenceRun::keep_latencies: must be 0..100000, got 100001"));
  run.keep_latencies = 10;
  run.cuda_graph = gpuperf::Switch::kOn;
  CHECK_THROWS_WITH(gpuperf::run_inference(run),
                    Catch::Matchers::Contains("InferenceRun::cuda_graph on: "));
  run.cuda_graph = gpuperf::Switch::kAuto;
  const gpuperf::InferenceResult result = gpuperf::run_inference(run);
  REQUIRE(result.batches.size() == 2);
  CHECK(result.batches[0].batch_size == 1);
  CHECK(result.batches[1].batch_size == 2);
  CHECK(result.model == "simple");
  CHECK(result.precision == "fp32");  // auto on the CPU
  CHECK(result.batches[1].latency.p50 > 0);
  CHECK(result.batches[1].latencies.size() == 2);
}
