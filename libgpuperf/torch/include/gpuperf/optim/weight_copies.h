#pragma once
// 16-bit copies of float32 parameters that stay current without a cast each step: FusedOptimizer's
// Adam kernel writes every updated value in both dtypes (write_copies()), and a mixed-precision
// forward pass reads the copies (the transformers' block weights) where it would cast every
// weight again. A copy whose parameter changed otherwise (the parameter's version counter moved:
// a checkpoint loaded, an in-place edit) is cast again before it is read.
//
//   gpuperf::WeightCopies copies(torch::kBFloat16);
//   optimizer.write_copies(&copies);
//   { gpuperf::WeightCopies::Scope scope(&copies);  loss = model->forward(x) ... }
//
// TrainStep sets this up itself for AdamW/Adam on a GPU under 16-bit autocast. The copies hold
// 2 bytes a parameter between steps (the casts they replace held them through the forward and
// backward passes). Writes the version counter does not see (through data_ptr(), or c10d
// collectives into a parameter: a broadcast) need forget() after them.

#include <c10/core/ScalarType.h>
#include <torch/types.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpuperf {

/// Uninitialised tensors shaped and strided as `like`, in `dtype`: back to back in one allocation
/// in the list's order, each start a multiple of 16 bytes, where all are contiguous on one device
/// (then neighbours that multiply one input form one matrix: Llama's wq, wk and wv, as
/// rotary_heads() reads them); else each its own, dense in its tensor's memory order.
/// WeightCopies' copies and cast_weights()' casts.
[[nodiscard]] std::vector<torch::Tensor> empty_back_to_back(const std::vector<torch::Tensor>& like,
                                                            c10::ScalarType dtype);

/// Copies of a list of float32 parameters in one 16-bit dtype (see the file comment).
class WeightCopies {
 public:
  /// Throws ConfigError unless `dtype` is float16 or bfloat16.
  explicit WeightCopies(c10::ScalarType dtype);

  /// The copies of `parameters` in `dtype`, current: made on the first call (which registers the
  /// list), cast again where a parameter changed since its copy was written. Empty where they
  /// cannot be kept: another dtype, a list other than the registered one (the same tensors in the
  /// same order), or a parameter that is not a dense float32 tensor; the caller casts then.
  std::vector<torch::Tensor> get(const std::vector<torch::Tensor>& parameters,
                                 c10::ScalarType dtype);
  /// Casts again every registered copy whose parameter changed since it was written.
  void refresh();
  /// Counts every copy as stale: each is cast again before it is next read (get(), refresh()).
  void forget();
  /// The copy of `parameter`, or an undefined tensor where it has none.
  [[nodiscard]] torch::Tensor copy_of(const torch::Tensor& parameter) const;
  /// Records that `parameter`'s copy holds its current value (an update wrote both).
  void written(const torch::Tensor& parameter);
  [[nodiscard]] c10::ScalarType dtype() const { return dtype_; }
  /// How many parameters have copies.
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

  /// The copies a forward pass on this thread reads (Scope), or null.
  [[nodiscard]] static WeightCopies* current();
  /// Makes `copies` (may be null: none) the current ones for its lifetime, on this thread.
  class Scope {
   public:
    explicit Scope(WeightCopies* copies);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    WeightCopies* previous_;
  };

 private:
  struct Entry {
    torch::Tensor parameter;
    torch::Tensor copy;
    std::int64_t version = 0;  // the parameter's version the copy holds
  };
  static void cast(Entry& entry);

  c10::ScalarType dtype_;
  std::vector<Entry> entries_;
  std::unordered_map<const void*, std::size_t> index_;  // TensorImpl -> entry
};

}  // namespace gpuperf
