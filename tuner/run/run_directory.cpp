#include "tuner/run/run_directory.h"

#include "tuner/rundir/best_controls.h"

#include "spaces/control_set.h"
#include "tuner/measure/executor.h"
#include "tuner/run/progress.h"
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/results.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace ciq::tuner {

namespace {

std::string journal_path(const TuneOptions& o) { return join_path(o.out_dir, "journal.jsonl"); }

// A finished evaluation that cannot be recorded (disk full, EIO) stops the
// run at once: going on would measure what a resume cannot replay. The
// journal holds whole lines only (append_whole_line), so the run resumes.
[[noreturn]] void stop_unrecorded(const TuneOptions& o, const EvalRecord& r, const std::string& why) {
  kill_tracked_children();
  // Said in summary.json too if it can be (the disk may be full).
  (void)write_summary(o.out_dir, RunSummary{o.out_dir, std::nullopt, RunOutcome::failed,
                                            "cannot record evaluation " + std::to_string(r.number) + ": " + why});
  std::fprintf(stderr,
               "\nciq-tuner: error: cannot record evaluation %d: %s\n"
               "ciq-tuner: the run stopped; its journal holds every evaluation recorded before this one. Make room (or "
               "repair the file system), then continue with: ciq-tuner run --resume %s\n",
               r.number, why.c_str(), o.out_dir.c_str());
  std::_Exit(1); // other threads may be mid-evaluation: no destructors, no atexit
}

} // namespace

Result<void> claim_run_directory(const TuneOptions& o) {
  if (o.resume && !is_directory(o.out_dir)) return make_error("tuner", "nothing to resume: '" + o.out_dir + "' is not a run directory");
  if (auto r = make_own_directory(o.out_dir); !r) return r.error();
  if (auto locked = lock_run_directory(o.out_dir); !locked) return locked.error();
  if (!o.resume && path_exists(join_path(o.out_dir, "journal.jsonl"))) {
    release_run_directory();
    return make_error("tuner", "'" + o.out_dir + "' already holds a run; continue it with --resume " + o.out_dir);
  }
  return {};
}

Result<std::vector<EvalRecord>> open_run(TuneOptions& o) {
  // The memo of nvcc's steps: the run's own, unless --memo-dir shares one
  // (a campaign's). What an interrupted memoised build left in its own
  // scratch directories goes (no build runs now: the lock is ours); a
  // shared memo may hold other runs' builds now: its owner clears it.
  if (o.setup.memo_dir.empty()) {
    o.setup.memo_dir = join_path(o.out_dir, "memo");
    remove_tree(join_path(o.setup.memo_dir, "tmp"));
  }
  // Interrupted: stop the commands in flight too (they run in their own
  // process groups), and say how to continue. The journal already holds
  // every finished evaluation.
  static std::string interrupt_message;
  interrupt_message = "\nciq-tuner: interrupted; continue with: ciq-tuner run --resume " + o.out_dir + "\n";
  kill_children_on_interrupt(interrupt_message.c_str());
  o.setup.run_dir = o.out_dir;
  std::vector<EvalRecord> journal;
  if (o.resume) {
    auto j = load_journal(journal_path(o));
    if (!j) return j.error();
    // results.csv again from the journal: a run stopped between the two
    // (a full disk) may have left a row short or missing.
    if (auto w = ResultsCsv(o.out_dir, o.setup.objectives).rewrite(*j); !w) return w.error();
    journal = std::move(*j);
    std::fprintf(stderr, "ciq-tuner: resuming %s: %zu evaluations in the journal\n", o.out_dir.c_str(), journal.size());
  } else {
    if (auto w = save_command_line(o.out_dir, o.command_line); !w) return w.error();
    if (auto w = save_run_id(o.out_dir); !w) return w.error();
    // A resume from elsewhere runs the commands (relative paths in them) here.
    if (auto w = save_working_directory(o.out_dir); !w) return w.error();
    if (auto w = ResultsCsv(o.out_dir, o.setup.objectives).begin(); !w) return w.error();
  }

  o.setup.executor->use_run_directory(o.out_dir);
  if (auto ready = o.setup.executor->start(o.resume); !ready) return ready.error();
  return journal;
}

void record_evaluation(const TuneOptions& o, const EvalRecord& r) {
  if (auto w = append_whole_line(journal_path(o), r.to_json()); !w) stop_unrecorded(o, r, w.error().message);
  if (auto w = ResultsCsv(o.out_dir, o.setup.objectives).append(r); !w) stop_unrecorded(o, r, w.error().message);
}

void write_best_controls(const TuneOptions& o, const SearchSpace& space, const std::string& best) {
  auto c = space.parse(best);
  if (!c) return;
  std::optional<spaces::ControlSet> controls;
  if (o.setup.compiler) controls = space.resolve(*c).controls;
  if (auto w = tuner::write_best_controls(o.out_dir, best, controls); !w)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(w.error().message).c_str());
}

int fail_recorded(const TuneOptions& o, const std::string& message, std::optional<SummaryResults> results) {
  RunSummary summary{o.out_dir, std::move(results), RunOutcome::failed, message};
  if (auto w = write_summary(o.out_dir, summary); !w)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(w.error().message).c_str());
  return fail(message);
}

} // namespace ciq::tuner
