// The --compare spelling (compare_mode.h).
#include "tuner/formats/compare_mode.h"

#include "utils/text.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace ciq::formats {

namespace {

const char* const k_forms = "bitwise, close, or rtol=R,atol=A (e.g. rtol=1e-3,atol=1e-5)";

Error usage(std::string_view text, const std::string& why) {
  return make_error(ciq::errc::usage, "--compare " + (text.empty() ? std::string("''") : printable(text)) + ": " + why);
}

/// A tolerance's number: plain decimal or exponent notation, finite, >= 0
/// (no sign, no inf/nan, no leading space that strtod would skip).
std::optional<double> tolerance_number(std::string_view text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) return std::nullopt;
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

/// The shortest text strtod reads back as `v` exactly.
std::string round_trip_text(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

bool is_float_type_name(std::string_view name) { return name == "f16" || name == "bf16" || name == "f32" || name == "f64"; }

} // namespace

const char* element_type_name(ElementType type) {
  switch (type) {
  case ElementType::f16: return "f16";
  case ElementType::bf16: return "bf16";
  case ElementType::f32: return "f32";
  case ElementType::f64: return "f64";
  case ElementType::bytes: break;
  }
  return "bytes";
}

std::size_t element_size(ElementType type) {
  switch (type) {
  case ElementType::f16:
  case ElementType::bf16: return 2;
  case ElementType::f32: return 4;
  case ElementType::f64: return 8;
  case ElementType::bytes: break;
  }
  return 1;
}

// The numbers, and what they hold, are in docs/whole-program.md ("What the
// comparison modes promise"); bench/tolerance/compare_tolerance.cpp keeps a
// copy to measure them against: change both together. The relative parts
// are about two units in the last place of bf16 (2^-7 = 0.78 %) and f16
// (2^-10), whose outputs a changed fp32 rounding flips by one unit; f32's
// and f64's cover fmad and reordered sums of a few thousand terms.
Tolerance default_tolerance(ElementType type) {
  switch (type) {
  case ElementType::bf16: return {1.6e-2, 1e-5};
  case ElementType::f16: return {2e-3, 1e-5};
  case ElementType::f32: return {1e-5, 1e-5};
  case ElementType::f64: return {1e-13, 1e-13};
  case ElementType::bytes: break;
  }
  return {0, 0};
}

std::vector<std::string> default_tolerance_lines() {
  std::vector<std::string> lines;
  for (ElementType type : {ElementType::bf16, ElementType::f16, ElementType::f32, ElementType::f64}) {
    Tolerance t = default_tolerance(type);
    lines.push_back(std::string(element_type_name(type)) + " rtol=" + round_trip_text(t.rtol) + ",atol=" + round_trip_text(t.atol));
  }
  return lines;
}

Tolerance tolerance_for(const CompareMode& mode, ElementType type) {
  return mode.given_tolerance ? mode.tolerance : default_tolerance(type);
}

Result<CompareMode> parse_compare_mode(std::string_view text) {
  if (text == "bitwise") return CompareMode{};
  if (text == "close") return CompareMode{CompareKind::close, false, {}};
  auto colon = text.find(':');
  if (colon != std::string_view::npos && is_float_type_name(text.substr(0, colon))) {
    std::string_view rest = text.substr(colon + 1);
    if (rest.find('=') != std::string_view::npos)
      return usage(text, "give no type: each allocation is compared as its own type, which the kernel's signature tells; "
                         "give " + printable(rest));
    std::string tol = tolerance_number(rest) ? std::string(rest) : "R";
    return usage(text, "the TYPE:TOL form is no longer read (it compared every allocation as TYPE, integers too, and TOL "
                       "was absolute below 1): give rtol=" + tol + ",atol=A with both spelled out, or close for each "
                       "type's default tolerance; element types come from the kernel's signature");
  }
  if (text.find('=') == std::string_view::npos) return usage(text, std::string("expected ") + k_forms);
  std::optional<double> rtol, atol;
  std::string_view rest = text;
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    auto eq = item.find('=');
    std::string_view name = item.substr(0, eq);
    std::optional<double>* slot = name == "rtol" ? &rtol : name == "atol" ? &atol : nullptr;
    if (eq == std::string_view::npos || !slot)
      return usage(text, "cannot read '" + printable(item) + "': expected " + k_forms);
    if (*slot) return usage(text, std::string(name) + " is given twice");
    *slot = tolerance_number(item.substr(eq + 1));
    if (!*slot)
      return usage(text, std::string(name) + " '" + printable(item.substr(eq + 1)) + "' is not a finite number >= 0");
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (!rtol || !atol)
    return usage(text, std::string("give both rtol=R and atol=A (") + (rtol ? "atol" : "rtol") +
                           " is missing; e.g. rtol=1e-3,atol=1e-5), or close for each type's default tolerance");
  return CompareMode{CompareKind::close, true, {*rtol, *atol}};
}

std::string compare_mode_text(const CompareMode& mode) {
  if (mode.kind == CompareKind::bitwise) return "bitwise";
  if (!mode.given_tolerance) return "close";
  return "rtol=" + round_trip_text(mode.tolerance.rtol) + ",atol=" + round_trip_text(mode.tolerance.atol);
}

} // namespace ciq::formats
