#pragma once
// Helpers shared by the microbenchmark sources (not installed).

#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>

#include "gpuperf/micro/micro.h"
#include "gpuperf/device/cuda_timer.h"

namespace gpuperf::detail {

/// The first line of a c10 message (they carry a C++ backtrace and sometimes more context).
[[nodiscard]] std::string first_line(const std::string& text);
/// The device's index; 0 when it has none.
[[nodiscard]] int device_index(const torch::Device& device);
/// CUDA events on the device's current stream, or a steady clock for the CPU.
[[nodiscard]] std::unique_ptr<Timer> timer_for(const torch::Device& device);
/// Times `step` (one call = r.work_per_call units of work) through measure() and fills the rate
/// fields of `r` (windows, summary, warm-up and calls per window) in r's unit.
void time_calls(MicroResult& r, const std::function<void()>& step, Timer& timer,
                const MicroOptions& options);

}  // namespace gpuperf::detail
