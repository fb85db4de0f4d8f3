#pragma once
// Data-parallel gradients, as PyTorch's DistributedDataParallel makes them: parameters and
// buffers broadcast from rank 0 at the start; gradients gathered into buckets (in reverse
// parameter order, about 25 MiB each) by hooks that fire as backward produces them, each bucket
// all-reduced as soon as it is complete (overlapping the rest of backward), buckets launched in
// the same order on every rank; after backward the averages are copied back into the gradients.
//
//   gpuperf::ProcessGroup group(*gpuperf::read_launch_env(), device);
//   gpuperf::TrainStep step(model, device, options);
//   step.set_gradient_sync(std::make_shared<gpuperf::DataParallelSync>(step.module(), group));
//   for (...) step(x, y);   // every rank ends each step with the same parameters

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpuperf/comm/process_group.h"
#include "gpuperf/train/gradient_sync.h"

namespace gpuperf {

/// How gradients are bucketed.
struct DataParallelOptions {
  double bucket_bytes = 25.0 * 1024 * 1024;  ///< a bucket is launched once it holds this much
  /// Start each bucket's all-reduce from the gradient hooks, during backward; false: all after
  /// backward (no overlap; for measuring what the overlap gains).
  bool overlap = true;

  /// Throws ConfigError naming the bad field (bucket_bytes must be finite and > 0).
  void validate() const;
};

/// The GradientSync of data-parallel training over a ProcessGroup (see the file comment).
class DataParallelSync : public GradientSync {
 public:
  /// Broadcasts `module`'s parameters and buffers from rank 0 and registers the gradient hooks.
  /// `group` must outlive this object.
  DataParallelSync(torch::nn::Module& module, ProcessGroup& group,
                   DataParallelOptions options = {});
  /// Removes the gradient hooks: the module trains on without this sync.
  ~DataParallelSync() override;
  DataParallelSync(const DataParallelSync&) = delete;
  DataParallelSync& operator=(const DataParallelSync&) = delete;

  void begin_step(int micro_batches) override;
  void after_backward() override;
  /// Gloo's collectives run on host threads and cannot be captured; NCCL's can.
  [[nodiscard]] std::string capture_unsupported_reason() const override;

  /// Buckets of the gradients.
  [[nodiscard]] std::size_t bucket_count() const { return buckets_.size(); }
  /// Bytes all-reduced per step (every trainable parameter's gradient).
  [[nodiscard]] double gradient_bytes() const;
  /// The bucket buffers themselves (to time their all-reduce apart from training).
  [[nodiscard]] std::vector<torch::Tensor> bucket_buffers() const;

 private:
  struct Bucket {
    torch::Tensor flat;
    std::vector<std::size_t> params;  // indices into params_
    std::vector<std::int64_t> offsets;
    std::size_t ready = 0;  // gradients copied in this step
    PendingCollective pending;
  };

  void on_gradient(std::size_t param, const torch::Tensor& grad);
  void launch_ready_buckets();

  ProcessGroup& group_;
  DataParallelOptions options_;
  std::vector<torch::Tensor> params_;
  std::vector<std::size_t> bucket_of_;  // param index -> bucket
  std::vector<std::size_t> slot_of_;    // param index -> position in its bucket
  std::vector<bool> written_;           // param index -> gradient copied this step
  std::vector<unsigned> hooks_;         // param index -> its hook's handle (with overlap)
  std::vector<Bucket> buckets_;
  torch::Tensor scale_;          // 1 / world size, on the parameters' device (the gradients' dtype)
  std::size_t next_launch_ = 0;  // buckets launch in order on every rank
  // Off while a step accumulates micro-batches: a hook sees one micro-batch's contribution, not
  // the sum, so after_backward() then reads the accumulated gradients (no overlap).
  bool hooks_active_ = true;
  std::mutex mutex_;
};

/// FNV-1a over every parameter's bytes: equal on two ranks when their parameters are identical
/// bit for bit (a host copy; not for every step).
[[nodiscard]] std::uint64_t parameter_digest(torch::nn::Module& module);
/// Whether every rank holds bit-identical parameters (a collective: every rank must call it).
[[nodiscard]] bool parameters_identical_across_ranks(torch::nn::Module& module,
                                                     ProcessGroup& group);

}  // namespace gpuperf
