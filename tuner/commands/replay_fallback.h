// What a campaign confirms when the program refused a replay winner that
// sets module-wide knobs. A ptxas option acts on every kernel of the
// module, so a winner that is faster for its own kernel can slow the
// module's others more; per-kernel directives (maxnreg, ...) act on the
// replayed kernel alone. Measured on an H100 (llm.c, bench/RESULTS.md):
// the program refused three module-wide replay winners for that reason,
// while the same replays had found directive-only candidates 9-13 %
// faster for two of those kernels.
#pragma once

#include <optional>
#include <string>

namespace ciq::tuner {

/// A candidate of a replay run whose knobs are all per-kernel directives:
/// no ptxas option, no ACF, no NVVM-stage knob.
struct DirectiveCandidate {
  std::string controls_file;  // its evaluation's candidate.controls
  std::string controls;       // one line, as tables show control sets
  double change = 0;          // its replayed time against the run's default, relative (negative: faster)
};

/// Whether the control-set file at `path` sets anything that acts on the
/// whole module (a ptxas option, an ACF, an NVVM-stage knob). False when it
/// cannot be read: nothing is known to act module-wide.
bool sets_module_wide(const std::string& path);

/// The fastest directive-only candidate of the replay run in `replay_dir`
/// (from its journal: valid evaluations whose candidate.controls is still
/// there), when its time is below the default's by at least `min_effect`
/// (relative); std::nullopt otherwise.
std::optional<DirectiveCandidate> best_directive_candidate(const std::string& replay_dir, double min_effect);

} // namespace ciq::tuner
