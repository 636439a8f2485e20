// Output comparison (compare.h).
#include "tuner/replay/compare.h"

#include "tuner/replay/param_types.h"
#include "tuner/replay/plan.h"

#include "utils/hash.h"
#include "utils/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace ciq::replay {

namespace {

std::uint64_t load_bits(const std::uint8_t* p, std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

double half_to_double(std::uint64_t bits) {
  int sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double v;
  if (exponent == 0) v = std::ldexp(double(mantissa), -24);
  else if (exponent == 31) v = mantissa ? std::nan("") : INFINITY;
  else v = std::ldexp(double(mantissa | 0x400), exponent - 25);
  return sign ? -v : v;
}

double to_double(ElementType t, std::uint64_t bits) {
  switch (t) {
  case ElementType::f16: return half_to_double(bits);
  case ElementType::bf16: {
    std::uint32_t f = std::uint32_t(bits) << 16;
    float v;
    std::memcpy(&v, &f, 4);
    return v;
  }
  case ElementType::f32: {
    std::uint32_t f = std::uint32_t(bits);
    float v;
    std::memcpy(&v, &f, 4);
    return v;
  }
  case ElementType::f64: {
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  case ElementType::bytes: break;
  }
  return double(bits);
}

/// Whether elements of `type` agree under `tolerance` (compare.h's rule).
bool elements_agree(ElementType type, const formats::Tolerance& tolerance, std::uint64_t expected_bits,
                    std::uint64_t got_bits) {
  if (expected_bits == got_bits) return true;  // also the same infinity
  if (type == ElementType::bytes) return false;
  double a = to_double(type, expected_bits), b = to_double(type, got_bits);
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);  // a NaN's payload is the code's choice
  // Bits differ: an infinity agrees with nothing else (an expected
  // infinity would otherwise allow an infinite difference).
  if (std::isinf(a) || std::isinf(b)) return false;
  return std::fabs(b - a) <= tolerance.atol + tolerance.rtol * std::fabs(a);
}

std::string value_text(ElementType t, std::uint64_t bits, std::size_t size) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%0*llx", int(2 * size), static_cast<unsigned long long>(bits));
  if (t == ElementType::bytes) return hex;
  char value[64];
  std::snprintf(value, sizeof value, "%.*g", t == ElementType::f64 ? 17 : 9, to_double(t, bits));
  return std::string(value) + " (" + hex + ")";
}

} // namespace

std::optional<Difference> first_difference(const formats::Capture& capture, const CompareMode& mode,
                                           const std::vector<HostBytes>& expected, const std::vector<HostBytes>& got) {
  std::size_t count = std::min(expected.size(), got.size());
  std::vector<AllocationType> types;
  if (mode.kind == CompareKind::close) types = allocation_types(capture);
  for (std::size_t a = 0; a < count; ++a) {
    const HostBytes& x = expected[a];
    const HostBytes& y = got[a];
    Difference d;
    d.allocation = std::uint32_t(a);
    if (x.size() != y.size()) {
      d.params = params_into(capture, std::uint32_t(a));
      d.size_differs = true;
      d.expected = std::to_string(x.size()) + " bytes";
      d.got = std::to_string(y.size()) + " bytes";
      return d;
    }
    if (a < types.size()) {
      d.type = types[a].element;
      d.why_bitwise = types[a].why_bitwise;
    }
    const ElementType type = d.type;
    const formats::Tolerance tolerance = type == ElementType::bytes ? formats::Tolerance{} : tolerance_for(mode, type);
    std::size_t size = formats::element_size(type);
    std::uint64_t whole = x.size() / size;
    bool found = false;
    auto note = [&](std::uint64_t element, std::uint64_t offset, std::size_t width, ElementType t) {
      ++d.differing;
      if (found) return;
      found = true;
      d.trailing_byte = t != type;
      d.element = element;
      d.byte_offset = offset;
      d.expected = value_text(t, load_bits(x.data() + offset, width), width);
      d.got = value_text(t, load_bits(y.data() + offset, width), width);
    };
    if (std::memcmp(x.data(), y.data(), x.size()) == 0) continue;
    for (std::uint64_t e = 0; e < whole; ++e) {
      std::uint64_t off = e * size;
      if (!elements_agree(type, tolerance, load_bits(x.data() + off, size), load_bits(y.data() + off, size)))
        note(e, off, size, type);
    }
    for (std::uint64_t off = whole * size; off < x.size(); ++off)  // bytes past the last whole element
      if (x[off] != y[off]) note(whole + (off - whole * size), off, 1, ElementType::bytes);
    if (found) {
      d.params = params_into(capture, std::uint32_t(a));  // only here: it walks every pointer
      return d;
    }
  }
  if (expected.size() != got.size()) {
    Difference d;
    d.allocation = std::uint32_t(count);
    d.size_differs = true;
    d.expected = std::to_string(expected.size()) + " allocations";
    d.got = std::to_string(got.size()) + " allocations";
    return d;
  }
  return std::nullopt;
}

std::string wrong_answer_message(const CompareMode& mode, const Difference& d) {
  std::string where = "allocation " + std::to_string(d.allocation);
  if (!d.params.empty()) {
    where += d.params.size() == 1 ? " (parameter " : " (parameters ";
    for (std::size_t i = 0; i < d.params.size(); ++i) where += (i ? ", " : "") + std::to_string(d.params[i]);
    where += ")";
  }
  if (d.size_differs) return "wrong answer: " + where + " has " + d.got + ", not the reference's " + d.expected;
  bool bitwise = d.type == ElementType::bytes;
  std::string what = bitwise || d.trailing_byte
                         ? (d.trailing_byte ? "trailing byte " : "byte ") + std::to_string(d.byte_offset)
                         : std::string(formats::element_type_name(d.type)) + " element " + std::to_string(d.element) +
                               " (byte " + std::to_string(d.byte_offset) + ")";
  std::string message = "wrong answer: " + where + " differs at " + what + ": expected " + d.expected + ", got " + d.got;
  message += "; " + std::to_string(d.differing) + (bitwise ? " byte(s)" : " element(s)") + " differ";
  if (!bitwise) {
    auto t = tolerance_for(mode, d.type);
    message += " beyond the tolerance (--compare " + compare_mode_text(mode) + ": " + formats::element_type_name(d.type) +
               " elements agree when |got - expected| <= " + format_number(t.atol) + " + " + format_number(t.rtol) +
               " * |expected|)";
  } else if (mode.kind == CompareKind::close && !d.why_bitwise.empty()) {
    message += " (compared bitwise under --compare " + compare_mode_text(mode) + ": " + d.why_bitwise + ")";
  }
  return message;
}

std::vector<std::uint32_t> unfaithful_allocations(const formats::Capture& capture, const std::vector<HostBytes>& after) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < capture.allocations.size() && i < after.size(); ++i) {
    const std::string& recorded = capture.allocations[i].after_xxh128;
    if (recorded.empty()) continue;
    std::string lower;
    for (char c : recorded) lower += char(std::tolower(static_cast<unsigned char>(c)));
    if (lower != digest_hex(after[i])) out.push_back(std::uint32_t(i));
  }
  return out;
}

std::string digest_hex(const HostBytes& bytes) {
  return to_hex(xxh128(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
}

} // namespace ciq::replay
