// report/'s SVG charts: a plotting area with linear axes and round ticks,
// marks (points, dashed lines, any element) added by the caller, text
// escaped for HTML/SVG. Self-contained SVG, no scripts, no network.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner::chart {

/// `s` with < > & " escaped for HTML and SVG text and attributes.
std::string esc(std::string_view s);

/// An axis number: four significant digits are enough to read a plot.
std::string tick(double v);

/// Tick positions a reader can take in at a glance: multiples of 1, 2 or 5
/// times a power of ten that fall in [lo, hi], about `want` of them; whole
/// numbers only when the axis counts something (evaluations).
std::vector<double> nice_ticks(double lo, double hi, int want, bool whole);

/// A coordinate in SVG: one decimal.
std::string num(double v);

/// One SVG chart: a plotting area with linear axes, marks added by the caller.
class Chart {
public:
  Chart(std::string id, std::string title, double x0, double x1, double y0, double y1, std::string xlabel, std::string ylabel)
      : id_(std::move(id)), title_(std::move(title)), xlabel_(std::move(xlabel)), ylabel_(std::move(ylabel)) {
    auto widen = [](double& a, double& b) {
      if (!(b > a)) {
        double pad = std::fabs(a) > 0 ? std::fabs(a) * 0.05 : 1;
        a -= pad;
        b += pad;
      }
    };
    widen(x0, x1);
    widen(y0, y1);
    double ypad = (y1 - y0) * 0.06;
    x0_ = x0, x1_ = x1, y0_ = y0 - ypad, y1_ = y1 + ypad;
  }
  double x(double v) const { return k_left + (v - x0_) / (x1_ - x0_) * (k_width - k_left - k_right); }
  double y(double v) const { return k_height - k_bottom - (v - y0_) / (y1_ - y0_) * (k_height - k_top - k_bottom); }
  double top() const { return k_top; }
  double bottom() const { return k_height - k_bottom; }
  /// The x axis counts (evaluation numbers): whole-number ticks.
  void whole_x() { whole_x_ = true; }
  void add(const std::string& element) { body_ += element + "\n"; }
  void point(double vx, double vy, const std::string& colour, const std::string& tip, double r = 3.5) {
    add("<circle class=\"mark\" cx=\"" + num(x(vx)) + "\" cy=\"" + num(y(vy)) + "\" r=\"" + num(r) + "\" fill=\"" + colour +
        "\"><title>" + esc(tip) + "</title></circle>");
  }
  void hline(double vy, const std::string& colour, const std::string& label) {
    add("<line class=\"mark\" x1=\"" + num(k_left) + "\" x2=\"" + num(k_width - k_right) + "\" y1=\"" + num(y(vy)) +
        "\" y2=\"" + num(y(vy)) + "\" stroke=\"" + colour + "\" stroke-dasharray=\"6 4\"/>");
    add("<text x=\"" + num(k_width - k_right - 4) + "\" y=\"" + num(y(vy) - 4) + "\" text-anchor=\"end\" fill=\"" + colour +
        "\">" + esc(label) + "</text>");
  }
  /// The whole chart: title, axes with about five ticks each at round values, labels, the marks.
  std::string svg() const;


private:
  static constexpr double k_width = 640, k_height = 320, k_left = 78, k_right = 20, k_top = 28, k_bottom = 42;
  std::string id_, title_, xlabel_, ylabel_, body_;
  double x0_, x1_, y0_, y1_;
  bool whole_x_ = false;
};
} // namespace ciq::tuner::chart
