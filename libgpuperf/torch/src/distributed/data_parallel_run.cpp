// run_data_parallel_training(): run_training() on every rank with a DataParallelSync, then the
// job's figures gathered into record.distributed.
#include "gpuperf/distributed/data_parallel_run.h"

#include <torch/cuda.h>

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/base/version.h"
#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/device/device.h"
#include "gpuperf/telemetry/telemetry.h"
#include "gpuperf/timing/statistics.h"
#include "gpuperf/train/train_step.h"
#include "train/training_checks.h"

namespace gpuperf {

void DataParallelRun::validate() const {
  group.validate();
  sync.validate();
  if (!std::isnan(baseline_throughput)) {
    require_setting(baseline_throughput > 0 && std::isfinite(baseline_throughput),
                    "DataParallelRun::baseline_throughput", baseline_throughput,
                    "finite and > 0 (NaN: none)");
  }
}

namespace {

// What every rank must run alike, compared at the rendezvous: the device is each rank's own, and
// threads, telemetry and printing may differ without changing what is trained or timed.
std::vector<std::pair<std::string, std::string>> shared_settings(const TrainingRun& run,
                                                                 const DataParallelRun& options) {
  const auto number = [](double v) { return format_number(v, 17); };
  const MeasureOptions& m = run.measure;
  return {
      {"gpuperf_build", kBuildVersion},
      {"TrainingRun::model", run.model},
      {"TrainingRun::batch_size", std::to_string(run.batch_size)},
      {"TrainingRun::accumulation_steps", std::to_string(run.accumulation_steps)},
      {"TrainingRun::num_classes", std::to_string(run.num_classes)},
      {"TrainingRun::precision", run.precision ? to_string(*run.precision) : "auto"},
      {"TrainingRun::memory_format", to_string(run.memory_format)},
      {"TrainingRun::optimizer", to_string(run.optimizer)},
      {"TrainingRun::learning_rate", number(run.learning_rate)},
      {"TrainingRun::momentum", number(run.momentum)},
      {"TrainingRun::weight_decay", number(run.weight_decay)},
      {"TrainingRun::cudnn_benchmark", run.cudnn_benchmark ? "on" : "off"},
      {"TrainingRun::fused_optimizer", to_string(run.fused_optimizer)},
      {"TrainingRun::kernel_fusion", to_string(run.kernel_fusion)},
      {"TrainingRun::cuda_graph", to_string(run.cuda_graph)},
      {"RunBasics::seed", std::to_string(run.seed)},
      {"MeasureOptions::warmup", std::to_string(m.warmup)},
      {"MeasureOptions::steps_per_window", std::to_string(m.steps_per_window)},
      {"MeasureOptions::windows", std::to_string(m.windows)},
      {"DataParallelOptions::bucket_bytes", number(options.sync.bucket_bytes)},
      {"DataParallelOptions::overlap", options.sync.overlap ? "on" : "off"},
      {"ProcessGroupOptions::backend", to_string(options.group.backend)},
  };
}

// The device of this rank (check_data_parallel_run() has taken the device's spelling).
torch::Device rank_device(const TrainingRun& run, const LaunchEnv& env) {
  if (run.device == "cpu") return torch::kCPU;
  if (!torch::cuda::is_available()) {
    if (run.device == "cuda") throw ConfigError("RunBasics::device", "cuda", "no CUDA device here");
    return torch::kCPU;
  }
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (env.local_rank >= gpus) {
    throw ConfigError("local rank " + std::to_string(env.local_rank) +
                      " has no GPU: " + std::to_string(gpus) + " here, " +
                      std::to_string(env.local_world_size) + " ranks on this machine");
  }
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank)};
}

// What carried the all-reduce, in words: NCCL's restrictions from the environment, else the
// links NVML reports for this GPU.
std::string describe_interconnect(const ProcessGroup& group, const torch::Device& device) {
  const LaunchEnv& env = group.env();
  const std::string machines =
      env.local_world_size == env.world_size ? "one machine" : "several machines";
  if (!device.is_cuda()) return "Gloo over TCP (" + machines + ")";
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::string(v) == "1";
  };
  if (set("NCCL_P2P_DISABLE") && set("NCCL_SHM_DISABLE")) {
    return "NCCL over sockets (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, " + machines + ")";
  }
  if (set("NCCL_P2P_DISABLE"))
    return "NCCL through host memory (NCCL_P2P_DISABLE=1, " + machines + ")";
  OpenedTelemetry telemetry = open_nvml_telemetry();
  if (telemetry) {
    const PciLocation pci = cuda_pci_location(device);
    if (TelemetryDevice* d =
            telemetry.system->find_by_pci_location(pci.domain, pci.bus, pci.device)) {
      const std::optional<int> links = d->nvlink_links_up();
      if (links && *links > 0) {
        return "NCCL over NVLink (" + std::to_string(*links) + " links up, " + machines + ")";
      }
      return "NCCL over PCIe (no NVLink up, " + machines + ")";
    }
  }
  return "NCCL (" + machines + "; NVML unavailable: link not known)";
}

// Per-window sums over the ranks: windows end at the same step on every rank (each step waits
// for the others in its all-reduce), so their sum is the job's throughput in that window.
void gather_throughput(ProcessGroup& group, const torch::Device& device, RunRecord& record) {
  DistributedSummary& d = record.distributed;
  const auto options = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  torch::Tensor windows =
      torch::tensor(record.window_throughput, torch::TensorOptions().dtype(torch::kFloat64))
          .to(device);
  group.allreduce_sum(windows);
  windows = windows.cpu();
  std::vector<double> sums(windows.data_ptr<double>(),
                           windows.data_ptr<double>() + windows.numel());
  d.global_throughput = summarize(sums).median;
  torch::Tensor medians = torch::zeros({group.world_size()}, options);
  medians[group.rank()].fill_(record.throughput.median);
  group.allreduce_sum(medians);
  medians = medians.cpu();
  d.rank_throughput.assign(medians.data_ptr<double>(),
                           medians.data_ptr<double>() + medians.numel());
}

// The gradient buckets' all-reduce timed alone, after the run: nccl-tests' bus bandwidth and
// its time per step, which bounds what the overlap with backward must hide.
void time_allreduce(ProcessGroup& group, const torch::Device& device, DataParallelSync& sync,
                    RunRecord& record) {
  constexpr int kWarmup = 2;
  constexpr int kCalls = 10;
  std::vector<torch::Tensor> buckets;
  for (const auto& b : sync.bucket_buffers()) buckets.push_back(b.clone());
  auto step = [&] {
    std::vector<PendingCollective> pending;
    pending.reserve(buckets.size());
    for (auto& b : buckets) pending.push_back(group.allreduce_sum_async(b));
    for (auto& p : pending) p();
  };
  for (int i = 0; i < kWarmup; ++i) step();
  auto timer = make_timer(device.is_cuda() ? TimerKind::kCudaEvent : TimerKind::kSteadyClock,
                          device.is_cuda() ? device.index() : 0);
  group.barrier();
  const std::size_t start = timer->mark();
  for (int i = 0; i < kCalls; ++i) step();
  const std::size_t stop = timer->mark();
  const double seconds = timer->seconds(start, stop) / kCalls;
  DistributedSummary& d = record.distributed;
  const double n = group.world_size();
  d.allreduce_bus_gbps = d.gradient_bytes / seconds * 2 * (n - 1) / n / 1e9;
  const double step_seconds =
      static_cast<double>(record.config.batch_size) / record.throughput.median;
  if (step_seconds > 0) d.allreduce_share_of_step = seconds / step_seconds;
}

}  // namespace

void check_data_parallel_run(const TrainingRun& run, const DataParallelRun& options) {
  options.validate();
  run.validate();
  if (run.measure.adaptive) {
    // Each rank would stop on its own spread, and the others would wait in an all-reduce.
    throw ConfigError("MeasureOptions::adaptive",
                      "not available in a data-parallel run (the ranks must time the same "
                      "windows); give {windows} instead");
  }
  if (run.device != "auto" && run.device != "cuda" && run.device != "cpu") {
    throw ConfigError("RunBasics::device", run.device,
                      "a data-parallel rank uses cuda:LOCAL_RANK; give cuda, cpu or auto");
  }
  // Ranks on the CPU: the device-dependent checks too (fp16 where the CPU has no autocast for
  // it, a CUDA graph, ...), so that the launcher says them once. On GPUs each rank checks its
  // own device: the launcher does not touch CUDA.
  if (run.device == "cpu" || (run.device == "auto" && !torch::cuda::is_available())) {
    TrainingRun on_cpu = run;
    on_cpu.device = "cpu";
    detail::check_training_run(on_cpu);
  }
}

RunRecord run_data_parallel_training(const TrainingRun& run, const LaunchEnv& env,
                                     const DataParallelRun& options) {
  // Before the rank's device is chosen: bad settings fail on every rank alike.
  check_data_parallel_run(run, options);
  const torch::Device device = rank_device(run, env);
  TrainingRun rank_run = run;
  rank_run.device = device.str();
  rank_run.quiet = run.quiet || env.rank != 0;
  // The group is joined when the step exists: run_training() has validated and resolved the
  // run by then, so a bad option fails on every rank before any of them waits for the others.
  std::unique_ptr<ProcessGroup> group;
  std::shared_ptr<DataParallelSync> sync;
  TrainingHooks hooks;
  hooks.gradient_sync = [&](TrainStep& step) {
    ProcessGroupOptions group_options = options.group;
    group_options.settings = shared_settings(run, options);
    group = std::make_unique<ProcessGroup>(env, device, group_options);
    sync = std::make_shared<DataParallelSync>(step.module(), *group, options.sync);
    return sync;
  };
  hooks.data_seed_offset = 1000003ULL * static_cast<std::uint64_t>(env.rank);
  hooks.data_rank = env.rank;
  hooks.data_world_size = env.world_size;
  hooks.after_measure = [&](TrainStep& step, RunRecord& record) {
    DistributedSummary& d = record.distributed;
    d.world_size = env.world_size;
    d.backend = group->backend_name();
    d.launcher = env.launcher;
    d.interconnect = describe_interconnect(*group, device);
    d.buckets = static_cast<std::int64_t>(sync->bucket_count());
    d.gradient_bytes = sync->gradient_bytes();
    gather_throughput(*group, device, record);
    d.parameters_identical = parameters_identical_across_ranks(step.module(), *group);
    time_allreduce(*group, device, *sync, record);
    d.baseline_throughput = options.baseline_throughput;
    if (options.baseline_throughput > 0) {
      d.scaling_efficiency = d.global_throughput / (env.world_size * options.baseline_throughput);
    }
  };
  return run_training(rank_run, hooks);
}

}  // namespace gpuperf
