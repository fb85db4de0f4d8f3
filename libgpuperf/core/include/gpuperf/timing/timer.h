#pragma once
// Timers behind one interface: CUDA events on the GPU, a steady clock on the CPU.
//
//   auto timer = gpuperf::make_timer(gpuperf::TimerKind::kCudaEvent, 0);  //
//   gpuperf/device/cuda_timer.h auto start = timer->mark();          // enqueued in stream order,
//   no host sync for (...) train_step(); auto stop = timer->mark(); double seconds =
//   timer->seconds(start, stop);   // waits for `stop` only here

#include <cstddef>
#include <memory>
#include <string>

namespace gpuperf {

/// Which clock a Timer reads.
enum class TimerKind { kSteadyClock, kCudaEvent };

/// Records marks in the execution order of the device it times and measures between them.
class Timer {
 public:
  virtual ~Timer() = default;
  /// Records a mark and returns its id. Never waits for the device.
  virtual std::size_t mark() = 0;
  /// Seconds from mark `from` to mark `to`; waits until the device has reached `to`.
  [[nodiscard]] virtual double seconds(std::size_t from, std::size_t to) = 0;
  /// Forgets every mark; their resources are reused by later marks.
  virtual void clear() = 0;
  /// Number of marks recorded since the last clear().
  [[nodiscard]] virtual std::size_t size() const = 0;
  /// "steady-clock" or "cuda-event".
  [[nodiscard]] virtual std::string name() const = 0;
};

/// A timer for the host: std::chrono::steady_clock. Right for CPU work, which is synchronous.
[[nodiscard]] std::unique_ptr<Timer> make_steady_clock_timer();

}  // namespace gpuperf
