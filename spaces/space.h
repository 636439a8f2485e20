// Knob spaces: for one compiler stage and range of versions, every knob ciq
// may set, how it is written on the command line or in the PTX, which values
// it takes, what the compiler does without it, and how safe it is. A space
// is the whitelist: a control set from the cache, a pack or a user can only
// set knobs of the space of the compiler actually running, with values in
// their domain.
#pragma once

#include "spaces/control_set.h"
#include "utils/result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq::spaces {

enum class Safety {
  exact,    // may change speed, never results
  numerics, // may change floating-point results: only with a correctness check
  unsafe,   // changes semantics (launch bounds, forced cache policy): never by default
};

enum class KnobLevel { option, directive };

struct Knob {
  std::string name;                 // ptxas long option name, or directive without the dot
  KnobLevel level = KnobLevel::option;
  std::string render;               // "--maxrregcount={}", ".maxnreg {}"
  std::vector<std::string> values;  // enumerated domain, or empty
  std::optional<long long> lo, hi;  // integer domain [lo, hi]
  long long step = 1;
  bool dims = false;                // "X[,Y[,Z]]", each in [lo, hi]
  std::string default_value;        // what the compiler does without the knob
  Safety safety = Safety::exact;
  std::string note;                 // what verification showed
  // What the PTX and the target decide (see the header of ptxas-13.space):
  std::optional<long long> floor;   // values below it are raised to it by the compiler (with a warning)
  std::vector<std::string> needs;   // acts only where the PTX declares (or the set sets) one of these directives
  std::vector<std::string> overridden_by; // ptxas puts its own value where the PTX declares one of these
  bool blocks_per_sm = false;       // `unit = blocks-per-sm`: ignored where that many blocks do not fit on an SM

  /// Every value of the domain, in order (integer ranges expanded by step).
  std::vector<std::string> domain() const;
};

/// Two module options the compiler will not take together: a set with
/// `knob` at one of `values` and `excluded` at one of `excluded_values`
/// (both set explicitly) fails to compile (`refused`) or compiles as if
/// `excluded` were not set, with a warning (`ignored`). Written
/// `[conflict.NAME]` with `when = KNOB: V, ...`, `excludes = KNOB: V, ...`
/// (`*`: any value) and `effect = refused|ignored` (default refused).
enum class ConflictEffect { refused, ignored };

struct Conflict {
  std::string name;
  std::string knob, excluded;
  std::vector<std::string> values, excluded_values; // {"*"}: any value
  ConflictEffect effect = ConflictEffect::refused;
  std::string note;

  /// Whether `value` of `knob` (when_side) or of `excluded` is one the conflict names.
  bool names(bool when_side, std::string_view value) const;

  /// Whether `options` (knob -> value) hits this conflict.
  bool hit(const std::map<std::string, std::string>& options) const;
};

struct Space {
  std::string name;  // "ptxas-13"
  std::string tool;  // "ptxas"
  std::string min_release, max_release; // inclusive, "13.0" .. "13.99"
  std::vector<Knob> knobs;
  std::vector<Conflict> conflicts;

  const Knob* find(std::string_view knob, KnobLevel level) const;
  bool covers(std::string_view tool, std::string_view release) const;
};

std::string_view safety_name(Safety safety);

/// Parses a space file; any unknown key, bad domain or duplicate knob fails,
/// and so does a conflict, floor, needs or unit that does not fit the
/// knobs it names (see check_space in space.cpp).
Result<Space> parse_space(std::string_view text, std::string_view origin);

/// The space in `dir` for `tool` at `release` ("13.0"); std::nullopt when
/// no file covers it.
Result<std::optional<Space>> find_space(const std::string& dir, std::string_view tool, std::string_view release);

/// Loads the space called `name` from `dir`.
Result<Space> load_space(const std::string& dir, std::string_view name);

struct Policy {
  bool allow_numerics = true;
  bool allow_unsafe = false;
};

/// Checks that `value` is in the knob's domain.
Result<void> check_value(const Knob& knob, std::string_view value);

/// Checks every knob of `set` against `space`: the set's space name must be
/// this space's, each knob must exist at the right level (options at module
/// level, directives per kernel), each value must be in its domain, its
/// safety class must be allowed by `policy`, and no two options may be a
/// conflict of the space that ptxas refuses (an `ignored` one compiles, so
/// a set holding it stays valid; the tuner never proposes one).
Result<void> validate_controls(const Space& space, const spaces::ControlSet& set, const Policy& policy);

} // namespace ciq::spaces
