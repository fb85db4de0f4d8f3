#pragma once
// Statistics over repeated measurements, as free functions over plain vectors.

#include <cstddef>
#include <vector>

namespace gpuperf {

/// Summary of a sample: order statistics, moments and a 95% confidence interval of the mean.
struct Summary {
  std::size_t count = 0;
  double median = 0;
  double mean = 0;
  double stdev = 0;  ///< sample standard deviation (n - 1); 0 when count < 2
  double min = 0;
  double max = 0;
  double q1 = 0;        ///< 25th percentile (linear interpolation, as numpy's default)
  double q3 = 0;        ///< 75th percentile
  double iqr = 0;       ///< q3 - q1
  double ci95_low = 0;  ///< Student-t 95% interval of the mean; equals mean when count < 2
  double ci95_high = 0;

  /// Half the width of the 95% interval.
  [[nodiscard]] double ci95_half_width() const { return (ci95_high - ci95_low) / 2; }
  /// ci95_half_width() / |mean|; infinite when the mean is 0 or count < 2.
  [[nodiscard]] double relative_ci95_half_width() const;
};

/// Summarizes `values`; throws ConfigError when it is empty or holds a non-finite value.
[[nodiscard]] Summary summarize(std::vector<double> values);

/// The q-quantile (0 <= q <= 1) of sorted values, linear interpolation between closest ranks.
[[nodiscard]] double quantile_sorted(const std::vector<double>& sorted, double q);

/// The p-quantile of Student's t distribution with `dof` degrees of freedom (dof >= 1).
[[nodiscard]] double student_t_quantile(double p, double dof);

/// Student's t cumulative distribution function.
[[nodiscard]] double student_t_cdf(double t, double dof);

}  // namespace gpuperf
