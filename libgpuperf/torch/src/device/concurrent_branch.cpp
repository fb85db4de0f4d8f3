#include "gpuperf/device/concurrent_branch.h"

#include <cstdlib>
#include <exception>
#include <utility>

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <array>
#endif

namespace gpuperf {

#if GPUPERF_WITH_CUDA
struct ConcurrentBranch::Fork {
  c10::cuda::CUDAStream main;
  c10::cuda::CUDAStream side;
  at::cuda::CUDAEvent done;

  void join() {
    done.record(side);
    done.block(main);
  }
};

namespace {

// The branch streams of this thread, one per GPU. Not PyTorch's stream pool: CUDA graph captures
// run on a stream taken from the pool (detail::capture_on_side_stream), and a branch that landed
// on the capturing stream would run in line. Not shared between threads: another thread's
// capture would take in this thread's work.
class BranchStreams {
 public:
  BranchStreams() = default;
  BranchStreams(const BranchStreams&) = delete;
  BranchStreams& operator=(const BranchStreams&) = delete;
  ~BranchStreams() {
    // Pending work completes first; an error here (the CUDA context already gone at exit) is moot.
    for (cudaStream_t s : streams_) {
      if (s != nullptr) (void)cudaStreamDestroy(s);
    }
  }

  c10::cuda::CUDAStream get(c10::DeviceIndex index) {
    cudaStream_t& s = streams_.at(static_cast<std::size_t>(index));
    if (s == nullptr) {
      const c10::cuda::CUDAGuard device(index);
      C10_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    return c10::cuda::getStreamFromExternal(s, index);
  }

 private:
  std::array<cudaStream_t, C10_COMPILE_TIME_MAX_GPUS> streams_{};
};

c10::cuda::CUDAStream branch_stream(c10::DeviceIndex index) {
  thread_local BranchStreams streams;
  return streams.get(index);
}

// GPUPERF_EXPERIMENT_SERIAL_BRANCH=1 runs every branch in place: this session's A/B measurement
// only (removed after it).
bool serial_experiment() {
  const char* v = std::getenv("GPUPERF_EXPERIMENT_SERIAL_BRANCH");
  return v != nullptr && v[0] == '1';
}

}  // namespace
#else
struct ConcurrentBranch::Fork {
  void join() {}
};
#endif

ConcurrentBranch::ConcurrentBranch(const torch::Tensor& x,
                                   const std::function<torch::Tensor()>& branch) {
#if GPUPERF_WITH_CUDA
  if (x.defined() && x.is_cuda() && !serial_experiment()) {
    const c10::cuda::CUDAGuard device(x.device());
    const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
    const c10::cuda::CUDAStream side = branch_stream(x.device().index());
    at::cuda::CUDAEvent forked;
    forked.record(main);
    forked.block(side);
    fork_ = std::make_unique<Fork>(Fork{main, side, at::cuda::CUDAEvent()});
    forked_ = true;
    try {
      const c10::cuda::CUDAStreamGuard on_side(side);
      result_ = branch();
    } catch (...) {
      // No destructor runs for an object whose constructor throws: join here, so that a CUDA
      // graph capture under way is not left with a stream it cannot end.
      fork_->join();
      throw;
    }
    if (result_.defined() && result_.is_cuda()) result_.record_stream(main);
    return;
  }
#endif
  result_ = branch();
}

ConcurrentBranch::~ConcurrentBranch() {
  if (fork_ == nullptr) return;
  try {
    fork_->join();
  } catch (const std::exception&) {
    // Unwinding already, or the device failed: the first error is the one to report.
  }
}

torch::Tensor ConcurrentBranch::join() {
  if (fork_ != nullptr) {
    fork_->join();
    fork_.reset();
  }
  return std::move(result_);
}

}  // namespace gpuperf
