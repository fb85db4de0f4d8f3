#include "gpuperf/timing/latency.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf {
namespace {

void check_latency(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw ConfigError("latency: must be finite and >= 0 seconds, got " + std::to_string(seconds));
  }
}

}  // namespace

double LatencySummary::tail_ratio() const {
  if (p50 <= 0) return std::numeric_limits<double>::infinity();
  return p99 / p50;
}

LatencySummary summarize_latency(std::vector<double> seconds) {
  if (seconds.empty()) throw ConfigError("latency: no samples to summarize");
  for (double s : seconds) check_latency(s);
  std::sort(seconds.begin(), seconds.end());
  LatencySummary out;
  out.count = seconds.size();
  out.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(out.count);
  out.min = seconds.front();
  out.p50 = quantile_sorted(seconds, 0.50);
  out.p90 = quantile_sorted(seconds, 0.90);
  out.p95 = quantile_sorted(seconds, 0.95);
  out.p99 = quantile_sorted(seconds, 0.99);
  out.max = seconds.back();
  return out;
}

void LatencyRecorder::add(double seconds) {
  check_latency(seconds);
  samples_.push_back(seconds);
}

}  // namespace gpuperf
