#include "tuner/report/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ciq::tuner::chart {

std::string esc(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string tick(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::vector<double> nice_ticks(double lo, double hi, int want, bool whole) {
  double raw = (hi - lo) / std::max(1, want);
  if (!(raw > 0) || !std::isfinite(raw)) return {lo};
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  if (whole) step = std::max(1.0, std::round(step));
  std::vector<double> ticks;
  for (double i = std::ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9 && ticks.size() < 50; ++i)
    ticks.push_back(i == 0 ? 0.0 : i * step); // by multiplication: no drift, an exact 0
  return ticks;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Chart::svg() const {
  std::string s = "<svg class=\"plot\" id=\"" + id_ + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(k_width) +
                  "\" height=\"" + num(k_height) + "\" viewBox=\"0 0 " + num(k_width) + " " + num(k_height) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(k_width / 2) + "\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">" + esc(title_) +
       "</text>\n";
  // Axes with about five ticks each, at round values.
  s += "<path d=\"M" + num(k_left) + " " + num(k_top) + " V" + num(k_height - k_bottom) + " H" + num(k_width - k_right) +
       "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (!xlabel_.empty()) // an unlabelled x axis holds categories: no numbers
    for (double vx : nice_ticks(x0_, x1_, 6, whole_x_))
      s += "<text x=\"" + num(x(vx)) + "\" y=\"" + num(k_height - k_bottom + 14) + "\" text-anchor=\"middle\">" +
           esc(tick(vx)) + "</text>\n";
  for (double vy : nice_ticks(y0_, y1_, 5, false)) {
    s += "<text x=\"" + num(k_left - 4) + "\" y=\"" + num(y(vy) + 4) + "\" text-anchor=\"end\">" + esc(tick(vy)) +
         "</text>\n";
    s += "<line x1=\"" + num(k_left) + "\" x2=\"" + num(k_width - k_right) + "\" y1=\"" + num(y(vy)) + "\" y2=\"" + num(y(vy)) +
         "\" stroke=\"#eee\"/>\n";
  }
  s += "<text x=\"" + num((k_left + k_width - k_right) / 2) + "\" y=\"" + num(k_height - 6) + "\" text-anchor=\"middle\">" +
       esc(xlabel_) + "</text>\n";
  s += "<text transform=\"translate(14 " + num((k_top + k_height - k_bottom) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       esc(ylabel_) + "</text>\n";
  return s + body_ + "</svg>\n";
}

} // namespace ciq::tuner::chart
