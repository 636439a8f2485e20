#include "tuner/commands/campaign_phase.h"

#include "tuner/commands/campaign_runs.h"
#include "tuner/commands/replay_fallback.h"
#include "tuner/rundir/best_controls.h"
#include "tuner/rundir/summary.h"
#include "tuner/search/candidate.h"
#include "utils/files.h"
#include "utils/text.h"

#include <cstdio>

namespace ciq::tuner {

bool confirms_jointly(const CampaignOptions& c) {
  const auto& objectives = c.tune.setup.objectives;
  return c.together && objectives.size() == 1 && objectives[0].kind == ObjectiveKind::kernel_time;
}

std::string joint_dir(const CampaignOptions& c) { return join_path(join_path(c.tune.out_dir, "runs"), "confirm-together"); }

namespace {

// After the program's confirmation of a replay winner that set module-wide
// knobs and was not shipped: whether the replay's fastest candidate with
// per-kernel directives only beat the replayed default by --min-effect;
// if so `r` moves to its confirmation (<run>.directives; confirm_jointly
// with --together's joint confirmation). Under the lock.
bool directive_fallback(const CampaignOptions& c, KernelResult& r) {
  if (r.replay_dir.empty() || r.phase != KernelPhase::done || r.shipped || !r.refused.empty()) return false;
  if (!sets_module_wide(best_controls_path(r.replay_dir))) return false;
  auto candidate = best_directive_candidate(r.replay_dir, c.tune.min_effect);
  if (!candidate) return false;
  r.refused = r.verdict.empty() ? "not shipped" : r.verdict;
  r.replay_controls = candidate->controls;
  r.replay_change = candidate->change;
  r.run_dir += ".directives";
  move_to(r, confirms_jointly(c) ? KernelPhase::confirm_jointly : KernelPhase::confirm_directives);
  r.to_confirm = candidate->controls_file;
  return true;
}

// Why a run could not tune, in one line, from its summary only (its
// summary.json, else the one it printed on stdout: child_summary): the
// error as the run printed it ("ciq-tuner: error: " and the message's first
// line); else (it left none: it died, or was killed) how it ended.
std::string failure_reason(const std::optional<RunSummary>& summary, const Result<RunResult>& ran) {
  if (summary && summary->outcome == RunOutcome::failed && !summary->reason.empty()) {
    std::string shown = printable_lines(summary->reason);
    return "ciq-tuner: error: " + shown.substr(0, shown.find('\n'));
  }
  if (!ran) return "ciq-tuner run could not start: " + ran.error().message;
  return "ciq-tuner run " + ran->describe() + (summary ? " after a summary that says no error" : " and left no summary");
}

// What a run of the program (tuning or confirming) came to: `r` done or
// failed, and a line on stderr (under the lock).
void record_outcome(KernelResult& r, const Result<RunResult>& ran, std::size_t i, std::size_t n) {
  r.to_confirm.clear();
  std::optional<RunSummary> summary = child_summary(r.run_dir, ran ? std::string_view(ran->out) : std::string_view());
  if (ran && ran->succeeded() && take_results(r, summary)) {
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s (%s, %.0f s)%s\n", i + 1, n, printable(r.kernel).c_str(),
                 printable(r.verdict).c_str(), change_text(r).c_str(), r.seconds, r.shipped ? ", shipped" : "");
    return;
  }
  move_to(r, KernelPhase::failed);
  r.error = failure_reason(summary, ran);
  std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: could not tune: %s (log: %s.log)\n", i + 1, n, printable(r.kernel).c_str(),
               printable(r.error).c_str(), printable(r.run_dir).c_str());
}

// Takes the replay run's summary into `r`: done (nothing beat the default:
// the replay's result is the kernel's), confirm (a winner, for the program
// to confirm), or tune (no result; r.replay_note says why). Says so on
// stderr. Under the campaign's lock.
void take_replay(KernelResult& r, const Result<RunResult>& ran, std::size_t i, std::size_t n) {
  std::string kernel = printable(r.kernel);
  std::optional<RunSummary> said = child_summary(r.replay_dir, ran ? std::string_view(ran->out) : std::string_view());
  if (!ran || !ran->succeeded() || !said || !said->results) {
    r.replay_note = "replay could not tune it (" + failure_reason(said, ran) + "): tuned by program runs";
    r.replay_dir.clear();
    move_to(r, KernelPhase::tune);
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s\n", i + 1, n, kernel.c_str(), printable(r.replay_note).c_str());
    return;
  }
  r.replay_change = relative_change(*said->results);
  r.replay_controls = said->results->controls;
  if (r.replay_controls == k_default_candidate) {
    take_results(r, said);
    r.seconds = r.replay_seconds;
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: by replay: %s (%.0f s)\n", i + 1, n, kernel.c_str(), printable(r.verdict).c_str(),
                 r.seconds);
    return;
  }
  move_to(r, KernelPhase::confirm);
  r.to_confirm = best_controls_path(r.replay_dir);
  std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: replay found %s (%s, %.0f s); confirming in the program\n", i + 1, n,
               kernel.c_str(), printable(r.replay_controls).c_str(), percent_text(r.replay_change, "%+.1f %%").c_str(),
               r.replay_seconds);
}

// The confirmation of the replay's directive-only candidate, on stderr.
void say_fallback(const KernelResult& r, std::size_t i, std::size_t n) {
  std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: the program did not take the winner's module-wide knobs; confirming the fastest "
                       "candidate of the replay with per-kernel directives only, %s (%s)%s\n",
               i + 1, n, printable(r.kernel).c_str(), printable(r.replay_controls).c_str(),
               percent_text(r.replay_change, "%+.1f %%").c_str(),
               r.phase == KernelPhase::confirm_jointly ? ", once every replay is done, with any other such winner" : "");
}

} // namespace

void advance(const CampaignOptions& c, KernelResult& r, const Result<RunResult>& ran,
             std::chrono::steady_clock::time_point started, std::size_t i, std::size_t n) {
  std::string kernel = printable(r.kernel);
  switch (r.phase) {
  case KernelPhase::replay:
    r.replay_seconds = seconds_since(started);
    take_replay(r, ran, i, n);
    if (r.phase == KernelPhase::confirm && confirms_jointly(c) && !sets_module_wide(r.to_confirm)) {
      move_to(r, KernelPhase::confirm_jointly);
      std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: its winner sets per-kernel directives only: confirmed once every replay is "
                           "done, with any other such winner in the same program runs\n", i + 1, n, kernel.c_str());
    }
    return;
  case KernelPhase::confirm:
    r.seconds = seconds_since(started);
    record_outcome(r, ran, i, n);
    // confirm_directives says so as its run starts (phase_run), resumed or not.
    if (directive_fallback(c, r) && r.phase == KernelPhase::confirm_jointly) say_fallback(r, i, n);
    return;
  case KernelPhase::tune:
  case KernelPhase::confirm_directives:
  case KernelPhase::confirm_jointly:
    r.seconds = seconds_since(started);
    record_outcome(r, ran, i, n);
    return;
  case KernelPhase::done:
  case KernelPhase::failed:
    return;
  }
}

void start_phase(const CampaignOptions& c, KernelResult& r) {
  start_in(r, r.replay_dir.empty() ? KernelPhase::tune : KernelPhase::replay);
  take_results(r, summary_of(r));
  if (directive_fallback(c, r) && take_results(r, summary_of(r))) r.to_confirm.clear();
  if (finished(r.phase) || r.replay_dir.empty()) return;
  KernelResult joint = r;
  joint.run_dir = joint_dir(c);
  if (take_results(joint, summary_of(joint))) {
    joint.to_confirm.clear();
    r = std::move(joint);
  }
}

std::optional<RunOptions> phase_run(const CampaignOptions& c, const std::vector<KernelResult>& results, const KernelResult& r,
                                    const std::string& captures, const std::string& gpus, const std::vector<std::string>& hints,
                                    std::size_t i) {
  std::string kernel = printable(r.kernel);
  if (r.phase == KernelPhase::replay) {
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] tuning %s by replay\n", i + 1, results.size(), kernel.c_str());
    return replay_run(c, r, captures, gpus, hints);
  }
  if (r.phase != KernelPhase::tune && r.phase != KernelPhase::confirm && r.phase != KernelPhase::confirm_directives)
    return std::nullopt;
  // What an earlier attempt's summary said (it failed) is not this one's.
  if (auto removed = remove_summary(r.run_dir); !removed)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(removed.error().message).c_str());
  if (r.phase == KernelPhase::tune) {
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] tuning %s\n", i + 1, results.size(), kernel.c_str());
    return kernel_run(c, r, gpus, hints);
  }
  if (r.phase == KernelPhase::confirm_directives) say_fallback(r, i, results.size());
  return confirm_run(c, r, r.to_confirm, reusable_discovery(c, results), gpus);
}

void tune_together(KernelResult& r) { start_in(r, KernelPhase::tune); }

void fail_joint(KernelResult& r, const std::string& why) {
  move_to(r, KernelPhase::failed);
  r.to_confirm.clear();
  r.error = why;
}

} // namespace ciq::tuner
