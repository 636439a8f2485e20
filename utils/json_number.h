// A number for a JSON file that people read too (campaign.json, the
// journal's GPU state): rounded to a few significant digits, as printf's
// %.6g wrote these files before they were written with nlohmann-json, and a
// whole number as an integer ("350", not "350.0"). Header-only: nlohmann is.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ciq {

/// `v` to `digits` significant digits, whole values (below 2^53) as
/// integers. `v` must be finite: JSON has no NaN or infinity, and what to
/// write then (null, a string, nothing) is the caller's to say.
inline nlohmann::ordered_json rounded_number(double v, int digits = 6) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  double rounded = std::strtod(text, nullptr);
  if (rounded == std::trunc(rounded) && std::fabs(rounded) < 9007199254740992.0) return std::int64_t(rounded);
  return rounded;
}

} // namespace ciq
