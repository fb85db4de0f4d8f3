// The torch side of "will it fit": activation checkpointing, the counted activations of the
// transformers, the prediction in the records, the out-of-memory back-off and the largest batch
// (the last two on the CPU with an allocator that fails past a byte budget).
#include "testing.h"

#include <c10/core/Allocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/base/error.h"
#include "gpuperf/device/device.h"
#include "gpuperf/models/transformer.h"
#include "gpuperf/train/training_memory.h"
#include "gpuperf/train/training_run.h"

namespace {

// The CPU allocator with a byte budget: it counts what is live and throws LibTorch's
// OutOfMemoryError (as the CUDA caching allocator does) for an allocation past the budget. While
// it lives it is the CPU allocator; its destructor puts the previous one back. Its pointers are
// plain (the data is the context), as LibTorch's raw allocation interface requires: a table
// keeps each one's size and the counters it is charged to (a tensor may outlive the allocator).
class BudgetAllocator final : public c10::Allocator {
 public:
  explicit BudgetAllocator(std::int64_t budget) : state_(std::make_shared<State>()) {
    state_->budget = budget;
    previous_ = c10::GetAllocator(c10::DeviceType::CPU);
    c10::SetAllocator(c10::DeviceType::CPU, this, kPriority);
  }
  ~BudgetAllocator() override { c10::SetAllocator(c10::DeviceType::CPU, previous_, kPriority); }
  BudgetAllocator(const BudgetAllocator&) = delete;
  BudgetAllocator& operator=(const BudgetAllocator&) = delete;

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(std::size_t n) override { return take(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(std::size_t n) const override { return take(n); }
#endif
  [[nodiscard]] c10::DeleterFnPtr raw_deleter() const override { return &release; }

  /// The most bytes live at once.
  [[nodiscard]] std::int64_t peak() const { return state_->peak.load(); }

 private:
  static constexpr std::uint8_t kPriority = 255;
  struct State {
    std::atomic<std::int64_t> live{0};
    std::atomic<std::int64_t> peak{0};
    std::int64_t budget = 0;
  };
  struct Entry {
    std::int64_t bytes;
    std::shared_ptr<State> state;
  };
  static std::mutex& table_mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<void*, Entry>& table() {
    static std::unordered_map<void*, Entry> t;
    return t;
  }
  static void release(void* data) {
    if (data == nullptr) return;
    {
      const std::lock_guard<std::mutex> lock(table_mutex());
      const auto it = table().find(data);
      it->second.state->live -= it->second.bytes;
      table().erase(it);
    }
    c10::free_cpu(data);
  }

  c10::DataPtr take(std::size_t n) const {
    const auto bytes = static_cast<std::int64_t>(n);
    const std::int64_t live = state_->live.load();
    TORCH_CHECK_WITH(OutOfMemoryError, live + bytes <= state_->budget,
                     "budget allocator: tried to allocate ", bytes, " bytes with ", live, " of ",
                     state_->budget, " in use");
    void* data = c10::alloc_cpu(n);
    {
      const std::lock_guard<std::mutex> lock(table_mutex());
      table().emplace(data, Entry{bytes, state_});
    }
    const std::int64_t now = (state_->live += bytes);
    std::int64_t peak = state_->peak.load();
    while (now > peak && !state_->peak.compare_exchange_weak(peak, now)) {
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  std::shared_ptr<State> state_;
  c10::Allocator* previous_ = nullptr;
};

gpuperf::TrainingRun small_cpu_run(std::int64_t batch) {
  gpuperf::TrainingRun run;
  run.device = "cpu";
  run.model = "simple";
  run.batch_size = batch;
  run.precision = gpuperf::Precision::kFp32;
  run.measure.warmup = 1;
  run.measure.steps_per_window = 1;
  run.measure.windows = 2;
  run.threads = 1;  // one thread: the same allocations on every run
  run.quiet = true;
  return run;
}

// The peak live bytes of `run`, under an allocator without a limit.
std::int64_t peak_of(const gpuperf::TrainingRun& run) {
  BudgetAllocator counting(std::int64_t{1} << 40);
  (void)gpuperf::run_training(run);
  return counting.peak();
}

std::int64_t peak_of(std::int64_t batch) { return peak_of(small_cpu_run(batch)); }

gpuperf::GptOptions tiny_gpt() {
  gpuperf::GptOptions o;
  o.vocabulary = 64;
  o.context = 16;
  o.layers = 2;
  o.heads = 2;
  o.width = 16;
  return o;
}

gpuperf::LlamaOptions tiny_llama() {
  gpuperf::LlamaOptions o;
  o.vocabulary = 64;
  o.context = 16;
  o.layers = 2;
  o.heads = 4;
  o.kv_heads = 2;
  o.width = 16;
  o.hidden = 40;
  return o;
}

// The gradients of every parameter after one forward and backward pass of `model` on fixed
// tokens, with or without checkpointing, optionally under CPU autocast to bf16.
template <typename Model>
std::vector<torch::Tensor> gradients_of(Model& model, bool checkpointing, bool autocast) {
  gpuperf::set_activation_checkpointing(*model.ptr(), checkpointing);
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  torch::manual_seed(3);
  const torch::Tensor ids = torch::randint(0, 64, {3, 12}, torch::kLong);
  const torch::Tensor next = torch::randint(0, 64, {3, 12}, torch::kLong);
  torch::Tensor loss;
  {
    gpuperf::AutocastGuard guard(torch::kCPU, torch::kBFloat16, autocast);
    loss = gpuperf::next_token_loss(model->forward(ids), next);
  }
  loss.backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

template <typename Model>
void check_checkpointing_keeps_gradients(Model& model, bool autocast) {
  const auto plain = gradients_of(model, false, autocast);
  const auto checkpointed = gradients_of(model, true, autocast);
  REQUIRE(plain.size() == checkpointed.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    INFO("parameter " << i << (autocast ? " under bf16 autocast" : " in fp32"));
    REQUIRE(checkpointed[i].defined());
    // The rerun repeats the forward's arithmetic: the same gradients to rounding.
    CHECK(
        torch::allclose(checkpointed[i].to(torch::kFloat), plain[i].to(torch::kFloat), 1e-5, 1e-6));
  }
}

}  // namespace

TEST_CASE("checkpointed blocks give the gradients of the plain model, also under autocast",
          "[memory]") {
  torch::manual_seed(0);
  gpuperf::Gpt gpt(tiny_gpt());
  check_checkpointing_keeps_gradients(gpt, false);
  check_checkpointing_keeps_gradients(gpt, true);
  torch::manual_seed(0);
  gpuperf::Llama llama(tiny_llama());
  check_checkpointing_keeps_gradients(llama, false);
  check_checkpointing_keeps_gradients(llama, true);
  // Other modules have no blocks to checkpoint.
  torch::nn::Linear linear(4, 4);
  CHECK_FALSE(gpuperf::set_activation_checkpointing(*linear, true));
}

TEST_CASE("a transformer's predicted step counts its states, copies and activations by hand",
          "[memory]") {
  torch::manual_seed(0);
  gpuperf::Gpt gpt(tiny_gpt());
  const double P = static_cast<double>(gpuperf::parameter_count(tiny_gpt()));
  gpuperf::TrainStepOptions options;
  options.precision = gpuperf::Precision::kBf16;
  options.optimizer = gpuperf::OptimizerKind::kAdamW;
  options.fused_optimizer = true;
  gpuperf::TrainingMemoryInput input;
  input.batch_size = 4;
  input.sequence = 8;
  const auto p = gpuperf::predict_training_memory(*gpt.ptr(), options, input);
  // fp32 weights and AdamW's two moments; the fused optimizer frees the gradients between
  // steps, so none is live at the peak (the backward pass's start).
  CHECK(p.plan.term("weights").bytes == 4 * P);
  CHECK(p.plan.term("gradients").bytes == 0);
  CHECK(p.plan.term("optimizer states").bytes == 8 * P);
  CHECK(p.plan.term("master weights").bytes == 0);
  // bf16 copies of everything but the position embedding (16 x 16) and the 5 LayerNorms (2 x 16
  // each).
  CHECK(p.plan.term("autocast weight copies").bytes == 2 * (P - 16 * 16 - 5 * 2 * 16));
  // Per token: a block keeps (2 x 4 + 14 x 2) x 16 + 4 x 2 = 584 B; after the blocks
  // (4 + 2) x 16 + 2 x 2 x 64 = 352 B; ids 32 B: 2 x 584 + 352 + 32 = 1552 B; x 8 tokens x 4.
  CHECK(p.plan.term("activations").bytes == 1552.0 * 8 * 4);
  // The allocator's share: everything but the CUDA context and fragmentation, which the
  // reserved figure adds.
  const double held = p.plan.total_bytes - p.plan.term("CUDA context").bytes -
                      p.plan.term("allocator fragmentation").bytes;
  CHECK(p.allocated_bytes == Approx(held));
  CHECK(p.reserved_bytes == Approx(1.1 * held));

  // Checkpointed: 4 x 16 B of block input per layer and token, then the larger of the head
  // (352 B) and a block rerun (584 + 2 x 4 x 16 = 712 B): 2 x 64 + 712 + 32 = 872 B per token.
  input.activation_checkpointing = true;
  const auto c = gpuperf::predict_training_memory(*gpt.ptr(), options, input);
  CHECK(c.plan.term("activations").bytes == 872.0 * 8 * 4);
  CHECK(c.allocated_bytes < p.allocated_bytes);

  // Two micro-batches: one's activations at a time, and the second's backward pass starts with
  // the first's fp32 gradients held.
  input.activation_checkpointing = false;
  options.accumulation_steps = 2;
  const auto a = gpuperf::predict_training_memory(*gpt.ptr(), options, input);
  CHECK(a.plan.term("activations").bytes == 1552.0 * 8 * 2);
  CHECK(a.plan.term("gradients").bytes == 4 * P);
  CHECK(a.plan.term("optimizer states").bytes == 8 * P);
  options.accumulation_steps = 1;

  // Another model needs its measured slope; without it the plan says it is a lower bound.
  torch::nn::Linear linear(8, 8);
  gpuperf::TrainingMemoryInput other;
  other.batch_size = 2;
  const auto bare = gpuperf::predict_training_memory(*linear, options, other);
  CHECK(bare.plan.term("activations").bytes == 0);
  CHECK_FALSE(bare.plan.notes.empty());
  other.activation_bytes_per_sample = 1000;
  CHECK(gpuperf::predict_training_memory(*linear, options, other).plan.term("activations").bytes ==
        2000);
  other.activation_checkpointing = true;
  CHECK_THROWS_AS(gpuperf::predict_training_memory(*linear, options, other), gpuperf::ConfigError);

  // A measured workspace replaces the planner's 256 MiB default, in the term and in the total.
  other.activation_checkpointing = false;
  const auto by_default = gpuperf::predict_training_memory(*linear, options, other);
  CHECK(by_default.plan.term("cuDNN/cuBLAS workspaces").bytes == 256.0 * 1024 * 1024);
  other.workspace_bytes = 3e6;
  const auto measured = gpuperf::predict_training_memory(*linear, options, other);
  CHECK(measured.plan.term("cuDNN/cuBLAS workspaces").bytes == 3e6);
  CHECK(measured.allocated_bytes == Approx(by_default.allocated_bytes - 256.0 * 1024 * 1024 + 3e6));
  other.workspace_bytes = -1;
  CHECK_THROWS_WITH(gpuperf::predict_training_memory(*linear, options, other),
                    Catch::Matchers::Contains("TrainingMemoryInput::workspace_bytes"));
}

TEST_CASE("an image model refuses activation checkpointing by name", "[memory]") {
  gpuperf::TrainingRun run = small_cpu_run(2);
  run.activation_checkpointing = true;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Matchers::Contains("TrainingRun::activation_checkpointing"));
}

TEST_CASE("out of memory at the asked batch backs off by halving and says so", "[memory]") {
  // A budget that batch 16 fits into (with 1% to spare) and batch 32 does not.
  const std::int64_t peak16 = peak_of(16);
  const std::int64_t peak32 = peak_of(32);
  REQUIRE(peak32 > peak16 + peak16 / 50);
  BudgetAllocator budget(peak16 + peak16 / 100);

  gpuperf::TrainingRun run = small_cpu_run(64);
  CHECK_THROWS_AS(gpuperf::run_training(run), gpuperf::OutOfMemoryError);  // no back-off asked
  run.back_off_on_out_of_memory = true;
  const gpuperf::RunRecord record = gpuperf::run_training(run);
  CHECK(record.config.batch_size == 16);
  CHECK(record.metrics.at("requested_batch_size") == 64);
  REQUIRE(record.warnings.size() >= 2);
  CHECK(record.warnings[0] == "out of memory at batch 64: backed off to batch 32");
  CHECK(record.warnings[1] == "out of memory at batch 32: backed off to batch 16");
  CHECK(std::isfinite(record.final_loss));

  // Every rank of a data-parallel run must keep one batch size: there the error stands.
  gpuperf::TrainingHooks hooks;
  hooks.gradient_sync = [](gpuperf::TrainStep&) { return nullptr; };
  CHECK_THROWS_AS(gpuperf::run_training(run, hooks), gpuperf::OutOfMemoryError);
}

TEST_CASE("out of memory in micro-batches keeps the batch and doubles the micro-batches",
          "[memory]") {
  // A budget that batch 64 in 4 micro-batches fits into (with 1% to spare) and 2 do not.
  gpuperf::TrainingRun run = small_cpu_run(64);
  run.accumulation_steps = 4;
  const std::int64_t peak_in_4 = peak_of(run);
  run.accumulation_steps = 2;
  REQUIRE(peak_of(32) > peak_in_4 + peak_in_4 / 50);  // a micro-batch of 32 does not fit
  {
    BudgetAllocator budget(peak_in_4 + peak_in_4 / 100);
    CHECK_THROWS_AS(gpuperf::run_training(run), gpuperf::OutOfMemoryError);  // no back-off asked
    run.back_off_on_out_of_memory = true;
    const gpuperf::RunRecord record = gpuperf::run_training(run);
    CHECK(record.config.batch_size == 64);
    CHECK(record.config.accumulation_steps == 4);
    CHECK(record.metrics.at("requested_accumulation_steps") == 2);
    CHECK(record.metrics.count("requested_batch_size") == 0);
    REQUIRE(!record.warnings.empty());
    CHECK(record.warnings[0] ==
          "out of memory at batch 64 in 2 micro-batches: backed off to 4 micro-batches");
    CHECK(std::isfinite(record.final_loss));
  }
  // Micro-batches of one sample that do not fit: the error stands, nothing smaller to try.
  BudgetAllocator starved(peak_of(1) / 4);
  run.batch_size = 4;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Matchers::Contains("TrainingRun::accumulation_steps 4"));
}

TEST_CASE("the largest batch is one that trains, and one sample more does not", "[memory]") {
  BudgetAllocator budget(peak_of(24));
  const gpuperf::TrainingRun run = small_cpu_run(4);
  gpuperf::BatchSearchOptions options;
  options.start = 4;
  const gpuperf::BatchSearchResult found = gpuperf::find_largest_batch(run, options);
  REQUIRE(found.largest_fitting >= 4);
  CHECK(found.smallest_failing == found.largest_fitting + 1);
  // Doubling from 4 up to the first failure, then bisecting: every try recorded.
  REQUIRE(found.tries.size() >= 3);
  CHECK(found.tries[0].batch == 4);
  CHECK(found.tries[0].outcome == gpuperf::TrialOutcome::kFits);
  CHECK(found.tries[1].batch == 8);
  // Checked again, one run each: the batch found trains, one sample more runs out of memory.
  gpuperf::TrainingRun at = run;
  at.batch_size = found.largest_fitting;
  CHECK_NOTHROW((void)gpuperf::run_training(at));
  at.batch_size = found.largest_fitting + 1;
  CHECK_THROWS_AS(gpuperf::run_training(at), gpuperf::OutOfMemoryError);
}

TEST_CASE("the counted activations of a GPT-2 step are what the allocator holds after forward",
          "[memory][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const torch::Device device(torch::kCUDA, 0);
  torch::manual_seed(0);
  gpuperf::GptOptions o = gpuperf::GptOptions::gpt2_124m();
  o.layers = 4;
  gpuperf::Gpt gpt(o);
  gpt->to(device);
  const std::int64_t batch = 4, sequence = 512;
  const torch::Tensor ids =
      torch::randint(0, o.vocabulary, {batch, sequence}, torch::dtype(torch::kLong).device(device));
  const torch::Tensor next =
      torch::randint(0, o.vocabulary, {batch, sequence}, torch::dtype(torch::kLong).device(device));
  // One step first: cuBLAS's and cuDNN's workspaces are allocated once, at their first use.
  {
    gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, true, false);
    gpuperf::next_token_loss(gpt->forward(ids), next).backward();
  }
  for (auto& p : gpt->parameters()) p.mutable_grad() = torch::Tensor();
  for (const bool checkpointing : {false, true}) {
    INFO("checkpointing " << checkpointing);
    gpuperf::set_activation_checkpointing(*gpt.ptr(), checkpointing);
    gpuperf::synchronize(device);
    const double before = gpuperf::device_memory(device).allocated;
    torch::Tensor loss;
    {
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, true,
                                      /*cache_enabled=*/false);
      loss = gpuperf::next_token_loss(gpt->forward(ids), next);
    }
    gpuperf::synchronize(device);
    const double kept = gpuperf::device_memory(device).allocated - before;
    const auto counted = gpuperf::transformer_activations(*gpt.ptr(), sequence,
                                                          gpuperf::Precision::kBf16, checkpointing);
    REQUIRE(counted);
    // After the forward pass: everything but the logits' gradient (2 V per token, the backward
    // pass's) and the ids (allocated before), plus the weight copies autocast kept.
    const double tokens = static_cast<double>(batch * sequence);
    const double at_forward = checkpointing
                                  ? kept  // the count is a backward-pass peak: checked below
                                  : counted->bytes_per_sample * static_cast<double>(batch) -
                                        tokens * (2.0 * static_cast<double>(o.vocabulary) + 32) +
                                        counted->cast_weight_bytes;
    if (!checkpointing) CHECK(kept == Approx(at_forward).epsilon(0.05));
    // Checkpointing keeps the block inputs, not the blocks' working sets.
    if (checkpointing) CHECK(kept < counted->bytes_per_sample * static_cast<double>(batch));
    loss.backward();
    for (auto& p : gpt->parameters()) p.mutable_grad() = torch::Tensor();
  }
}

TEST_CASE("a checkpointed GPT-2 trains in a CUDA graph with less memory and a recorded prediction",
          "[memory][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainingRun run;
  run.device = "cuda";
  run.model = "gpt2";
  run.batch_size = 4;
  run.sequence_length = 512;
  run.precision = gpuperf::Precision::kBf16;
  run.optimizer = gpuperf::OptimizerKind::kAdamW;
  run.measure.warmup = 5;
  run.measure.steps_per_window = 5;
  run.measure.windows = 2;
  run.telemetry = false;
  run.quiet = true;
  const gpuperf::RunRecord plain = gpuperf::run_training(run);
  run.activation_checkpointing = true;
  const gpuperf::RunRecord checkpointed = gpuperf::run_training(run);
  for (const auto* record : {&plain, &checkpointed}) {
    CHECK(record->config.graph_mode == "cuda-graph");
    CHECK(std::isfinite(record->final_loss));
    CHECK(record->final_loss < record->first_loss);
    CHECK(record->metrics.at("predicted_peak_allocated_bytes") > 0);
    CHECK(record->metrics.at("peak_reserved_bytes") >= record->peak_memory_bytes);
    CHECK(record->metrics.count("memory_plan_activations_bytes") == 1);
  }
  CHECK(checkpointed.peak_memory_bytes < plain.peak_memory_bytes);
  CHECK(checkpointed.metrics.at("predicted_peak_allocated_bytes") <
        plain.metrics.at("predicted_peak_allocated_bytes"));
}
