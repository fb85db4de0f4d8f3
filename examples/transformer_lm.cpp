// Embedding gpuperf's TrainStep in your own training loop: a small GPT (gpuperf::Gpt, the model
// lm_benchmark measures, here a few layers wide) on synthetic tokens, trained with everything a
// research loop needs: your own forward and loss through TrainStep, a warm-up + cosine
// learning-rate schedule, gradient accumulation, a checkpoint saved mid-run and training resumed
// from it in a new step object, and the whole step in a CUDA graph on a GPU. Prints the loss as
// it falls and tokens/sec. `transformer_lm --help` lists the options.
#include <torch/cuda.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/base/files.h"
#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/device/device.h"
#include "gpuperf/models/transformer.h"
#include "gpuperf/train/lr_schedule.h"
#include "gpuperf/train/train_step.h"
#include "memory_errors.h"
#include "program.h"
#include "torch_version.h"

namespace {

struct Settings {
  std::string device = "auto";
  std::string precision = "auto";
  std::string graph = "auto";
  int steps = 60;
  std::int64_t batch_size = 32;
  std::int64_t seq_len = 64;
  std::int64_t vocab = 1000;
  std::int64_t d_model = 128;
  std::int64_t layers = 2;
  std::int64_t heads = 4;
  int accumulation = 2;
  double lr = 3e-3;
  std::string checkpoint = "transformer_lm.ckpt";
};

gpuperf::Gpt make_model(const Settings& s) {
  gpuperf::GptOptions shape;
  shape.vocabulary = s.vocab;
  shape.context = s.seq_len;
  shape.layers = s.layers;
  shape.heads = s.heads;
  shape.width = s.d_model;
  return gpuperf::Gpt(shape);
}

// Tokens with structure to learn: each is a fixed function of the one before.
std::vector<torch::Tensor> synthetic_batch(const Settings& s, const torch::Device& device) {
  torch::Tensor ids = torch::empty({s.batch_size, s.seq_len + 1}, torch::kLong);
  ids.select(1, 0).random_(0, s.vocab);
  for (std::int64_t t = 1; t <= s.seq_len; ++t) {
    ids.select(1, t).copy_((ids.select(1, t - 1) * 7 + 3).remainder(s.vocab));
  }
  return {ids.narrow(1, 0, s.seq_len).to(device), ids.narrow(1, 1, s.seq_len).to(device)};
}

gpuperf::TrainStep make_step(const Settings& s, const torch::Device& device, gpuperf::Gpt model) {
  gpuperf::TrainStepOptions options;
  options.precision = s.precision != "auto" ? gpuperf::parse_precision(s.precision)
                      : device.is_cuda()    ? gpuperf::Precision::kBf16
                                            : gpuperf::Precision::kFp32;
  options.optimizer = gpuperf::OptimizerKind::kAdamW;
  options.learning_rate = s.lr;
  options.weight_decay = 0.01;
  options.accumulation_steps = s.accumulation;
  options.fused_optimizer = gpuperf::FusedOptimizer::available(device);
  options.cuda_graph = gpuperf::resolve_switch(gpuperf::parse_switch(s.graph, "graph"),
                                               device.is_cuda() && options.fused_optimizer);
  return gpuperf::TrainStep(
      model.ptr(),
      // Your forward and loss: here the model's logits and gpuperf's next-token loss.
      [model](const std::vector<torch::Tensor>& b) mutable {
        return gpuperf::next_token_loss(model->forward(b[0]), b[1]);
      },
      device, options);
}

int train(const Settings& s) {
  const torch::Device device = gpuperf::resolve_device(s.device);
  const gpuperf::WarmupCosine schedule{s.lr, s.steps / 10, s.steps, s.lr / 10};
  const std::vector<torch::Tensor> batch = synthetic_batch(s, device);
  torch::manual_seed(0);
  auto step = std::make_unique<gpuperf::TrainStep>(make_step(s, device, make_model(s)));
  auto timer = gpuperf::make_timer(
      device.is_cuda() ? gpuperf::TimerKind::kCudaEvent : gpuperf::TimerKind::kSteadyClock,
      device.is_cuda() ? device.index() : 0);
  // Timed: the steps after the resumed step object has warmed up and captured its graph (the
  // checkpoint's file I/O and the capture are not training throughput).
  const int timed_from =
      std::min(s.steps / 2 + gpuperf::TrainStepOptions{}.graph_warmup + 1, s.steps - 1);
  std::size_t start = 0;
  for (int i = 0; i < s.steps; ++i) {
    if (i == s.steps / 2) {
      // Mid-run: save, then continue in a new step object (other weights) loaded from the file.
      step->save(s.checkpoint);
      torch::manual_seed(1);
      step = std::make_unique<gpuperf::TrainStep>(make_step(s, device, make_model(s)));
      step->load(s.checkpoint);
      std::printf("step %d: checkpoint saved to %s and loaded into a new step\n", i,
                  s.checkpoint.c_str());
    }
    if (i == timed_from) start = timer->mark();
    step->set_learning_rate(schedule(i));
    const gpuperf::StepResult r = (*step)(batch);
    if (i % 10 == 0 || i == s.steps - 1) {
      std::printf("step %d: loss %.4f, lr %.2e, %s\n", i, r.loss.item<float>(), schedule(i),
                  r.replayed ? "CUDA graph" : "eager");
    }
  }
  const double seconds = timer->seconds(start, timer->mark());
  const std::int64_t tokens_per_step = s.batch_size * s.seq_len;
  const double tokens =
      static_cast<double>(s.steps - timed_from) * static_cast<double>(tokens_per_step);
  if (!step->graph_fallback_reason().empty()) {
    std::printf("%s\n", step->graph_fallback_reason().c_str());
  }
  std::printf("Throughput: %.0f tokens/sec (%d timed steps of %lld tokens, %s)\n", tokens / seconds,
              s.steps - timed_from, static_cast<long long>(tokens_per_step), device.str().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  Settings s;
  CLI::App app("gpuperf TrainStep in a research loop: a small transformer language model",
               "transformer_lm");
  app.option_defaults()->always_capture_default();
  app.add_option("--device", s.device, "auto, cpu, cuda or cuda:N");
  app.add_option("--precision", s.precision, "auto|fp32|tf32|fp16|bf16 (auto: bf16 on CUDA)");
  app.add_option("--graph", s.graph, "auto|on|off: the whole step in a CUDA graph");
  app.add_option("--steps", s.steps, "optimizer steps");
  app.add_option("--batch-size", s.batch_size, "sequences per step");
  app.add_option("--seq-len", s.seq_len, "tokens per sequence");
  app.add_option("--vocab", s.vocab, "vocabulary size");
  app.add_option("--d-model", s.d_model, "model width");
  app.add_option("--layers", s.layers, "transformer layers");
  app.add_option("--heads", s.heads, "attention heads");
  app.add_option("--accumulation", s.accumulation, "micro-batches per optimizer step");
  app.add_option("--lr", s.lr, "peak learning rate (warm-up + cosine)");
  app.add_option("--checkpoint", s.checkpoint, "where the mid-run checkpoint goes");
  gpuperf::program::add_torch_version_flag(app);
  return gpuperf::program::run_program(app, argc, argv, [&] {
    gpuperf::require_setting(s.steps >= 2, "steps", s.steps, ">= 2");
    gpuperf::require_setting(s.batch_size >= s.accumulation, "batch-size", s.batch_size,
                             ">= {accumulation}");
    gpuperf::require_setting(s.accumulation >= 1, "accumulation", s.accumulation, ">= 1");
    // Upper bounds far above a small example's sizes, below what would only run out of memory
    // after minutes of allocation (a sequence of 1e8 tokens ran on).
    struct Size {
      const char* name;
      std::int64_t value, most;
    };
    for (const Size& size :
         {Size{"seq-len", s.seq_len, 1 << 16}, Size{"vocab", s.vocab, 1 << 24},
          Size{"d-model", s.d_model, 1 << 16}, Size{"layers", s.layers, 1024},
          Size{"heads", s.heads, 1024}, Size{"batch-size", s.batch_size, 1 << 20},
          Size{"steps", s.steps, 1 << 24}}) {
      gpuperf::require_setting(size.value >= 1 && size.value <= size.most, size.name, size.value,
                               ">= 1 and <= " + std::to_string(size.most));
    }
    gpuperf::require_setting(s.d_model % s.heads == 0, "heads", s.heads, "a divisor of {d-model}");
    gpuperf::require_setting(s.lr > 0, "lr", s.lr, "> 0");
    // The checkpoint is written mid-run: a path it cannot go to is refused before step 0.
    if (s.checkpoint.empty() || gpuperf::is_stdout_path(s.checkpoint)) {
      throw gpuperf::ConfigError("--checkpoint: '" + s.checkpoint + "' is not a file name");
    }
    gpuperf::check_writable(s.checkpoint, "checkpoint");
    return gpuperf::program::with_memory_errors("--batch-size " + std::to_string(s.batch_size) +
                                                    " --vocab " + std::to_string(s.vocab) +
                                                    " --d-model " + std::to_string(s.d_model),
                                                [&] { return train(s); });
  });
} catch (...) {
  return gpuperf::program::setup_failed("transformer_lm");
}
