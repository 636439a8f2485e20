// Comparing a replay's outputs with the reference's: every allocation of
// the capture, after the launch, bitwise by default, or as floating-point
// elements within a tolerance for kernels whose results may legitimately
// differ with the code (a different FMA contraction, a reordered sum). The
// first differing element is named the way a person finds it again: the
// allocation, the parameter(s) pointing into it, the element and byte, and
// both values.
#pragma once

#include "tuner/profile/capture.h"
#include "utils/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::replay {

using HostBytes = std::vector<std::uint8_t>;

enum class ElementType { bytes, f16, bf16, f32, f64 };

/// How outputs compare (`--compare`): `bitwise` (every byte equal), or
/// `TYPE:TOL` with TYPE one of f16, bf16, f32, f64 and TOL a finite number
/// >= 0: elements a (expected) and b (got) agree when |a - b| <= TOL *
/// max(1, |a|), i.e. TOL is an absolute tolerance for values below 1 in
/// magnitude and a relative one above. NaN agrees only with a NaN of the
/// same bits, an infinity only with itself. Bytes past the last whole
/// element compare bitwise.
struct CompareMode {
  ElementType type = ElementType::bytes;
  double tolerance = 0;
};

/// Reads `bitwise` or `TYPE:TOL`; fails ("usage") naming the accepted forms.
Result<CompareMode> parse_compare_mode(std::string_view text);
/// The mode as `--compare` spells it.
std::string compare_mode_text(const CompareMode& mode);

/// The first element where `got` differs from `expected` (one HostBytes
/// per allocation of `capture`, in its order).
struct Difference {
  std::uint32_t allocation = 0;
  std::vector<std::uint32_t> params;  // the parameters that point into it
  std::uint64_t element = 0;          // index in the allocation, in elements of the mode's type
  std::uint64_t byte_offset = 0;      // of that element, from the allocation's start
  std::string expected, got;          // the values as text
  std::uint64_t differing = 0;        // elements of that allocation that differ
  bool trailing_byte = false;         // a byte past the last whole element (compared bitwise)
  bool size_differs = false;          // the copies have different sizes (nothing else is set)
};

/// std::nullopt when every allocation agrees under `mode`.
std::optional<Difference> first_difference(const profile::Capture& capture, const CompareMode& mode,
                                           const std::vector<HostBytes>& expected, const std::vector<HostBytes>& got);

/// `wrong answer: ...`: one line naming the difference.
std::string wrong_answer_message(const CompareMode& mode, const Difference& difference);

/// The allocations whose bytes after a replay (`after`, one per
/// allocation) do not have the capture's after_xxh128 digest: the program's
/// own launch left something else there. Allocations without a recorded
/// digest are not counted.
std::vector<std::uint32_t> unfaithful_allocations(const profile::Capture& capture, const std::vector<HostBytes>& after);

/// The XXH3-128 digest of `bytes` in hex, as capture.h records them.
std::string digest_hex(const HostBytes& bytes);

} // namespace ciq::replay
