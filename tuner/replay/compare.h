// Comparing a replay's outputs with the reference's: every allocation of
// the capture, after the launch, bitwise by default; with `--compare
// close` or `rtol=R,atol=A` (tuner/formats/compare_mode.h), an allocation
// that the kernel's signature says holds floating-point elements
// (param_types.h) is compared element by element within a tolerance, for
// kernels whose results may legitimately differ with the code (a different
// FMA contraction, approximate division); every other allocation
// (integers, booleans, unknown or disputed types) stays bitwise. The first
// differing element is named the way a person finds it again: the
// allocation, the parameter(s) pointing into it, the element and byte, and
// both values.
#pragma once

#include "tuner/formats/capture.h"
#include "tuner/formats/compare_mode.h"
#include "utils/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::replay {

using HostBytes = std::vector<std::uint8_t>;

// The --compare spelling is shared with ciq-tuner (compare_mode.h). Under a
// tolerance, floating-point elements a (expected) and b (got) agree when
// |b - a| <= atol + rtol * |a| (numpy/torch allclose); a NaN agrees with
// any NaN in the same place and with nothing else, an infinity only with
// the same infinity; +0 and -0 agree. Bytes past the last whole element
// compare bitwise.
using formats::CompareKind;
using formats::CompareMode;
using formats::compare_mode_text;
using formats::ElementType;
using formats::parse_compare_mode;

/// The first element where `got` differs from `expected` (one HostBytes
/// per allocation of `capture`, in its order), each allocation compared as
/// its element type (param_types.h) under a tolerance, bitwise otherwise.
struct Difference {
  std::uint32_t allocation = 0;
  std::vector<std::uint32_t> params;      // the parameters that point into it
  ElementType type = ElementType::bytes;  // how the allocation was compared
  std::string why_bitwise;                // under a tolerance: why a `bytes` allocation was compared bitwise
  std::uint64_t element = 0;              // index in the allocation, in elements of `type`
  std::uint64_t byte_offset = 0;          // of that element, from the allocation's start
  std::string expected, got;              // the values as text
  std::uint64_t differing = 0;            // elements of that allocation that differ
  bool trailing_byte = false;             // a byte past the last whole element (compared bitwise)
  bool size_differs = false;              // the copies have different sizes (nothing else is set)
};

/// std::nullopt when every allocation agrees under `mode`.
std::optional<Difference> first_difference(const formats::Capture& capture, const CompareMode& mode,
                                           const std::vector<HostBytes>& expected, const std::vector<HostBytes>& got);

/// `wrong answer: ...`: one line naming the difference.
std::string wrong_answer_message(const CompareMode& mode, const Difference& difference);

/// The allocations whose bytes after a replay (`after`, one per
/// allocation) do not have the capture's after_xxh128 digest: the program's
/// own launch left something else there. Allocations without a recorded
/// digest are not counted.
std::vector<std::uint32_t> unfaithful_allocations(const formats::Capture& capture, const std::vector<HostBytes>& after);

/// The XXH3-128 digest of `bytes` in hex, as capture.h records them.
std::string digest_hex(const HostBytes& bytes);

} // namespace ciq::replay
