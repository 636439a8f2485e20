// The start every run that measures shares (`ciq-tuner run`, and its
// --verify-controls form, remeasure.h): the options settled (options.h),
// the run directory claimed and opened (run_directory.h), and the
// discovery build (discovery.h), what it says about the default build
// taken into the setup. What follows differs: run.cpp searches,
// remeasure.cpp measures one control set.
#pragma once

#include "tuner/run/options.h"
#include "tuner/formats/kernel_trace.h"
#include "tuner/rundir/journal.h"

#include <vector>

namespace ciq::tuner {

/// Where a run stands once started.
struct RunStart {
  int exit_status = 0;                  // not 0: it could not start (said, and recorded once claimed)
  std::vector<EvalRecord> journal;      // the journal's records (none for a new run)
  std::vector<TracedModule> discovery;  // the modules the default build compiled
};

/// Settles `o` (prepare_run()), claims and opens its run directory, runs
/// the discovery build, and takes the default build's warnings (its
/// modules' and translation units') into o.setup.baseline_warnings.
/// `interrupted`, when given, replaces open_run()'s message for an
/// interrupt (a run that is not resumed says so). A failure is printed,
/// and recorded in summary.json once the directory is claimed; its exit
/// status is returned in RunStart::exit_status. The directory stays held
/// when it returns: the caller releases it (release_run_directory(),
/// lock.h) when it ends, whatever happened here.
RunStart start_run(TuneOptions& o, const char* interrupted = nullptr);

} // namespace ciq::tuner
