#pragma once
// The measurement loop: warm-up excluded, then timed windows of several steps with no host sync
// inside a window; throughput per window = samples / window time; statistics over windows.
//
//   gpuperf::MeasureOptions options;
//   options.adaptive = true;  // stop once the 95% CI is within 2% of the mean, or time is up
//   auto timer = gpuperf::make_timer(gpuperf::TimerKind::kCudaEvent);
//   auto result = gpuperf::measure([&] { step(batch); }, 256, *timer, options);
//   std::cout << result.throughput.median << " samples/s\n";

#include <functional>
#include <string>
#include <vector>

#include "gpuperf/timing/statistics.h"
#include "gpuperf/timing/timer.h"

namespace gpuperf {

/// How long to warm up and how many windows to time.
struct MeasureOptions {
  int warmup = 10;                   ///< untimed steps first (cuDNN autotune, allocator growth)
  int steps_per_window = 20;         ///< steps between two timer marks
  int windows = 10;                  ///< timed windows in fixed mode
  bool adaptive = false;             ///< stop on precision or time instead of after `windows`
  int min_windows = 5;               ///< adaptive: never fewer
  int max_windows = 200;             ///< adaptive: never more
  double target_relative_ci = 0.02;  ///< adaptive: stop when CI half-width / mean is below this
  double max_seconds = 60;           ///< adaptive: stop after this much timed time (seconds)

  /// Throws ConfigError naming the first bad field ("MeasureOptions::windows: must be >= 1, got
  /// 0").
  void validate() const;
};

/// What a progress callback is told after each window.
struct WindowProgress {
  int window = 0;                ///< 1-based index of the window just finished
  int planned_windows = 0;       ///< `windows`, or `max_windows` in adaptive mode
  double window_throughput = 0;  ///< samples/s of that window
  double elapsed_seconds = 0;    ///< timed seconds so far
};

/// Result of measure(): every window, the statistics over them and why it stopped.
struct Measurement {
  std::vector<double> window_seconds;
  std::vector<double> window_throughput;  ///< samples/s of each window
  Summary throughput;                     ///< over window_throughput
  double samples_per_step = 0;
  int warmup_steps = 0;
  int steps_per_window = 0;
  int timed_steps = 0;
  double timed_seconds = 0;       ///< sum of window_seconds
  double overall_throughput = 0;  ///< all timed samples / timed_seconds
  std::string stop_reason;        ///< "fixed window count", "converged", "time limit", ...
};

/// Runs `step` options.warmup times untimed, then in timed windows, and summarizes.
/// `samples_per_step` is the batch size (samples processed by one call of `step`). `progress`
/// is called after each window; `before_timing` once between warm-up and the first window
/// (e.g. to synchronise and start a telemetry sampler).
[[nodiscard]] Measurement measure(const std::function<void()>& step, double samples_per_step,
                                  Timer& timer, const MeasureOptions& options,
                                  const std::function<void(const WindowProgress&)>& progress = {},
                                  const std::function<void()>& before_timing = {});

/// In adaptive mode, a warning when the timed seconds ran past options.max_seconds by more than
/// half (the options.min_windows windows run whatever their length, and a window is never cut
/// short): says by how much and what to change; "" otherwise.
[[nodiscard]] std::string time_limit_overrun(const Measurement& measurement,
                                             const MeasureOptions& options);

}  // namespace gpuperf
