// Embedding only gpuperf's timing harness in an existing, hand-written LibTorch training loop:
// time named regions (data, forward, backward, optimizer) of every step without host syncs
// (CUDA events on a GPU, a steady clock on the CPU) and print the per-region breakdown and the
// throughput at the end. Nothing else of gpuperf is used: the model, loss, optimizer and loop
// are plain LibTorch.
//
//   region_timing [steps] [batch_size]
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/timing/region_timer.h"
#include "memory_errors.h"
#include "program.h"
#include "torch_version.h"

namespace {

int time_regions(int steps, int batch_size) {
  const bool cuda = torch::cuda::is_available();
  const torch::Device device = cuda ? torch::kCUDA : torch::kCPU;

  // The user's own model, optimizer and data.
  torch::nn::Sequential model(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 32, 3).padding(1)),
                              torch::nn::ReLU(), torch::nn::Flatten(),
                              torch::nn::Linear(32 * 32 * 32, 10));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto host_images = torch::randn({batch_size, 3, 32, 32});
  if (cuda) host_images = host_images.pin_memory();
  const auto host_labels = torch::randint(0, 10, {batch_size});

  // The user's loop, with gpuperf's region marks added.
  auto train = [&](gpuperf::RegionTimer& regions, int count) {
    for (int step = 0; step < count; ++step) {
      regions.begin("data");
      auto images = host_images.to(device, /*non_blocking=*/true);
      auto labels = host_labels.to(device, /*non_blocking=*/true);
      regions.end("data");

      regions.begin("forward");
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(images), labels);
      regions.end("forward");

      {
        auto scope = regions.scope("backward");
        loss.backward();
      }
      {
        auto scope = regions.scope("optimizer");
        optimizer.step();
      }
      regions.step_done(batch_size);
    }
  };

  const auto kind = cuda ? gpuperf::TimerKind::kCudaEvent : gpuperf::TimerKind::kSteadyClock;
  {
    // Warm-up (allocator growth, cuDNN/cuBLAS initialisation), timed apart and discarded.
    auto warmup_timer = gpuperf::make_timer(kind);
    gpuperf::RegionTimer warmup(*warmup_timer);
    train(warmup, 5);
  }
  auto timer = gpuperf::make_timer(kind);
  gpuperf::RegionTimer regions(*timer);
  train(regions, steps);

  const gpuperf::RegionSummary summary = regions.summary();  // the only wait for the device
  std::printf("%-10s %8s %12s %12s %8s\n", "region", "calls", "total ms", "median ms", "share");
  for (const auto& r : summary.regions) {
    std::printf("%-10s %8zu %12.3f %12.4f %7.1f%%\n", r.name.c_str(), r.calls,
                r.total_seconds * 1e3, r.per_call.median * 1e3, r.share * 100);
  }
  std::printf("%zu steps after 5 warm-up steps, %.3f s on %s (%s): %.1f samples/sec\n",
              summary.steps, summary.seconds, device.str().c_str(), timer->name().c_str(),
              summary.throughput);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  int steps = 50;
  int batch_size = 64;
  CLI::App app("gpuperf region timing: per-region breakdown of a plain LibTorch training loop",
               "region_timing");
  app.add_option("steps", steps, "timed steps")->capture_default_str();
  app.add_option("batch_size", batch_size, "samples per step")->capture_default_str();
  gpuperf::program::add_torch_version_flag(app);
  return gpuperf::program::run_program(app, argc, argv, [&] {
    gpuperf::require_setting(steps > 0, "steps", steps, "> 0");
    gpuperf::require_setting(batch_size > 0, "batch_size", batch_size, "> 0");
    // Too large a batch is a runtime failure that names it: exit 1 on the host, 3 on a GPU.
    return gpuperf::program::with_memory_errors("batch_size " + std::to_string(batch_size),
                                                [&] { return time_regions(steps, batch_size); });
  });
} catch (...) {
  return gpuperf::program::setup_failed("region_timing");
}
