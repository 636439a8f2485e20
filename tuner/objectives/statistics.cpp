#include "tuner/objectives/statistics.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ciq::tuner {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? NAN : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

double variance(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(v.size() - 1);
}

double student_t_cdf(double t, double dof) {
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  // Boost.Math throws on a non-finite or non-positive dof; the callers never
  // pass one, but a NaN must not become an exception in a tuning run.
  if (!(dof > 0) || !std::isfinite(t)) return NAN;
  return boost::math::cdf(boost::math::students_t_distribution<double>(dof), t);
}

WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  WelchResult r;
  if (a.size() < 2 || b.size() < 2) return r;
  double va = variance(a) / double(a.size()), vb = variance(b) / double(b.size());
  double diff = mean(a) - mean(b);
  double se2 = va + vb;
  if (se2 <= 0) {
    // Both samples constant: a difference is certain, equality is not evidence.
    if (diff == 0) return r;
    r.t = diff < 0 ? -INFINITY : INFINITY;
    r.dof = double(a.size() + b.size() - 2);
    r.p_less = diff < 0 ? 0 : 1;
    r.p_two = 0;
    return r;
  }
  r.t = diff / std::sqrt(se2);
  double denom = va * va / double(a.size() - 1) + vb * vb / double(b.size() - 1);
  r.dof = denom > 0 ? se2 * se2 / denom : double(a.size() + b.size() - 2);
  r.p_less = student_t_cdf(r.t, r.dof);
  r.p_two = 2 * std::min(r.p_less, 1 - r.p_less);
  return r;
}

} // namespace ciq::tuner
