#include "tuner/statistics.h"

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

namespace {

// Continued fraction for the regularised incomplete beta function
// (modified Lentz's method).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-14;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < eps) break;
  }
  return h;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

} // namespace

double student_t_cdf(double t, double dof) {
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  double x = dof / (dof + t * t);
  double tail = 0.5 * incomplete_beta(dof / 2, 0.5, x); // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
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
