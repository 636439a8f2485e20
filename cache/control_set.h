// A control set: which knob values to give the compiler for one module or
// kernel. Module-level knobs (ptxas options) apply to the whole ptxas call;
// kernel-level knobs (PTX directives such as maxnreg) to one named kernel.
// An ACF is referenced by the sha256 of a blob in the store, never by path.
//
// Text form (reviewable, committable; `ciq-cache put --controls FILE`):
//   format = ciq-controls/1
//   space = ptxas-13
//   maxrregcount = 64
//   _Z5heavyPKfPfi:maxnreg = 128
//   acf = sha256:<64 hex digits>
#pragma once

#include "utils/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ciq::cache {

inline constexpr std::string_view k_controls_format = "ciq-controls/1";

struct ControlSet {
  std::string space;                                                 // "" until known
  std::map<std::string, std::string> options;                        // knob -> value
  std::map<std::string, std::map<std::string, std::string>> kernels; // kernel -> knob -> value
  std::optional<std::string> acf;                                    // sha256 hex

  bool empty() const { return options.empty() && kernels.empty() && !acf; }
  bool operator==(const ControlSet&) const = default;

  /// The part of this set that concerns `kernel`: all options, the ACF, and
  /// that kernel's directives only.
  ControlSet for_kernel(const std::string& kernel) const;
};

/// Applies one `KNOB=VALUE` or `KERNEL:KNOB=VALUE` assignment (the form of
/// `ciq-cache put --set`). Only the syntax is checked here; knob names and
/// values are checked against a space (spaces/).
Result<void> add_assignment(ControlSet& set, std::string_view assignment);

/// Parses the text form. Unknown reserved keys and malformed lines fail
/// with the line number.
Result<ControlSet> parse_control_set(std::string_view text, std::string_view origin);

/// Canonical text form: sorted, so equal sets print equal bytes.
std::string format_control_set(const ControlSet& set);

/// One line for listings: `maxrregcount=64 k:maxnreg=128 acf=ab12..`.
std::string summarise_control_set(const ControlSet& set);

} // namespace ciq::cache
