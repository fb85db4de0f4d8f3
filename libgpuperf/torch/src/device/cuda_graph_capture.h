#pragma once
// Capturing a step into a CUDA graph, shared by TrainStep and InferenceSession (internal, CUDA
// builds only).

#if GPUPERF_WITH_CUDA

#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/Device.h>

#include <functional>
#include <string>

namespace gpuperf::detail {

/// Runs `warmup_step` `warmup` times and then captures `step` into `graph`, all on a side stream
/// of device `index` that starts after the current stream's pending work. cuDNN autotuning,
/// allocator growth and lazily created state must happen before capture, on the capture stream:
/// that is what the warm-up is for. The allocator's cached blocks are released before the capture
/// (the graph allocates from a pool of its own). Whatever happens, the current stream then waits
/// for the side stream's work. Returns "" when the graph was captured, otherwise why not ("CUDA
/// graph capture failed, running eagerly: ...", also logged as a warning). Out-of-memory errors
/// propagate: what does not fit in a graph does not fit eagerly either.
[[nodiscard]] std::string capture_on_side_stream(at::cuda::CUDAGraph& graph, c10::DeviceIndex index,
                                                 int warmup,
                                                 const std::function<void()>& warmup_step,
                                                 const std::function<void()>& step);

}  // namespace gpuperf::detail

#endif  // GPUPERF_WITH_CUDA
