#include "device/cuda_graph_capture.h"

#if GPUPERF_WITH_CUDA

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <exception>

#include "gpuperf/base/log.h"

namespace gpuperf::detail {

std::string capture_on_side_stream(at::cuda::CUDAGraph& graph, c10::DeviceIndex index, int warmup,
                                   const std::function<void()>& warmup_step,
                                   const std::function<void()>& step) {
  c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(index);
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index);
  at::cuda::CUDAEvent ready;
  ready.record(main);
  ready.block(side);
  std::string reason;
  try {
    c10::cuda::CUDAStreamGuard on_side(side);
    for (int i = 0; i < warmup; ++i) warmup_step();
    // The graph allocates from its own pool: the blocks the eager steps left in the allocator's
    // cache would otherwise stay reserved beside it, doubling a step's working set.
    c10::cuda::CUDACachingAllocator::emptyCache();
    // Thread-local capture: only this thread's calls are captured or refused. Under the global
    // mode, another thread's CUDA work (the input pipeline's nvJPEG decode and copies on their
    // own stream) would break the capture.
    graph.capture_begin(at::cuda::MempoolId_t{0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      step();
    } catch (...) {
      try {
        graph.capture_end();
      } catch (...) {
        // The capture is already broken; the first error is the one to report.
      }
      throw;
    }
    graph.capture_end();
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const std::exception& e) {
    reason = std::string("CUDA graph capture failed, running eagerly: ") + e.what();
    log::warn(reason);
  }
  at::cuda::CUDAEvent done;
  done.record(side);
  done.block(main);
  return reason;
}

}  // namespace gpuperf::detail

#endif  // GPUPERF_WITH_CUDA
