// How a replayed kernel's outputs must match the reference's: the
// `--compare` spelling, read in this one place for ciq-replay (which
// compares, tuner/replay/compare.h) and ciq-tuner (which checks the
// spelling before it builds anything and passes it on to ciq-replay), so
// that both accept and refuse exactly the same words. It lives beside the
// capture format because both tools read captures and nothing else of
// each other.
//
// The forms:
//   bitwise          every byte of every allocation equal (the default)
//   close            floating-point elements within their type's default
//                    tolerance (default_tolerance below); everything else
//                    bitwise
//   rtol=R,atol=A    floating-point elements within A + R * |expected|,
//                    the same R and A for every floating-point type; both
//                    spelled out, in either order
// An allocation's element type is what the kernel's signature says of the
// parameters that point into it (tuner/replay/param_types.h); integer,
// boolean and unknown ones are compared bitwise in every mode.
//
// The old `TYPE:TOL` (f32:1e-3) is refused with the new spelling: it read
// every allocation as TYPE, integers included, and TOL was absolute below
// 1, so neither its type nor its number carries over.
#pragma once

#include "utils/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::formats {

/// An allocation's elements as compared: `bytes` is bitwise (integers,
/// booleans, anything whose type is unknown or disputed).
enum class ElementType { bytes, f16, bf16, f32, f64 };

/// "bytes", "f16", "bf16", "f32", "f64".
const char* element_type_name(ElementType type);
/// The element's size in bytes (1 for `bytes`).
std::size_t element_size(ElementType type);

/// Elements `got` and `expected` agree when
/// |got - expected| <= atol + rtol * |expected| (numpy/torch allclose).
struct Tolerance {
  double rtol = 0, atol = 0;
};

enum class CompareKind { bitwise, close };

struct CompareMode {
  CompareKind kind = CompareKind::bitwise;
  bool given_tolerance = false;  // close: rtol=,atol= given, else each type's default
  Tolerance tolerance;           // when given_tolerance
};

/// The default tolerance of `--compare close` for a floating-point type
/// (not `bytes`): measured by bench/tolerance/compare_tolerance.cpp
/// (docs/whole-program.md, "What the comparison modes promise") to hold
/// the differences fmad, approximate division/sqrt and a reordered sum
/// make in llm.c-like kernels with about 2x to 10x to spare.
Tolerance default_tolerance(ElementType type);

/// The defaults for people, one type a line: "bf16 rtol=0.016,atol=1e-05".
std::vector<std::string> default_tolerance_lines();

/// The tolerance `mode` applies to elements of `type` (a floating-point type).
Tolerance tolerance_for(const CompareMode& mode, ElementType type);

/// Reads one of the forms above. Fails ("usage") naming the accepted
/// forms; for the old TYPE:TOL, with the words to use instead.
Result<CompareMode> parse_compare_mode(std::string_view text);

/// The mode as `--compare` spells it (what parse_compare_mode reads back).
std::string compare_mode_text(const CompareMode& mode);

} // namespace ciq::formats
