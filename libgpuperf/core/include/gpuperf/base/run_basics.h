#pragma once
// What every run description shares: where it runs, how it is seeded, whether it talks, how to
// run it again, and where a kernel trace goes. TrainingRun, InferenceRun and MicroRun derive from
// it, so each field has one name, one default and one check:
//
//   gpuperf::TrainingRun run;   // a RunBasics
//   run.device = "cuda:1";
//   run.seed = 7;
//   run.validate();             // RunBasics::validate() first, then the run's own fields

#include <cstdint>
#include <string>

namespace gpuperf {

/// The fields every run has. Limits are the library's: errors name the field
/// ("RunBasics::threads: must be <= 16 (this machine's hardware threads), got 100").
struct RunBasics {
  std::string device = "auto";  ///< auto, cpu, cuda or cuda:N (auto: a GPU if there is one)
  std::int64_t seed = 0;        ///< weights and synthetic data (>= 0)
  int threads = 0;              ///< CPU intra-op threads; 0: LibTorch's default
  bool quiet = false;           ///< no progress lines
  std::string command_line;     ///< recorded as the command that reproduces the run
  /// Where to write a Chrome trace (CPU operators, GPU kernels) of a few steps or calls made
  /// under LibTorch's profiler after the measurement, never inside it; "" for none. Each run
  /// says what it traces; MicroRun traces nothing and refuses a path.
  std::string kernel_trace;

  /// Throws ConfigError naming the first bad field and its value. Run types call it first.
  void validate() const;
};

/// The longest a run's time setting may be: beyond a day, seconds overflow the steady clock's
/// integer ticks on the way in (1e10 s did), and no benchmark needs it.
inline constexpr double kMaxRunSeconds = 86400;

}  // namespace gpuperf
