#pragma once
// One process's membership of a data-parallel job: c10d's TCPStore for the rendezvous (rank 0
// serves it at MASTER_ADDR:MASTER_PORT) and a process group, NCCL on GPUs and Gloo on CPUs.
//
//   auto env = gpuperf::read_launch_env();
//   gpuperf::ProcessGroup group(*env, torch::Device(torch::kCUDA, env->local_rank));
//   group.broadcast(tensor, /*root=*/0);
//   group.allreduce_sum(gradients);

#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/comm/backend.h"
#include "gpuperf/comm/launch_env.h"

namespace gpuperf {

/// How a process joins the job.
struct ProcessGroupOptions {
  C10dBackend backend = C10dBackend::kAuto;
  /// Longest wait for the other ranks, at the rendezvous (joining the store and connecting the
  /// group together) and in any collective: a rank that died or hangs makes the others fail
  /// with an error after this long instead of waiting forever. From 1 ms to a day.
  double timeout_seconds = 120;
  /// What this rank runs, as (field, value) pairs ("TrainingRun::batch_size", "256"): compared
  /// with rank 0's at the rendezvous, before any collective. A difference is a ConfigError on
  /// every rank naming the first differing field and both values; empty: nothing compared.
  std::vector<std::pair<std::string, std::string>> settings;

  /// Throws ConfigError naming the field (ProcessGroupOptions::timeout_seconds) and the value.
  void validate() const;
};

/// Waits for an asynchronous collective: on a GPU the current stream waits for it (no host
/// block), on the CPU the host waits.
using PendingCollective = std::function<void()>;

/// A process group of the job (move-only). The collectives run on the device of the tensors:
/// CUDA tensors with NCCL, CPU tensors with Gloo.
class ProcessGroup {
 public:
  /// Joins: rank 0 serves the store, the others connect; returns when all world_size ranks have
  /// joined. ConfigError when the backend is not built in or does not fit the device;
  /// gpuperf::Error when the rendezvous times out.
  ProcessGroup(const LaunchEnv& env, const torch::Device& device,
               const ProcessGroupOptions& options = {});
  ~ProcessGroup();
  ProcessGroup(ProcessGroup&& other) noexcept;
  ProcessGroup& operator=(ProcessGroup&& other) noexcept;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  [[nodiscard]] int rank() const;
  [[nodiscard]] int world_size() const;
  [[nodiscard]] const LaunchEnv& env() const;
  /// "nccl" or "gloo".
  [[nodiscard]] std::string backend_name() const;

  /// Sums `tensor` over the ranks in place, asynchronously; call the result to wait.
  [[nodiscard]] PendingCollective allreduce_sum_async(torch::Tensor& tensor);
  /// Sums `tensor` over the ranks in place and waits.
  void allreduce_sum(torch::Tensor& tensor);
  /// Element-wise maximum over the ranks, in place.
  void allreduce_max(torch::Tensor& tensor);
  /// Element-wise minimum over the ranks, in place.
  void allreduce_min(torch::Tensor& tensor);
  /// Copies `root`'s `tensor` into every rank's, in place.
  void broadcast(torch::Tensor& tensor, int root = 0);
  /// Returns when every rank has called it.
  void barrier();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuperf
