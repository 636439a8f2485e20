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
//
// A tuning candidate (CIQ_CONTROLS) can also carry knobs of the NVVM stage
// (cicc, one translation unit), under their own space:
//   nvcc-space = nvcc-13
//   nvcc.fmad = 0
// A cache record holds one stage only: a unit record's set is an ordinary
// set of the nvcc space (space = nvcc-13, fmad = 0).
#pragma once

#include "utils/hash.h"
#include "utils/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ciq::spaces {

inline constexpr std::string_view k_controls_format = "ciq-controls/1";

struct ControlSet {
  std::string space;                                                 // "" until known
  std::map<std::string, std::string> options;                        // knob -> value
  std::map<std::string, std::map<std::string, std::string>> kernels; // kernel -> knob -> value
  std::optional<Sha256> acf;                                         // the ACF blob's sha256
  std::string nvcc_space;                                            // space of `nvcc`, "" until known
  std::map<std::string, std::string> nvcc;                           // NVVM-stage knob -> value

  bool empty() const { return options.empty() && kernels.empty() && !acf && nvcc.empty(); }
  bool operator==(const ControlSet&) const = default;

  /// The part of this set that concerns `kernel`: all options, the ACF, and
  /// that kernel's directives only.
  ControlSet for_kernel(const std::string& kernel) const;

  /// The ptxas stage alone: this set without its NVVM-stage knobs.
  ControlSet ptxas_stage() const;
  /// The NVVM stage as a set of its own (space = nvcc_space, options = nvcc),
  /// the form a unit record stores and validate_controls checks.
  ControlSet nvcc_stage() const;
};

/// Applies one `KNOB=VALUE`, `KERNEL:KNOB=VALUE` or `nvcc.KNOB=VALUE` assignment (the form of
/// `ciq-cache put --set`). Only the syntax is checked here; knob names and
/// values are checked against a space (spaces/).
Result<void> add_assignment(ControlSet& set, std::string_view assignment);

/// Parses the text form. Unknown reserved keys and malformed lines fail
/// with the line number.
Result<ControlSet> parse_control_set(std::string_view text, std::string_view origin);

/// Canonical text form: sorted, so equal sets print equal bytes.
std::string format_control_set(const ControlSet& set);

/// The short name ciq's Python package gives these controls
/// (ciq.controls.ControlSet.digest: what its JIT cache layers key compiled
/// kernels by, and what a server's `ciq-built:` line says): "default" for a
/// set that sets nothing, else the first 16 hex digits of the SHA-256 of
/// the lines `o KNOB=V`, `d KERNEL:KNOB=V`, `n KNOB=V` and `a sha256:HEX`,
/// sorted by their bytes and joined by newlines. The space names are not
/// in it. test/vectors/cpp_python.json holds both sides to the same digests.
std::string control_set_digest(const ControlSet& set);

/// One line for listings: `maxrregcount=64 k:maxnreg=128 acf=ab12..`.
std::string summarise_control_set(const ControlSet& set);

} // namespace ciq::spaces
