// The statistics the tuner decides with: medians and spreads of repeated
// measurements, and Welch's t-test (two samples, unequal variances) for
// "is the candidate really faster than the default".
#pragma once

#include <vector>

namespace ciq::tuner {

double median(std::vector<double> values);
double mean(const std::vector<double>& values);
/// Sample variance (n - 1); 0 for fewer than two values.
double variance(const std::vector<double>& values);

struct WelchResult {
  double t = 0;        // (mean(a) - mean(b)) / standard error
  double dof = 0;      // Welch-Satterthwaite degrees of freedom
  double p_less = 1;   // one-sided p-value for mean(a) < mean(b)
  double p_two = 1;    // two-sided p-value
};

/// Welch's t-test of `a` against `b`. Needs at least two values in each;
/// identical constant samples give p = 1 (no evidence of a difference).
WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

/// P(T <= t) for Student's t distribution with `dof` degrees of freedom.
double student_t_cdf(double t, double dof);

} // namespace ciq::tuner
