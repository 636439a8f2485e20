// `ciq-tuner run --verify-controls FILE`: a run that searches nothing. It
// measures the default, then the control set in FILE, and verifies the set
// against the default exactly as a run verifies its winner (verify.h:
// interleaved pairs in fresh processes, Welch's t-test, --min-effect;
// deterministic objectives from their values), then stops: no pruning,
// nothing shipped. What `ciq-tuner reverify` runs for each entry, with the
// entry's run's own command line. summary.json says what it found:
// `controls` is the set when it still beats the default, else "default";
// a run that could not measure (the default or the set fails to build or
// run, the GPU's conditions differed between the sides) ends failed, with
// the reason.
#pragma once

#include "tuner/run/options.h"

namespace ciq::tuner {

/// Runs the verification alone (`options.seeds` holds the one control
/// set); the exit status: 0 when it measured, whatever it found; 1 when
/// it could not.
int run_remeasure(TuneOptions options);

} // namespace ciq::tuner
