#pragma once
// Latency distributions: record one duration per call, then read tail percentiles.
//
//   gpuperf::LatencyRecorder recorder;
//   for (auto& request : requests) {
//     auto start = timer->mark();
//     serve(request);
//     recorder.add(timer->seconds(start, timer->mark()));
//   }
//   auto s = recorder.summary();   // s.p50, s.p99, s.tail_ratio() ...

#include <cstddef>
#include <vector>

namespace gpuperf {

/// Percentiles of a set of latencies, seconds. Percentiles interpolate linearly between the
/// closest ranks (numpy's default), through quantile_sorted().
struct LatencySummary {
  std::size_t count = 0;
  double mean = 0;
  double min = 0;
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;

  /// p99 / p50: how far the tail sits from the typical call (1 = no tail); infinite if p50 is 0.
  [[nodiscard]] double tail_ratio() const;
};

/// Summarizes latencies in seconds; throws ConfigError when `seconds` is empty or holds a
/// negative or non-finite value.
[[nodiscard]] LatencySummary summarize_latency(std::vector<double> seconds);

/// Collects latencies one at a time (from a Timer, a serving loop, a simulation).
class LatencyRecorder {
 public:
  /// Room for `count` samples, so that recording never allocates inside a timed loop.
  void reserve(std::size_t count) { samples_.reserve(count); }
  /// Adds one latency; throws ConfigError for a negative or non-finite value.
  void add(double seconds);
  /// Forgets every sample.
  void clear() { samples_.clear(); }
  /// Samples recorded so far.
  [[nodiscard]] std::size_t size() const { return samples_.size(); }
  /// The samples in recording order, seconds.
  [[nodiscard]] const std::vector<double>& samples() const { return samples_; }
  /// summarize_latency(samples()); throws ConfigError when nothing was recorded.
  [[nodiscard]] LatencySummary summary() const { return summarize_latency(samples_); }

 private:
  std::vector<double> samples_;
};

}  // namespace gpuperf
