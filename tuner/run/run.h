// One tuning run, start to end, as a sequence of the steps other files
// own: the options settled (options.h), the run directory claimed and
// opened (run_directory.h), discovery (discovery.h), the search space
// (space_setup.h), the default measured first, the search, pruning and
// verification of the front (verify.h), what people read (progress.h),
// shipping to the cache and publishing (ship.h), and summary.json
// (rundir/summary.h). Everything lands in the run directory: an
// append-only journal (a resume replays it), results.csv, best.controls
// and summary.json.
#pragma once

#include "tuner/run/options.h"

namespace ciq::tuner {

/// Runs the whole tuning; returns the process exit status (0: finished,
/// whether or not something shipped; 1: could not tune, or finished but
/// could not publish or save its summary).
int run_tuning(TuneOptions options);

} // namespace ciq::tuner
