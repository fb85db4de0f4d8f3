#include "gpuperf/timing/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz's method).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 500;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b;
  const double qap = a + 1;
  const double qam = a - 1;
  double c = 1;
  double d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < kEpsilon) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * incomplete_beta_fraction(a, b, x) / a;
  return 1 - front * incomplete_beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double Summary::relative_ci95_half_width() const {
  if (count < 2 || mean == 0) return std::numeric_limits<double>::infinity();
  return ci95_half_width() / std::fabs(mean);
}

double student_t_cdf(double t, double dof) {
  if (!(dof > 0))
    throw ConfigError("student_t_cdf: degrees of freedom must be > 0, got " + std::to_string(dof));
  const double tail = 0.5 * regularized_incomplete_beta(dof / 2, 0.5, dof / (dof + t * t));
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double dof) {
  if (!(p > 0 && p < 1)) {
    throw ConfigError("student_t_quantile: p must be in (0, 1), got " + std::to_string(p));
  }
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, dof);
  double low = 0;
  double high = 1;
  while (student_t_cdf(high, dof) < p) {
    low = high;
    high *= 2;
  }
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = (low + high) / 2;
    (student_t_cdf(mid, dof) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw ConfigError("quantile of an empty sample");
  if (!(q >= 0 && q <= 1))
    throw ConfigError("quantile: q must be in [0, 1], got " + std::to_string(q));
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

Summary summarize(std::vector<double> values) {
  if (values.empty()) throw ConfigError("summarize: no values");
  for (double v : values) {
    if (!std::isfinite(v)) throw ConfigError("summarize: non-finite value " + std::to_string(v));
  }
  std::sort(values.begin(), values.end());
  Summary s;
  s.count = values.size();
  s.min = values.front();
  s.max = values.back();
  s.median = quantile_sorted(values, 0.5);
  s.q1 = quantile_sorted(values, 0.25);
  s.q3 = quantile_sorted(values, 0.75);
  s.iqr = s.q3 - s.q1;
  const double n = static_cast<double>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (values.size() >= 2) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(squares / (n - 1));
    const double half = student_t_quantile(0.975, n - 1) * s.stdev / std::sqrt(n);
    s.ci95_low = s.mean - half;
    s.ci95_high = s.mean + half;
  } else {
    s.ci95_low = s.ci95_high = s.mean;
  }
  return s;
}

}  // namespace gpuperf
