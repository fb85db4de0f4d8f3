// CUDA-event timer. Events come from a pool that clear() rewinds, so a long run does not create
// an event per mark.
#include <memory>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/device/cuda_timer.h"

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>
#endif

namespace gpuperf {

#if GPUPERF_WITH_CUDA
namespace {

class CudaEventTimer final : public Timer {
 public:
  explicit CudaEventTimer(int device_index) : device_index_(device_index) {}

  std::size_t mark() override {
    if (used_ == events_.size())
      events_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
    auto stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_index_));
    events_[used_]->record(stream);
    return used_++;
  }

  double seconds(std::size_t from, std::size_t to) override {
    if (from >= used_ || to >= used_) {
      throw ConfigError("CudaEventTimer: no such mark " + std::to_string(std::max(from, to)));
    }
    events_[to]->synchronize();
    events_[from]->synchronize();
    return static_cast<double>(events_[from]->elapsed_time(*events_[to])) / 1e3;
  }

  void clear() override { used_ = 0; }
  [[nodiscard]] std::size_t size() const override { return used_; }
  [[nodiscard]] std::string name() const override { return "cuda-event"; }

 private:
  int device_index_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;
  std::size_t used_ = 0;
};

}  // namespace

std::unique_ptr<Timer> make_cuda_event_timer(int device_index) {
  const int count = static_cast<int>(c10::cuda::device_count());
  if (device_index < 0 || device_index >= count) {
    throw CudaError("no CUDA device " + std::to_string(device_index) + " (" +
                    std::to_string(count) + " present)");
  }
  return std::make_unique<CudaEventTimer>(device_index);
}

#else

std::unique_ptr<Timer> make_cuda_event_timer(int device_index) {
  throw CudaError("CUDA event timer for device " + std::to_string(device_index) +
                  " requested, but gpuperf was built with a LibTorch without CUDA");
}

#endif

std::unique_ptr<Timer> make_timer(TimerKind kind, int device_index) {
  if (kind == TimerKind::kCudaEvent) return make_cuda_event_timer(device_index);
  return make_steady_clock_timer();
}

}  // namespace gpuperf
