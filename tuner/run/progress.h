// What people read while a run goes and when it ends, on stderr: one
// progress line per evaluation (rewritten in place on a terminal), the
// default on each GPU, the search's outcome and the verdict, errors. Values
// are shown as people read them (maximised objectives un-negated,
// format_number()), changes as percentages of the default.
#pragma once

#include "tuner/run/options.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/summary.h"

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

class Evaluator;

/// " (+1.5%)": the change from `from` to `to`; "" when it cannot be said
/// (`from` zero, either not finite).
std::string percent(double from, double to);

/// The value shown to people for objective k of a record (maximised ones
/// un-negated); NaN when the record is invalid or has no such objective.
double shown(const TuneOptions& o, const EvalRecord& r, std::size_t k);

/// Prints "ciq-tuner: error: MESSAGE" (its lines kept, made printable);
/// returns 1, the exit status of a run that could not tune. With
/// summaries_on_stdout(), also its failed summary on stdout, unless the run
/// printed its summary already.
int fail(const std::string& message);

/// `ciq-tuner run --json`: from here on every way the run ends puts its
/// summary (RunSummary::to_json) on stdout as its last line, a failure
/// before its directory was its own included (run_dir `out_dir`, "" when
/// it was to be named), so whoever started it reads the outcome from the
/// summary alone (child_summary()), never from stderr.
void summaries_on_stdout(const std::string& out_dir);

/// Prints `summary` as one line on stdout (the run's result with --json).
void print_summary(const RunSummary& summary);

/// With summaries_on_stdout(), prints the failed summary of an error said
/// on stderr already (LLVM's parser's); does nothing otherwise.
void print_failure_summary(const std::string& message);

/// fail() for an error, whose code picks the exit status: 2 for a mistake
/// on the command line (code "usage": an option missing, unknown, out of
/// range or at odds with another), 1 for everything else.
int fail(const Error& error);

/// The progress lines: "[gen G] N/BUDGET value (change) | best ... | F
/// failed | ETA", then "[prune] ..." for the pruning trials, which come on
/// top of the budget. An evaluation asked again is counted once.
class Progress {
public:
  Progress(const TuneOptions& o, int budget);
  /// One finished evaluation (`from_journal`: replayed on --resume), with
  /// the default's and the best's records so far (null: none yet).
  void record(const EvalRecord& r, bool from_journal, const EvalRecord* baseline, const EvalRecord* best);
  /// Ends a line rewritten in place.
  void finish();
  /// What follows are pruning trials.
  void pruning() { pruning_ = true; }
  int failed() const { return failed_; }

private:
  const TuneOptions& o_;
  int budget_, done_ = 0, failed_ = 0, replayed_ = 0, pruned_ = 0;
  bool pruning_ = false;
  std::set<std::string> seen_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

/// The default's preferred objective on each GPU (per-GPU baselines), when
/// there are several.
void say_gpu_defaults(const TuneOptions& o, const Evaluator& evaluator);

/// The Pareto front, preferred point first and starred, when it has more
/// than one point.
void say_front(const TuneOptions& o, const std::vector<const EvalRecord*>& front);

/// The search's outcome: evaluations (searching and pruning apart), invalid
/// ones, the default's and the best's value, the verdict, and the run
/// directory the results are in. Returns the number of invalid evaluations.
int say_results(const TuneOptions& o, const std::vector<EvalRecord>& records, const EvalRecord& def, const EvalRecord* best,
                const std::string& verdict, int searched);

} // namespace ciq::tuner
