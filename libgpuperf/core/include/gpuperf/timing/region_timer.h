#pragma once
// Named regions inside a hand-written training loop, timed without a host sync per step. Marks
// are recorded in stream order; everything is resolved once, in summary().
//
//   gpuperf::RegionTimer regions(*timer);
//   for (...) {
//     regions.begin("forward");  auto loss = ...;           regions.end("forward");
//     { auto scope = regions.scope("backward"); loss.backward(); }
//     regions.step_done(batch_size);
//   }
//   for (const auto& r : regions.summary().regions) std::cout << r.name << r.total_seconds;

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/timing/statistics.h"
#include "gpuperf/timing/timer.h"

namespace gpuperf {

/// Per-region and whole-loop figures from RegionTimer::summary().
struct RegionSummary {
  struct Region {
    std::string name;
    std::size_t calls = 0;
    double total_seconds = 0;
    double share = 0;  ///< total_seconds / wall seconds from first to last step mark
    Summary per_call;  ///< seconds per call
  };
  std::vector<Region> regions;  ///< in order of first use
  std::size_t steps = 0;
  double samples = 0;
  double seconds = 0;     ///< from the first begin() to the last step_done()
  double throughput = 0;  ///< samples / seconds
};

/// Times named regions with a Timer; regions may nest but not interleave with themselves.
class RegionTimer {
 public:
  /// Uses `timer` for marks (it must outlive this object); clears it first.
  explicit RegionTimer(Timer& timer);

  /// Starts region `name`. Throws ConfigError if it is already open.
  void begin(std::string_view name);
  /// Ends region `name`. Throws ConfigError if it is not open.
  void end(std::string_view name);
  /// Marks the end of one step of `samples` samples (for throughput).
  void step_done(double samples);

  /// RAII region: begin() now, end() on destruction. The destructor does not throw: an end()
  /// that fails leaves the region open, which summary() reports.
  class Scope {
   public:
    Scope(RegionTimer& owner, std::string_view name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RegionTimer& owner_;
    std::string name_;
  };
  /// begin(name) now and end(name) when the returned object goes out of scope.
  [[nodiscard]] Scope scope(std::string_view name) { return Scope(*this, name); }

  /// Waits for the device and computes per-region figures. Throws if a region is still open.
  [[nodiscard]] RegionSummary summary() const;

 private:
  struct Interval {
    std::size_t region;
    std::size_t begin_mark;
    std::size_t end_mark;
  };
  std::size_t region_index(std::string_view name);

  Timer& timer_;
  std::vector<std::string> names_;
  std::vector<long> open_mark_;  // per region: open mark id, or -1
  std::vector<Interval> intervals_;
  std::size_t first_mark_ = 0;
  bool started_ = false;
  std::size_t last_step_mark_ = 0;
  std::size_t steps_ = 0;
  double samples_ = 0;
};

}  // namespace gpuperf
