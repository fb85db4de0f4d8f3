#pragma once
// The CUDA-event Timer (gpuperf/timing/timer.h has the interface and the host clock's).
//
//   auto timer = gpuperf::make_timer(gpuperf::TimerKind::kCudaEvent, 0);
//   auto start = timer->mark();  // enqueued on the current stream, no host sync

#include <memory>

#include "gpuperf/timing/timer.h"

namespace gpuperf {

/// A timer of CUDA events recorded on the current stream of `device_index`.
/// Throws CudaError when gpuperf was built without CUDA or there is no such device.
[[nodiscard]] std::unique_ptr<Timer> make_cuda_event_timer(int device_index);

/// make_steady_clock_timer() or make_cuda_event_timer(device_index), by kind.
[[nodiscard]] std::unique_ptr<Timer> make_timer(TimerKind kind, int device_index = 0);

}  // namespace gpuperf
