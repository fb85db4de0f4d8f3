#include "gpuperf/timing/measure.h"

#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
void MeasureOptions::validate() const {
  // Every field is checked in both modes, so that a bad setting is refused before it matters.
  require_setting(warmup >= 0, "MeasureOptions::warmup", warmup, ">= 0");
  require_setting(steps_per_window >= 1, "MeasureOptions::steps_per_window", steps_per_window,
                  ">= 1");
  require_setting(windows >= 1, "MeasureOptions::windows", windows, ">= 1");
  require_setting(target_relative_ci > 0, "MeasureOptions::target_relative_ci", target_relative_ci,
                  "> 0");
  require_setting(max_seconds > 0, "MeasureOptions::max_seconds", max_seconds, "> 0");
  // Two windows at least: a confidence interval needs a spread.
  require_setting(min_windows >= 2, "MeasureOptions::min_windows", min_windows, ">= 2");
  require_setting(max_windows >= min_windows, "MeasureOptions::max_windows", max_windows,
                  ">= {min_windows}");
}

Measurement measure(const std::function<void()>& step, double samples_per_step, Timer& timer,
                    const MeasureOptions& options,
                    const std::function<void(const WindowProgress&)>& progress,
                    const std::function<void()>& before_timing) {
  options.validate();
  if (!(samples_per_step > 0)) {
    throw ConfigError("measure: samples_per_step must be > 0, got " +
                      std::to_string(samples_per_step));
  }
  for (int i = 0; i < options.warmup; ++i) step();
  if (before_timing) before_timing();

  Measurement result;
  result.samples_per_step = samples_per_step;
  result.warmup_steps = options.warmup;
  result.steps_per_window = options.steps_per_window;
  const int planned = options.adaptive ? options.max_windows : options.windows;
  const double samples_per_window = samples_per_step * options.steps_per_window;

  timer.clear();
  // Consecutive windows share marks, so no device time falls between two windows. The only
  // host wait is reading a window's end mark, once per window.
  std::size_t window_start = timer.mark();
  result.stop_reason = options.adaptive ? "max windows reached" : "fixed window count";
  for (int window = 1; window <= planned; ++window) {
    for (int i = 0; i < options.steps_per_window; ++i) step();
    const std::size_t window_end = timer.mark();
    const double seconds = timer.seconds(window_start, window_end);
    window_start = window_end;
    if (!(seconds > 0)) {
      throw Error("measure: a window took " + std::to_string(seconds) +
                  " s; the timer cannot resolve it (use more steps per window)");
    }
    result.window_seconds.push_back(seconds);
    result.window_throughput.push_back(samples_per_window / seconds);
    result.timed_seconds += seconds;
    if (progress) progress({window, planned, samples_per_window / seconds, result.timed_seconds});

    if (options.adaptive && window >= options.min_windows) {
      if (summarize(result.window_throughput).relative_ci95_half_width() <
          options.target_relative_ci) {
        result.stop_reason = "converged";
        break;
      }
      if (result.timed_seconds >= options.max_seconds) {
        result.stop_reason = "time limit";
        break;
      }
    }
  }
  result.timed_steps = static_cast<int>(result.window_seconds.size()) * options.steps_per_window;
  result.throughput = summarize(result.window_throughput);
  result.overall_throughput = samples_per_step * result.timed_steps / result.timed_seconds;
  return result;
}

std::string time_limit_overrun(const Measurement& m, const MeasureOptions& options) {
  if (!options.adaptive || !(m.timed_seconds > 1.5 * options.max_seconds)) return "";
  const double per_window = m.timed_seconds / static_cast<double>(m.window_seconds.size());
  return "timing took " + format_number(m.timed_seconds, 3) +
         " s against MeasureOptions::max_seconds " + format_number(options.max_seconds, 3) + " (" +
         format_number(m.timed_seconds / options.max_seconds, 2) +
         "x): " + std::to_string(m.window_seconds.size()) + " windows of " +
         format_number(per_window, 3) + " s each (at least MeasureOptions::min_windows " +
         std::to_string(options.min_windows) +
         " run); use fewer MeasureOptions::steps_per_window or a smaller "
         "MeasureOptions::min_windows";
}

}  // namespace gpuperf
