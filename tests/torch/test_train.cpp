#include "testing.h"

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <iterator>
#include <limits>
#include <regex>
#include <string>

#include <torch/csrc/jit/serialization/import.h>

#include <filesystem>
#include <sstream>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuperf/base/checkpoint_file.h"
#include "gpuperf/base/error.h"
#include "gpuperf/models/simple_model.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/report/compare.h"
#include "gpuperf/timing/measure.h"
#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/device/device.h"
#include "gpuperf/device/kernel_trace.h"
#include "gpuperf/timing/timer.h"
#include "gpuperf/train/lr_schedule.h"
#include "gpuperf/train/train_step.h"
#include "gpuperf/train/training_run.h"

namespace {

// Trains the seed's model on one fixed batch and returns (first loss, last loss).
std::pair<float, float> fit_fixed_batch(const torch::Device& device,
                                        gpuperf::TrainStepOptions options, int steps) {
  torch::manual_seed(0);
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), device, options);
  gpuperf::SyntheticBatchOptions batch_options;
  batch_options.batch_size = 16;
  batch_options.device = device;
  batch_options.memory_format = options.memory_format;
  gpuperf::SyntheticBatches batches(batch_options);
  float first = 0;
  float last = 0;
  for (int i = 0; i < steps; ++i) {
    const auto result = step(batches.next());
    const float loss = result.loss.item<float>();
    REQUIRE(std::isfinite(loss));
    if (i == 0) first = loss;
    last = loss;
  }
  CHECK(step.steps() == steps);
  return {first, last};
}

}  // namespace

TEST_CASE("training on a fixed batch drives the loss down in fp32 with Adam", "[train]") {
  gpuperf::TrainStepOptions options;
  const auto [first, last] = fit_fixed_batch(torch::kCPU, options, 30);
  CHECK(last < 0.2f * first);
}

TEST_CASE("training on a fixed batch drives the loss down in bf16 channels_last with SGD",
          "[train]") {
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kBf16;
  options.memory_format = gpuperf::MemoryFormat::kChannelsLast;
  options.optimizer = gpuperf::OptimizerKind::kSgd;
  options.learning_rate = 0.01;
  const auto [first, last] = fit_fixed_batch(torch::kCPU, options, 30);
  CHECK(last < 0.5f * first);
}

TEST_CASE("training with AdamW and gradient clipping drives the loss down", "[train]") {
  gpuperf::TrainStepOptions options;
  options.optimizer = gpuperf::OptimizerKind::kAdamW;
  options.weight_decay = 0.01;
  options.max_grad_norm = 1.0;
  const auto [first, last] = fit_fixed_batch(torch::kCPU, options, 30);
  CHECK(last < 0.5f * first);
}

TEST_CASE("TrainStep converts the model to channels_last and runs user batches", "[train]") {
  gpuperf::TrainStepOptions options;
  options.memory_format = gpuperf::MemoryFormat::kChannelsLast;
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, options);
  for (const auto& p : step.module().parameters()) {
    if (p.dim() == 4) CHECK(p.is_contiguous(torch::MemoryFormat::ChannelsLast));
  }
  int calls = 0;
  gpuperf::FunctionBatches source(
      [&] {
        ++calls;
        return gpuperf::Batch{torch::randn({4, 3, 32, 32}), torch::randint(0, 10, {4})};
      },
      4);
  const auto result = step(source.next());
  CHECK(calls == 1);
  CHECK(result.loss.dim() == 0);
  CHECK(result.stepped);
  CHECK_FALSE(result.loss.requires_grad());
}

TEST_CASE("TrainStep rejects bad options and unsupported precisions with the option named",
          "[train]") {
  gpuperf::TrainStepOptions options;
  options.learning_rate = -1;
  CHECK_THROWS_WITH(
      gpuperf::TrainStep(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, options),
      Catch::Contains("TrainStepOptions::learning_rate: must be > 0"));
  options = {};
  options.precision = gpuperf::Precision::kTf32;
  CHECK_THROWS_WITH(
      gpuperf::TrainStep(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, options),
      Catch::Contains("precision tf32: TF32 is a CUDA tensor-core mode"));
  gpuperf::SyntheticBatchOptions batch_options;
  batch_options.batch_size = 0;
  CHECK_THROWS_WITH(gpuperf::SyntheticBatches(batch_options),
                    Catch::Contains("SyntheticBatchOptions::batch_size: "));
}

TEST_CASE("fp16 training with a GradScaler on CUDA learns and counts skipped steps",
          "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp16;
  const auto [first, last] = fit_fixed_batch(torch::kCUDA, options, 30);
  CHECK(last < 0.2f * first);

  // A loss that overflows on step 3 must skip exactly that optimizer step and halve the scale.
  int calls = 0;
  auto loss = [&](const torch::Tensor& output, const torch::Tensor& target) {
    auto value = torch::nn::functional::cross_entropy(output, target);
    return ++calls == 3 ? value * std::numeric_limits<float>::infinity() : value;
  };
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), torch::kCUDA, options,
                          loss);
  gpuperf::SyntheticBatchOptions batch_options;
  batch_options.batch_size = 8;
  batch_options.device = torch::kCUDA;
  gpuperf::SyntheticBatches batches(batch_options);
  for (int i = 0; i < 5; ++i) {
    const auto result = step(batches.next());
    CHECK(result.stepped == (i != 2));
  }
  CHECK(step.skipped_steps() == 1);
  CHECK(step.scaler().get_scale() == 32768.0);
}

TEST_CASE("bf16 channels_last ResNet-50 trains on CUDA without NaN", "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kBf16;
  options.memory_format = gpuperf::MemoryFormat::kChannelsLast;
  options.optimizer = gpuperf::OptimizerKind::kSgd;
  options.learning_rate = 0.01;
  torch::manual_seed(0);
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("resnet50", 10), torch::kCUDA,
                          options);
  gpuperf::SyntheticBatchOptions batch_options;
  batch_options.batch_size = 16;
  batch_options.sample_shape = {3, 64, 64};
  batch_options.device = torch::kCUDA;
  batch_options.memory_format = options.memory_format;
  gpuperf::SyntheticBatches batches(batch_options);
  float first = 0;
  float last = 0;
  for (int i = 0; i < 20; ++i) {
    last = step(batches.next()).loss.item<float>();
    REQUIRE(std::isfinite(last));
    if (i == 0) first = last;
  }
  CHECK(last < first);
}

TEST_CASE("CUDA event windows agree with the host clock around a synchronised workload",
          "[timing][gpu]") {
  GPUPERF_REQUIRE_GPU();
  auto events = gpuperf::make_cuda_event_timer(0);
  auto host = gpuperf::make_steady_clock_timer();
  const auto a = torch::randn({4096, 4096}, torch::kCUDA);
  torch::cuda::synchronize();
  const auto host_start = host->mark();
  const auto start = events->mark();
  for (int i = 0; i < 20; ++i) (void)torch::mm(a, a);
  const auto stop = events->mark();
  const double device_seconds = events->seconds(start, stop);  // waits for the GPU
  const double host_seconds = host->seconds(host_start, host->mark());
  CHECK(device_seconds > 0);
  CHECK(device_seconds <= host_seconds * 1.01);
  CHECK(device_seconds > 0.5 * host_seconds);
  CHECK(events->name() == "cuda-event");
}

namespace {

// Runs `steps` steps of the seed model on one fixed batch and returns every step's loss and the
// final weights. `poison_step` >= 0 fills that step's input with inf.
struct Trajectory {
  std::vector<float> losses;
  std::vector<torch::Tensor> weights;
  std::int64_t skipped = 0;
  double scale = 0;
  bool graph = false;
  std::vector<bool> replayed;
  std::vector<std::int64_t> steps;  // steps() after each call
  std::int64_t eager_shape_steps = 0;
};

// Trains `batch_sizes.size()` steps of the simple model; call i takes the first batch_sizes[i]
// samples of one fixed batch of 32 (the whole batch when 0).
Trajectory train_batches(gpuperf::TrainStepOptions options, const std::vector<int>& batch_sizes,
                         int poison_step = -1) {
  torch::manual_seed(7);
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), torch::kCUDA, options);
  torch::manual_seed(8);
  const auto input = torch::randn({32, 3, 32, 32}, torch::kCUDA);
  const auto target =
      torch::randint(0, 10, {32}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kLong));
  const auto poisoned = torch::full_like(input, std::numeric_limits<float>::infinity());
  Trajectory t;
  for (std::size_t i = 0; i < batch_sizes.size(); ++i) {
    const std::int64_t n = batch_sizes[i] > 0 ? batch_sizes[i] : 32;
    const auto x = (static_cast<int>(i) == poison_step ? poisoned : input).narrow(0, 0, n);
    const auto result = step(x, target.narrow(0, 0, n));
    t.losses.push_back(result.loss.item<float>());
    t.replayed.push_back(result.replayed);
    t.steps.push_back(step.steps());
  }
  for (const auto& p : step.module().parameters()) t.weights.push_back(p.detach().clone());
  t.skipped = step.skipped_steps();
  t.scale = step.scaler().get_scale();
  t.graph = step.graph_captured();
  t.eager_shape_steps = step.eager_shape_steps();
  return t;
}

Trajectory train_trajectory(gpuperf::TrainStepOptions options, int steps, int poison_step = -1) {
  return train_batches(options, std::vector<int>(static_cast<std::size_t>(steps), 0), poison_step);
}

}  // namespace

TEST_CASE("a captured CUDA graph trains exactly like the same step run eagerly", "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  for (auto precision : {gpuperf::Precision::kFp16, gpuperf::Precision::kBf16}) {
    INFO("precision " << gpuperf::to_string(precision));
    gpuperf::TrainStepOptions options;
    options.precision = precision;
    options.fused_optimizer = true;
    options.cudnn_benchmark = false;
    // One call is one step in both modes: graph call i is eager step i, from the first call on
    // (the first graph_warmup calls run eagerly, the next captures and replays).
    const Trajectory eager = train_trajectory(options, 12);
    options.cuda_graph = true;
    const Trajectory graph = train_trajectory(options, 12);
    REQUIRE(graph.graph);
    REQUIRE(graph.losses.size() == eager.losses.size());
    for (std::size_t i = 0; i < graph.losses.size(); ++i) {
      INFO("step " << i);
      CHECK(graph.losses[i] == Approx(eager.losses[i]).epsilon(1e-3).margin(1e-6));
      CHECK(graph.steps[i] == static_cast<std::int64_t>(i + 1));
      CHECK(graph.replayed[i] == (i >= static_cast<std::size_t>(options.graph_warmup)));
    }
    for (std::size_t i = 0; i < eager.weights.size(); ++i) {
      CHECK(torch::allclose(graph.weights[i], eager.weights[i], /*rtol=*/1e-3, /*atol=*/1e-5));
    }
    CHECK(graph.losses.back() < 0.5f * eager.losses.front());
  }
}

TEST_CASE("fused conv+bias+ReLU trains like the separate ops, eagerly and in a CUDA graph",
          "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // fp32 without TF32: the fused call and the separate ops differ only by summation order. SGD,
  // whose update is linear in the gradient (Adam's m / sqrt(v) turns rounding-level gradient
  // differences of near-zero gradients into lr-sized steps: its weights agree to ~lr, not 1e-4).
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp32;
  options.optimizer = gpuperf::OptimizerKind::kSgd;
  options.learning_rate = 0.01;
  options.fused_optimizer = true;
  options.cudnn_benchmark = false;
  const Trajectory separate = train_trajectory(options, 10);
  options.kernel_fusion = true;
  const Trajectory fused = train_trajectory(options, 10);
  for (std::size_t i = 0; i < fused.losses.size(); ++i) {
    INFO("step " << i);
    CHECK(fused.losses[i] == Approx(separate.losses[i]).epsilon(1e-4).margin(1e-6));
  }
  for (std::size_t i = 0; i < fused.weights.size(); ++i) {
    const double difference = (fused.weights[i] - separate.weights[i]).abs().max().item<double>();
    const double scale = separate.weights[i].abs().max().item<double>();
    INFO("parameter " << i << ": max difference " << difference << ", max |w| " << scale);
    CHECK(difference <= 1e-4 * scale);
  }
  options.optimizer = gpuperf::OptimizerKind::kAdam;
  options.learning_rate = 1e-3;
  // fp16 with a GradScaler, captured: the graph replays the fused kernels like eager steps.
  options.precision = gpuperf::Precision::kFp16;
  const Trajectory eager = train_trajectory(options, 10);
  options.cuda_graph = true;
  const Trajectory graph = train_trajectory(options, 10);
  REQUIRE(graph.graph);
  for (std::size_t i = 0; i < graph.losses.size(); ++i) {
    INFO("step " << i);
    CHECK(graph.losses[i] == Approx(eager.losses[i]).epsilon(1e-3).margin(1e-6));
  }
  CHECK(graph.losses.back() < 0.5f * eager.losses.front());
}

TEST_CASE("inside a CUDA graph the loss scale still backs off on overflow", "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp16;
  options.fused_optimizer = true;
  options.cuda_graph = true;
  options.grad_scaler.growth_interval(1000);
  options.cudnn_benchmark = false;
  const Trajectory clean = train_trajectory(options, 8);
  const Trajectory poisoned = train_trajectory(options, 8, /*poison_step=*/6);
  REQUIRE(poisoned.graph);
  CHECK(poisoned.skipped == clean.skipped + 1);
  CHECK(poisoned.scale == clean.scale / 2);
  CHECK(poisoned.losses[5] == Approx(clean.losses[5]).epsilon(1e-3));
  // The skipped step left the weights alone: the poisoned run's next loss is computed with the
  // weights the clean run had at its step 6.
  CHECK(poisoned.losses[7] == Approx(clean.losses[6]).epsilon(1e-3));
}

TEST_CASE("graph mode refuses a step it cannot capture", "[train]") {
  gpuperf::TrainStepOptions options;
  options.cuda_graph = true;
  CHECK_THROWS_WITH(
      gpuperf::TrainStep(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, options),
      Catch::Contains("fused optimizer"));
  options.fused_optimizer = gpuperf::FusedOptimizer::available(torch::kCPU);
  if (options.fused_optimizer) {
    CHECK_THROWS_WITH(
        gpuperf::TrainStep(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, options),
        Catch::Contains("CUDA device"));
  }
}

TEST_CASE("the CPU's native bf16 is read from /proc/cpuinfo's flags or features", "[train]") {
  // Trimmed from real machines: a Xeon with AVX512-BF16, one with AMX, a Zen 3 (AVX2 only), a
  // Xeon with AVX-512 but no BF16, an Arm Neoverse V1 (BF16) and N1 (none).
  CHECK(gpuperf::cpuinfo_computes_bf16(
      "processor\t: 0\nmodel name\t: Intel Xeon\nflags\t\t: fpu sse avx2 avx512f avx512_bf16\n"));
  CHECK(gpuperf::cpuinfo_computes_bf16("flags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n"));
  CHECK_FALSE(gpuperf::cpuinfo_computes_bf16("flags\t\t: fpu sse sse2 avx avx2 fma\n"));
  CHECK_FALSE(gpuperf::cpuinfo_computes_bf16("flags\t\t: fpu avx2 avx512f avx512bw avx512_vnni\n"));
  CHECK(gpuperf::cpuinfo_computes_bf16("processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n"));
  CHECK_FALSE(gpuperf::cpuinfo_computes_bf16("Features\t: fp asimd evtstrm aes pmull sha1\n"));
  // The first flags line decides; a word only containing the name does not count.
  CHECK_FALSE(gpuperf::cpuinfo_computes_bf16("flags\t\t: fpu\nflags\t\t: avx512_bf16\n"));
  CHECK_FALSE(gpuperf::cpuinfo_computes_bf16("flags\t\t: no_avx512_bf16x\n"));
  CHECK_FALSE(gpuperf::cpuinfo_computes_bf16(""));
}

TEST_CASE("A training run from C++ resolves its auto choices once and records what ran",
          "[train]") {
  gpuperf::TrainingRun run;
  run.device = "cpu";
  run.batch_size = 0;
  run.measure.warmup = 1;
  run.measure.steps_per_window = 1;
  run.measure.windows = 2;
  run.threads = 1;
  run.quiet = true;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Matchers::Contains("TrainingRun::batch_size: must be > 0, got 0"));
  run.batch_size = 4;
  run.cuda_graph = gpuperf::Switch::kOn;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Matchers::Contains("TrainingRun::cuda_graph on: needs a CUDA device"));
  run.cuda_graph = gpuperf::Switch::kAuto;
  const gpuperf::RunRecord record = gpuperf::run_training(run);
  // auto on the CPU: bf16 where it multiplies bf16 natively, else fp32
  CHECK(record.config.precision == (gpuperf::cpu_computes_bf16() ? "bf16" : "fp32"));
  CHECK(record.config.graph_mode == "eager");
  CHECK(record.config.kernel_fusion == "none");
  CHECK(record.timed_steps == 2);
  CHECK(record.total_steps == 3);
  CHECK(record.window_throughput.size() == 2);
  CHECK(record.throughput.median > 0);
  CHECK(record.metrics.count("imagenet_90_epochs_seconds") == 0);  // not an ImageNet shape
}

namespace {

// A classifier that records the batch of every forward pass it runs.
struct BatchProbeImpl : torch::nn::Module {
  BatchProbeImpl(std::int64_t classes, std::shared_ptr<std::vector<std::int64_t>> seen)
      : fc(register_module("fc", torch::nn::Linear(8, classes))), seen(std::move(seen)) {}
  torch::Tensor forward(const torch::Tensor& x) {
    seen->push_back(x.size(0));
    return fc(x.flatten(1));
  }
  torch::nn::Linear fc;
  std::shared_ptr<std::vector<std::int64_t>> seen;
};
TORCH_MODULE(BatchProbe);

}  // namespace

TEST_CASE(
    "A training run with gradient accumulation runs each step in micro-batches and trains "
    "as on the whole batch",
    "[train]") {
  const auto seen = std::make_shared<std::vector<std::int64_t>>();
  gpuperf::ModelRegistry::global().add(
      {"test-batch-probe",
       "test classifier that records its batches",
       {8},
       3,
       [seen](std::int64_t classes) { return torch::nn::AnyModule(BatchProbe(classes, seen)); }});
  gpuperf::TrainingRun run;
  run.device = "cpu";
  run.model = "test-batch-probe";
  run.batch_size = 6;
  run.precision = gpuperf::Precision::kFp32;
  run.optimizer = gpuperf::OptimizerKind::kSgd;
  run.learning_rate = 0.1;
  run.measure.warmup = 1;
  run.measure.steps_per_window = 3;
  run.measure.windows = 3;
  run.threads = 1;
  run.quiet = true;
  const gpuperf::RunRecord whole = gpuperf::run_training(run);
  CHECK(*seen == std::vector<std::int64_t>(static_cast<std::size_t>(whole.total_steps), 6));
  CHECK(whole.config.accumulation_steps == 1);
  CHECK(gpuperf::to_json(whole).find("accumulation_steps") == std::string::npos);

  seen->clear();
  run.accumulation_steps = 3;
  const gpuperf::RunRecord micro = gpuperf::run_training(run);
  // Three forward passes of two samples a step, one optimizer step each.
  CHECK(micro.total_steps == whole.total_steps);
  CHECK(*seen == std::vector<std::int64_t>(static_cast<std::size_t>(3 * micro.total_steps), 2));
  CHECK(micro.config.accumulation_steps == 3);
  const gpuperf::RunRecord back = gpuperf::from_json<gpuperf::RunRecord>(gpuperf::to_json(micro));
  CHECK(back.config.accumulation_steps == 3);
  CHECK_FALSE(gpuperf::workload_key(back) == gpuperf::workload_key(whole));
  CHECK(gpuperf::workload_key(back).label() ==
        "train test-batch-probe bs6 in 3 micro-batches "
        "fp32 contiguous sgd eager");
  // The same weights and batch: each step's loss is the whole batch's, the gradient its mean, so
  // the runs differ only by the order of float32 sums.
  REQUIRE(micro.window_losses.size() == whole.window_losses.size());
  for (std::size_t i = 0; i < whole.window_losses.size(); ++i) {
    INFO("window " << i);
    CHECK(micro.window_losses[i] == Approx(whole.window_losses[i]).epsilon(1e-5));
  }
  CHECK(micro.final_loss < micro.first_loss);

  // A batch the count does not divide: still that many micro-batches, one sample apart in size
  // (9 in 4: 3, 2, 2, 2), and the whole batch's update.
  run.batch_size = 9;
  run.accumulation_steps = 1;
  seen->clear();
  const gpuperf::RunRecord whole9 = gpuperf::run_training(run);
  seen->clear();
  run.accumulation_steps = 4;
  const gpuperf::RunRecord uneven = gpuperf::run_training(run);
  REQUIRE(seen->size() == static_cast<std::size_t>(4 * uneven.total_steps));
  for (std::size_t i = 0; i < seen->size(); i += 4) {
    CHECK(std::vector<std::int64_t>(seen->begin() + i, seen->begin() + i + 4) ==
          std::vector<std::int64_t>{3, 2, 2, 2});
  }
  REQUIRE(uneven.window_losses.size() == whole9.window_losses.size());
  for (std::size_t i = 0; i < whole9.window_losses.size(); ++i) {
    INFO("window " << i);
    CHECK(uneven.window_losses[i] == Approx(whole9.window_losses[i]).epsilon(1e-5));
  }
  run.batch_size = 6;

  // Each micro-batch holds a sample; the largest-batch search sizes one micro-batch.
  run.accumulation_steps = 7;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Contains("TrainingRun::accumulation_steps: must be >= 1 and <=") &&
                        Catch::Contains("(6), got 7"));
  run.accumulation_steps = 0;
  CHECK_THROWS_WITH(gpuperf::run_training(run), Catch::Contains("got 0"));
  run.accumulation_steps = 2;
  CHECK_THROWS_WITH(gpuperf::find_largest_batch(run, gpuperf::BatchSearchOptions{}),
                    Catch::Contains("TrainingRun::accumulation_steps 2: the largest-batch search"));
}

TEST_CASE("in graph mode a batch of another shape runs eagerly, never broadcast into the graph",
          "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp16;
  options.fused_optimizer = true;
  options.cudnn_benchmark = false;
  // Warm-up and capture at 32 samples, then 24, 1 (a last short batch, a single sample) and 32.
  const std::vector<int> sizes{32, 32, 32, 32, 32, 24, 1, 32};
  const Trajectory eager = train_batches(options, sizes);
  options.cuda_graph = true;
  const Trajectory graph = train_batches(options, sizes);
  REQUIRE(graph.graph);
  CHECK(graph.eager_shape_steps == 2);
  CHECK(graph.steps.back() == static_cast<std::int64_t>(sizes.size()));
  const std::vector<bool> replayed{false, false, false, true, true, false, false, true};
  CHECK(graph.replayed == replayed);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    INFO("step " << i << " (batch " << sizes[i] << ")");
    CHECK(graph.losses[i] == Approx(eager.losses[i]).epsilon(2e-3).margin(1e-5));
  }
  for (std::size_t i = 0; i < eager.weights.size(); ++i) {
    CHECK(torch::allclose(graph.weights[i], eager.weights[i], /*rtol=*/2e-3, /*atol=*/1e-5));
  }
}

namespace {

// The rate each of `rates.size()` steps used, read back from the weights: plain SGD on a
// linear model whose loss is the sum of its outputs has the same gradient (the column sums of
// the batch) at every step, so w_before - w_after = lr x gradient.
std::vector<double> rates_used(gpuperf::TrainStepOptions options, torch::Device device,
                               const std::vector<double>& rates) {
  torch::manual_seed(3);
  options.optimizer = gpuperf::OptimizerKind::kSgd;
  options.momentum = 0;
  options.precision = gpuperf::Precision::kFp32;
  options.cudnn_benchmark = false;
  gpuperf::TrainStep step(
      torch::nn::AnyModule(torch::nn::Linear(torch::nn::LinearOptions(4, 1).bias(false))), device,
      options, [](const torch::Tensor& output, const torch::Tensor&) { return output.sum(); });
  const torch::Tensor x = torch::rand({8, 4}).add(0.5).to(device);
  const torch::Tensor y = torch::zeros({8}, torch::kLong).to(device);
  const torch::Tensor gradient = x.sum(0).to(torch::kCPU, torch::kFloat64);
  std::vector<double> used;
  for (double rate : rates) {
    step.set_learning_rate(rate);
    const torch::Tensor before =
        step.module().parameters()[0].detach().to(torch::kCPU, torch::kFloat64);
    (void)step(x, y);
    const torch::Tensor after =
        step.module().parameters()[0].detach().to(torch::kCPU, torch::kFloat64);
    used.push_back(((before - after).view(-1) / gradient).mean().item<double>());
  }
  return used;
}

}  // namespace

TEST_CASE("Warm-up + cosine and step decay follow their definitions", "[train]") {
  const gpuperf::WarmupCosine cosine{0.1, 4, 12, 0.001};
  CHECK(cosine(0) == Approx(0.025));
  CHECK(cosine(3) == Approx(0.1));
  CHECK(cosine(4) == Approx(0.1));                  // the peak, where the cosine starts
  CHECK(cosine(8) == Approx(0.001 + 0.5 * 0.099));  // half way
  CHECK(cosine(12) == Approx(0.001));
  CHECK(cosine(100) == Approx(0.001));
  for (std::int64_t i = 5; i < 12; ++i) CHECK(cosine(i) < cosine(i - 1));
  const gpuperf::StepDecay decay{0.1, 3, 0.5};
  CHECK(decay(0) == Approx(0.1));
  CHECK(decay(2) == Approx(0.1));
  CHECK(decay(3) == Approx(0.05));
  CHECK(decay(7) == Approx(0.025));
  CHECK_THROWS_AS((gpuperf::WarmupCosine{0.1, 5, 5}(0)), gpuperf::ConfigError);
  CHECK_THROWS_AS((gpuperf::StepDecay{0.1, 0, 0.5}(0)), gpuperf::ConfigError);
}

TEST_CASE("Each step uses the learning rate set before it (torch::optim, eager)", "[train]") {
  const gpuperf::WarmupCosine schedule{0.2, 3, 8};
  std::vector<double> rates;
  for (std::int64_t i = 0; i < 8; ++i) rates.push_back(schedule(i));
  const std::vector<double> used = rates_used({}, torch::kCPU, rates);
  for (std::size_t i = 0; i < rates.size(); ++i) {
    INFO("step " << i);
    CHECK(used[i] == Approx(rates[i]).epsilon(1e-5));
  }
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, {});
  CHECK_THROWS_WITH(step.set_learning_rate(0), Catch::Contains("must be > 0"));
  CHECK_THROWS_WITH(step.set_learning_rate(0.1, 3), Catch::Contains("group 3 does not exist"));
  step.set_learning_rate(0.05);
  CHECK(step.learning_rate() == 0.05);
}

TEST_CASE("In a CUDA graph each replay uses the learning rate set before it (fused SGD)",
          "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const gpuperf::StepDecay schedule{0.2, 2, 0.5};
  std::vector<double> rates;
  for (std::int64_t i = 0; i < 10; ++i) rates.push_back(schedule(i));
  gpuperf::TrainStepOptions options;
  options.fused_optimizer = true;
  options.cuda_graph = true;
  const std::vector<double> used = rates_used(options, torch::kCUDA, rates);
  for (std::size_t i = 0; i < rates.size(); ++i) {
    INFO("step " << i << (i >= 3 ? " (graph replay)" : " (eager warm-up)"));
    CHECK(used[i] == Approx(rates[i]).epsilon(1e-4));  // the rate is float32 on the device
  }
}

namespace {

// Losses and final weights of `steps` steps of the simple model on one fixed batch of 16, in
// float64: the two ways of summing the batch then agree to far below any fp32 difference, on
// every BLAS (OpenBLAS and the reference BLAS group fp32 sums differently).
std::pair<std::vector<float>, std::vector<torch::Tensor>> accumulation_run(
    gpuperf::TrainStepOptions options, torch::Device device, int steps) {
  torch::manual_seed(11);
  auto model = gpuperf::ModelRegistry::global().create("simple");
  model.ptr()->to(torch::kFloat64);
  gpuperf::TrainStep step(model, device, options);
  torch::manual_seed(12);
  const auto x = torch::randn({16, 3, 32, 32}, torch::kFloat64).to(device);
  const auto y = torch::randint(0, 10, {16}).to(device);
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(step(x, y).loss.item<float>());
  std::vector<torch::Tensor> weights;
  for (const auto& p : step.module().parameters()) weights.push_back(p.detach().cpu().clone());
  return {losses, weights};
}

}  // namespace

TEST_CASE("Accumulating 4 micro-batches takes the step one large batch takes", "[train]") {
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp32;
  options.optimizer = gpuperf::OptimizerKind::kSgd;
  options.learning_rate = 0.05;
  const auto whole = accumulation_run(options, torch::kCPU, 3);
  options.accumulation_steps = 4;
  const auto accumulated = accumulation_run(options, torch::kCPU, 3);
  for (std::size_t i = 0; i < whole.first.size(); ++i) {
    INFO("step " << i);
    CHECK(accumulated.first[i] == Approx(whole.first[i]).epsilon(1e-6));
  }
  for (std::size_t i = 0; i < whole.second.size(); ++i) {
    INFO("parameter " << i << ": largest difference "
                      << (accumulated.second[i] - whole.second[i]).abs().max().item<double>());
    CHECK(whole.second[i].scalar_type() == torch::kFloat64);
    CHECK(torch::allclose(accumulated.second[i], whole.second[i], 1e-10, 1e-12));
  }
  options.accumulation_steps = 0;
  CHECK_THROWS_WITH(accumulation_run(options, torch::kCPU, 1),
                    Catch::Contains("TrainStepOptions::accumulation_steps: must be >= 1, got 0"));
}

TEST_CASE("Gradient accumulation in a CUDA graph trains like it does eagerly", "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp16;
  options.fused_optimizer = true;
  options.cudnn_benchmark = false;
  const auto whole = accumulation_run(options, torch::kCUDA, 8);
  // 16 samples in 4 micro-batches of 4, and in 5 of 4, 3, 3, 3, 3.
  for (const int parts : {4, 5}) {
    INFO(parts << " micro-batches");
    options.accumulation_steps = parts;
    options.cuda_graph = false;
    const auto eager = accumulation_run(options, torch::kCUDA, 8);
    options.cuda_graph = true;
    const auto graph = accumulation_run(options, torch::kCUDA, 8);
    for (std::size_t i = 0; i < eager.first.size(); ++i) {
      INFO("step " << i);
      CHECK(graph.first[i] == Approx(eager.first[i]).epsilon(1e-3).margin(1e-6));
      CHECK(eager.first[i] == Approx(whole.first[i]).epsilon(2e-2));  // fp16 roundings differ
    }
    for (std::size_t i = 0; i < eager.second.size(); ++i) {
      CHECK(torch::allclose(graph.second[i], eager.second[i], 1e-3, 1e-5));
    }
  }
}

namespace {

// Runs `calls` steps of the simple model on a fixed batch with step `step`; losses and weights.
std::pair<std::vector<float>, std::vector<torch::Tensor>> continue_training(
    gpuperf::TrainStep& step, torch::Device device, int calls) {
  torch::manual_seed(21);
  const auto x = torch::randn({16, 3, 32, 32}).to(device);
  const auto y = torch::randint(0, 10, {16}).to(device);
  std::vector<float> losses;
  for (int i = 0; i < calls; ++i) losses.push_back(step(x, y).loss.item<float>());
  std::vector<torch::Tensor> weights;
  for (const auto& p : step.module().parameters()) weights.push_back(p.detach().cpu().clone());
  return {losses, weights};
}

// Trains 3 + 3 steps without a break, and 3 steps, a checkpoint, and 3 steps in a new step
// object built from other weights; returns both second halves.
std::pair<std::pair<std::vector<float>, std::vector<torch::Tensor>>,
          std::pair<std::vector<float>, std::vector<torch::Tensor>>>
resume_run(const gpuperf::TrainStepOptions& options, torch::Device device,
           const std::string& path) {
  torch::manual_seed(20);
  gpuperf::TrainStep whole(gpuperf::ModelRegistry::global().create("simple"), device, options);
  (void)continue_training(whole, device, 3);
  whole.save(path);
  auto uninterrupted = continue_training(whole, device, 3);
  torch::manual_seed(99);  // other initial weights: the checkpoint must replace them
  gpuperf::TrainStep resumed(gpuperf::ModelRegistry::global().create("simple"), device, options);
  resumed.load(path);
  CHECK(resumed.steps() == 3);
  return {uninterrupted, continue_training(resumed, device, 3)};
}

}  // namespace

TEST_CASE("Training resumed from a checkpoint continues as uninterrupted training", "[train]") {
  const std::string path = "test_train_checkpoint.pt";
  for (auto kind : {gpuperf::OptimizerKind::kAdam, gpuperf::OptimizerKind::kSgd}) {
    gpuperf::TrainStepOptions options;
    options.optimizer = kind;
    INFO("optimizer " << gpuperf::to_string(kind));
    const auto [a, b] = resume_run(options, torch::kCPU, path);
    for (std::size_t i = 0; i < a.first.size(); ++i)
      CHECK(b.first[i] == Approx(a.first[i]).epsilon(1e-6));
    for (std::size_t i = 0; i < a.second.size(); ++i) {
      CHECK(torch::allclose(b.second[i], a.second[i], 1e-6, 1e-7));
    }
  }
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU, {});
  CHECK_THROWS_AS(step.load("/nonexistent/checkpoint.pt"), gpuperf::IoError);
  (void)continue_training(step, torch::kCPU, 1);
  CHECK_THROWS_WITH(step.load(path), Catch::Contains("before the first step"));
  std::remove(path.c_str());
}

namespace {

// A small SimpleModel step on the CPU (#33's checkpoint tests).
std::unique_ptr<gpuperf::TrainStep> small_step(
    std::int64_t image_size = 8, std::int64_t classes = 10,
    gpuperf::OptimizerKind optimizer = gpuperf::OptimizerKind::kAdam) {
  gpuperf::SimpleModelOptions model_options;
  model_options.image_size = image_size;
  model_options.num_classes = classes;
  gpuperf::TrainStepOptions options;
  options.optimizer = optimizer;
  return std::make_unique<gpuperf::TrainStep>(
      torch::nn::AnyModule(gpuperf::SimpleModel(model_options)), torch::kCPU, options);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<torch::Tensor> weights_of(gpuperf::TrainStep& step) {
  std::vector<torch::Tensor> out;
  for (const auto& p : step.module().parameters()) out.push_back(p.detach().clone());
  return out;
}

// Loading `path` into a fresh small step fails with an error whose text contains `text`, and
// leaves the step exactly as it was.
template <typename E>
void refused(const std::string& path, const std::string& text,
             std::unique_ptr<gpuperf::TrainStep> step = small_step()) {
  const auto before = weights_of(*step);
  const auto shapes = [&] {
    std::vector<std::vector<std::int64_t>> out;
    for (const auto& p : step->module().parameters()) out.push_back(p.sizes().vec());
    return out;
  }();
  CHECK_THROWS_AS(step->load(path), E);
  CHECK_THROWS_WITH(step->load(path), Catch::Contains(text));
  try {
    step->load(path);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);  // one line
  }
  CHECK(step->steps() == 0);
  const auto after = weights_of(*step);
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].sizes().vec() == shapes[i]);
    CHECK(torch::equal(after[i], before[i]));
  }
}

// A saved small step that has taken two steps (optimizer state exists).
std::string saved_checkpoint(const std::string& path) {
  torch::manual_seed(5);
  auto step = small_step();
  const auto x = torch::randn({4, 3, 8, 8});
  const auto y = torch::randint(0, 10, {4});
  (void)(*step)(x, y);
  (void)(*step)(x, y);
  step->save(path);
  return read_bytes(path);
}

// The checkpoint with its LibTorch payload edited (and its payload checksum recomputed, as a
// crafted file would have it): `edit` changes the payload's archive as a TorchScript module.
std::string edited_checkpoint(const std::string& bytes,
                              const std::function<void(torch::jit::Module&)>& edit) {
  const auto file = gpuperf::decode_checkpoint(bytes, "edited");
  std::istringstream in(std::string(file.payload), std::ios::binary);
  torch::jit::Module module = torch::jit::load(in);
  edit(module);
  std::ostringstream out(std::ios::binary);
  module.save(out);
  return gpuperf::encode_checkpoint(file.header, out.str());
}

}  // namespace

TEST_CASE("A cut, padded or corrupt checkpoint is refused before anything is loaded",
          "[train][checkpoint]") {
  // #33: a cut record gave heap corruption (SIGABRT) or read heap bytes as the version.
  const std::string path = "test_train_bad.ckpt", bad = "test_train_bad_copy.ckpt";
  const std::string bytes = saved_checkpoint(path);
  REQUIRE(bytes.size() > 1000);
  auto good = small_step();
  REQUIRE_NOTHROW(good->load(path));
  CHECK(good->steps() == 2);
  for (const std::size_t cut :
       {std::size_t{0}, std::size_t{10}, std::size_t{40}, std::size_t{200}, bytes.size() / 4,
        bytes.size() / 2, bytes.size() * 3 / 4, bytes.size() - 100, bytes.size() - 1}) {
    INFO("cut at " << cut << " of " << bytes.size());
    write_bytes(bad, bytes.substr(0, cut));
    refused<gpuperf::IoError>(bad, bad);
  }
  write_bytes(bad, bytes + std::string(7, '\0'));
  refused<gpuperf::IoError>(bad, "bytes after its payload");
  // A flipped byte anywhere in the payload, a weight's bytes included (the zip's own CRC is
  // not checked by LibTorch: that loaded).
  for (std::size_t at = bytes.size() - 1; at > bytes.size() / 2; at -= bytes.size() / 7) {
    INFO("flipped byte " << at);
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    write_bytes(bad, flipped);
    refused<gpuperf::IoError>(bad, "is corrupt");
  }
  // A weight's byte flipped with the payload checksum made to match: the tensors' own checksum.
  write_bytes(bad, edited_checkpoint(bytes, [](torch::jit::Module& archive) {
                auto model = archive.attr("model").toModule();
                auto fc = model.attr("fc").toModule();
                torch::Tensor bias = fc.attr("bias").toTensor();
                torch::NoGradGuard no_grad;
                bias.view(torch::kInt)[0].bitwise_xor_(1);
              }));
  refused<gpuperf::IoError>(bad, "do not match their checksum");
  // A record shorter than its tensor (a crafted file): never read past.
  write_bytes(bad, edited_checkpoint(bytes, [](torch::jit::Module& archive) {
                torch::Tensor version = torch::empty({0}, torch::kLong);
                version.unsafeGetTensorImpl()->set_sizes_contiguous({1 << 20});
                archive.setattr("gpuperf.checkpoint", version);
              }));
  refused<gpuperf::IoError>(bad, "larger than its record");
  // Negative step counts.
  write_bytes(bad, edited_checkpoint(bytes, [](torch::jit::Module& archive) {
                archive.setattr("steps", torch::tensor(std::int64_t{-3}));
              }));
  refused<gpuperf::ConfigError>(bad, "impossible step counts: steps -3");
  write_bytes(bad, edited_checkpoint(bytes, [](torch::jit::Module& archive) {
                archive.setattr("skipped_steps", torch::tensor(std::int64_t{-1}));
              }));
  refused<gpuperf::ConfigError>(bad, "skipped_steps -1");
  std::remove(bad.c_str());
  std::remove(path.c_str());
}

TEST_CASE("A checkpoint of another model or optimizer is refused, naming the first difference",
          "[train][checkpoint]") {
  // #33: another vocabulary resumed silently with the file's shapes; another width failed inside
  // LibTorch ("INTERNAL ASSERT FAILED").
  const std::string path = "test_train_other.ckpt";
  (void)saved_checkpoint(path);
  refused<gpuperf::ConfigError>(
      path, "param fc.weight is Float [10, 8192] in the checkpoint, Float [10, 32768] here",
      small_step(16));
  refused<gpuperf::ConfigError>(path, "param fc.weight", small_step(8, 5));
  refused<gpuperf::ConfigError>(path, "optimizer is adam (torch::optim) in the checkpoint",
                                small_step(8, 10, gpuperf::OptimizerKind::kSgd));
  std::remove(path.c_str());
  // A checkpoint of format 1 (a bare LibTorch archive) cannot be checked: refused.
  torch::serialize::OutputArchive old;
  old.write("gpuperf.checkpoint", torch::tensor(std::int64_t{1}));
  old.save_to(path);
  refused<gpuperf::IoError>(path, "format 1");
  std::remove(path.c_str());
}

TEST_CASE("A checkpoint is read only from a regular file: a FIFO is refused at once",
          "[train][checkpoint]") {
  // #33: a FIFO at the path hung the load.
  const std::string fifo = "test_train_fifo.ckpt";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused<gpuperf::IoError>(fifo, "not a regular file");
  std::remove(fifo.c_str());
  refused<gpuperf::IoError>(".", "not a regular file");
}

TEST_CASE("A save that cannot be written is an IoError with the reason, and leaves no file",
          "[train][checkpoint]") {
  // #33: past the file-size limit (SIGXFSZ) or on a full disk an exception escaped LibTorch's
  // writer's destructor: std::terminate, and "<ckpt>.tmp-<pid>" left behind.
  const std::string path = "test_train_limit.ckpt";
  std::remove(path.c_str());
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      small_step()->save(path);
    } catch (const gpuperf::IoError& e) {
      const std::string what = e.what();
      ::_exit(what.find("TrainStep::save") != std::string::npos &&
                      what.find("File too large") != std::string::npos
                  ? 0
                  : 3);
    } catch (...) {
      ::_exit(4);
    }
    ::_exit(5);  // written past the limit
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(std::filesystem::exists(path));
  for (const auto& entry : std::filesystem::directory_iterator(".")) {
    CHECK(entry.path().filename().string().rfind(path + ".", 0) != 0);
  }
  // A device is never a checkpoint's target: as root the rename would replace /dev/full.
  CHECK_THROWS_AS(small_step()->save("/dev/full"), gpuperf::IoError);
  struct stat st {};
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK_THROWS_AS(small_step()->save("/nonexistent-dir/x.ckpt"), gpuperf::IoError);
}

TEST_CASE("A fused fp16 step resumed in graph mode continues as uninterrupted training",
          "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const std::string path = "test_train_checkpoint_gpu.pt";
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kFp16;
  options.fused_optimizer = true;
  options.cuda_graph = true;
  options.cudnn_benchmark = false;
  const auto [a, b] = resume_run(options, torch::kCUDA, path);
  for (std::size_t i = 0; i < a.first.size(); ++i) {
    INFO("resumed step " << i);
    CHECK(b.first[i] == Approx(a.first[i]).epsilon(1e-3).margin(1e-6));
  }
  for (std::size_t i = 0; i < a.second.size(); ++i) {
    CHECK(torch::allclose(b.second[i], a.second[i], 1e-3, 1e-5));
  }
  std::remove(path.c_str());
}

namespace {

// A model of two inputs: token ids and a mask of the positions that count.
struct TokenModelImpl : torch::nn::Module {
  TokenModelImpl()
      : embed(register_module("embed", torch::nn::Embedding(50, 16))),
        head(register_module("head", torch::nn::Linear(16, 50))) {}
  torch::Tensor forward(const torch::Tensor& tokens) { return head(embed(tokens)); }
  torch::nn::Embedding embed;
  torch::nn::Linear head;
};
TORCH_MODULE(TokenModel);

// Masked next-token cross-entropy of several calls on one batch {tokens, mask, labels}.
std::vector<float> token_losses(gpuperf::TrainStepOptions options, torch::Device device,
                                int calls) {
  torch::manual_seed(31);
  TokenModel model;
  gpuperf::TrainStep step(
      model.ptr(),
      [model](const std::vector<torch::Tensor>& b) mutable {
        const torch::Tensor logits = model->forward(b[0]).flatten(0, 1);
        const torch::Tensor per_token = torch::nn::functional::cross_entropy(
            logits, b[2].flatten(),
            torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
        return (per_token * b[1].flatten()).sum() / b[1].sum();
      },
      device, options);
  torch::manual_seed(32);
  const torch::Tensor tokens = torch::randint(0, 50, {8, 12}).to(device);
  const torch::Tensor mask = (torch::rand({8, 12}) > 0.2).to(torch::kFloat).to(device);
  const torch::Tensor labels = torch::randint(0, 50, {8, 12}).to(device);
  std::vector<float> losses;
  for (int i = 0; i < calls; ++i) losses.push_back(step({tokens, mask, labels}).loss.item<float>());
  CHECK_THROWS_WITH(step({tokens, mask.narrow(0, 0, 4), labels}),
                    Catch::Contains("samples along dimension 0"));
  return losses;
}

}  // namespace

TEST_CASE("A model of several inputs trains through a user's forward and loss", "[train]") {
  gpuperf::TrainStepOptions options;
  options.optimizer = gpuperf::OptimizerKind::kAdam;
  options.learning_rate = 0.05;
  const std::vector<float> losses = token_losses(options, torch::kCPU, 30);
  CHECK(losses.back() < 0.5f * losses.front());
}

TEST_CASE("A model of several inputs trains in a CUDA graph as it does eagerly", "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kBf16;
  options.optimizer = gpuperf::OptimizerKind::kAdam;
  options.learning_rate = 0.05;
  options.fused_optimizer = true;
  const std::vector<float> eager = token_losses(options, torch::kCUDA, 10);
  options.cuda_graph = true;
  const std::vector<float> graph = token_losses(options, torch::kCUDA, 10);
  for (std::size_t i = 0; i < eager.size(); ++i) {
    INFO("step " << i);
    CHECK(graph[i] == Approx(eager[i]).epsilon(1e-3).margin(1e-5));
  }
}

TEST_CASE("a training run on CUDA steps on a side stream and leaves the caller's stream as it was",
          "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const torch::Device cuda(torch::kCUDA, 0);
  REQUIRE(gpuperf::on_default_stream(cuda));
  {
    const gpuperf::SideStreamScope scope(cuda);
    CHECK_FALSE(gpuperf::on_default_stream(cuda));
  }
  CHECK(gpuperf::on_default_stream(cuda));
  gpuperf::TrainingRun run;
  run.model = "simple";
  run.device = "cuda";
  run.batch_size = 64;
  run.measure.warmup = 4;  // the whole step in a CUDA graph: warm-up steps, then the capture
  run.measure.steps_per_window = 2;
  run.measure.windows = 2;
  run.telemetry = false;
  run.quiet = true;
  bool stepped_on_default = true;
  gpuperf::TrainingHooks hooks;
  hooks.after_measure = [&](gpuperf::TrainStep& /*step*/, gpuperf::RunRecord& /*record*/) {
    stepped_on_default = gpuperf::on_default_stream(cuda);
  };
  const gpuperf::RunRecord record = gpuperf::run_training(run, hooks);
  CHECK(record.throughput.median > 0);
  CHECK_FALSE(stepped_on_default);
  CHECK(gpuperf::on_default_stream(cuda));
}

TEST_CASE("a kernel trace holds the GPU kernels of the traced work", "[train][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // The wheels a CUDA build uses have Kineto; a CUDA LibTorch without it cannot trace.
  REQUIRE(gpuperf::kernel_traces_supported());
  const std::string path = "gpuperf-test-kernel-trace.json";
  const auto a = torch::randn({512, 512}, torch::kCUDA);
  gpuperf::write_kernel_trace(path, [&] {
    const auto b = torch::mm(a, a);
    torch::cuda::synchronize();
  });
  std::ifstream in(path);
  REQUIRE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(std::regex_search(text, std::regex(R"("cat"\s*:\s*"kernel")")));
  CHECK_FALSE(std::ifstream(path + ".tmp-" + std::to_string(::getpid())));  // committed
  std::remove(path.c_str());
}
