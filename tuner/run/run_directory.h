// The run directory as a run uses it: claimed (created, locked, not
// another run's), opened (a new run's command line, working directory and
// results.csv begun; a resumed run's journal read back), each finished
// evaluation recorded (a journal line and a results.csv row, or the run
// stops), best.controls written, and a failure recorded in summary.json.
// The files themselves are rundir/'s (journal.h, results.h, summary.h,
// lock.h, command_line.h).
#pragma once

#include "tuner/run/options.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/summary.h"
#include "tuner/search/search.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq::tuner {

/// Makes o.out_dir this run's own: created, locked (one tuner per run
/// directory: a second one, or a --resume of a running one, would write the
/// same journal and evaluation directories), and holding no other run
/// unless resumed. From here on a failure is recorded (fail_recorded());
/// release_run_directory() (lock.h) gives it up.
Result<void> claim_run_directory(const TuneOptions& o);

/// The claimed directory opened: a new run begun (the command line saved,
/// the working directory, results.csv's header), or the journal of the one
/// to resume read back (results.csv written again from it); the executor
/// started there. Interrupts stop the commands in flight from now on.
/// Returns the journal's records (none for a new run).
Result<std::vector<EvalRecord>> open_run(TuneOptions& o);

/// One finished evaluation: a journal line (synced) and a results.csv row.
/// One that cannot be recorded (disk full, EIO) stops the process at once,
/// saying how to resume: going on would measure what a resume cannot replay.
void record_evaluation(const TuneOptions& o, const EvalRecord& r);

/// <out_dir>/best.controls: the best candidate's canonical form and, with
/// compiler knobs, its control set, for people and for --seed-controls. A
/// failure to write it is a warning.
void write_best_controls(const TuneOptions& o, const SearchSpace& space, const std::string& best);

/// A run that holds its directory and cannot go on: the reason (and the
/// results, if the search ended) in summary.json, then the error on stderr.
/// Returns 1.
int fail_recorded(const TuneOptions& o, const std::string& message, std::optional<SummaryResults> results = std::nullopt);

} // namespace ciq::tuner
