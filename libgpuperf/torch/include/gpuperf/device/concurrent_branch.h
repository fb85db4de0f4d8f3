#pragma once
// A branch of a model's forward pass that runs beside the main branch on a second stream of its
// GPU: at small batch sizes one convolution occupies a fraction of the GPU's SMs, and a branch
// that needs nothing from the main one (ResNet's shortcut convolution) can fill the rest.
//
//   gpuperf::ConcurrentBranch shortcut(x, [&] { return downsample->forward(x); });
//   torch::Tensor out = conv2->forward(conv1->forward(x));   // runs beside the shortcut
//   out = out + shortcut.join();                               // waits for it on the GPU only

#include <torch/types.h>

#include <functional>
#include <memory>

namespace gpuperf {

/// Runs `branch` at construction and hands its result over at join(). For a CUDA tensor `x`
/// the branch is enqueued on a second stream of x's GPU (one per thread and GPU, created on first
/// use and kept), after all the work the current stream holds: what the caller enqueues before
/// join() may run beside it, and join() makes that stream wait for it, without a host
/// synchronization. Inside a CUDA graph capture the fork and the join become the graph's edges.
/// Anywhere else (CPU tensors, gpuperf built without CUDA) the branch simply runs in place.
/// What the branch reads must stay alive until join(); the result's memory is recorded as used by
/// the main stream, so the allocator does not reuse it before the main stream is done with it.
/// The destructor joins a branch that was not joined (for example when an exception unwinds).
class ConcurrentBranch {
 public:
  ConcurrentBranch(const torch::Tensor& x, const std::function<torch::Tensor()>& branch);
  ~ConcurrentBranch();
  ConcurrentBranch(const ConcurrentBranch&) = delete;
  ConcurrentBranch& operator=(const ConcurrentBranch&) = delete;

  /// The branch's result, with the stream that was current at construction waiting for it.
  /// Call once.
  [[nodiscard]] torch::Tensor join();

  /// Whether the branch was enqueued on a second stream (false: it ran in place).
  [[nodiscard]] bool forked() const { return forked_; }

 private:
  struct Fork;
  std::unique_ptr<Fork> fork_;  // until joined
  torch::Tensor result_;
  bool forked_ = false;
};

}  // namespace gpuperf
