// What the campaign keeps of each kernel's run (KernelResult: read from
// the run's summary.json, or why it could not tune) and how it reports
// them: campaign.json (rewritten as each run ends, and on stdout with
// --json) and the table on stderr at the end (with --from-profile, each
// kernel's share of the program's GPU time and what its change is worth
// to the whole program).
#pragma once

#include "tuner/rundir/summary.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace ciq::tuner {

/// Where a kernel stands in its campaign. A kernel starts in tune or
/// replay (start_phase(): where a resumed campaign's directories say;
/// tune_together(): a group's one run starts each again) and then moves
/// only by move_to(), along these moves (allowed_move()), to done or
/// failed:
///   tune               -> done | failed
///   replay             -> done (the default won) | confirm | tune (the
///                         replay could not serve)
///   confirm            -> done | failed | confirm_jointly (its winner sets
///                         per-kernel directives only, with --together)
///   confirm_directives -> done | failed
///   confirm_jointly    -> done | failed (after every other kernel's phases)
///   done               -> confirm_directives | confirm_jointly (a confirmed
///                         replay winner the program did not take: the
///                         replay's fastest directive-only candidate)
enum class KernelPhase {
  tune,               // by program runs: each candidate a build and a run of the program
  replay,             // by replay of its captured launches, nothing shipped
  confirm,            // the replay's winner (to_confirm), confirmed in the program
  confirm_directives, // the program did not take the winner's module-wide knobs: the replay's fastest
                      // directive-only candidate (to_confirm), confirmed in the program
  confirm_jointly,    // a directive-only winner (to_confirm) waiting to be confirmed with the other kernels'
                      // in the same program runs once every replay is done (--together)
  done,               // finished: its summary.json holds results
  failed,             // could not tune; `error` says why
};

/// Whether `from -> to` is one of the moves listed above.
bool allowed_move(KernelPhase from, KernelPhase to);

/// The phase's name as the moves above write it ("confirm_jointly").
const char* phase_name(KernelPhase p);

/// Whether the kernel's campaign is over (done or failed).
inline bool finished(KernelPhase p) { return p == KernelPhase::done || p == KernelPhase::failed; }

/// What one kernel's run said (its summary.json), or why it said nothing.
struct KernelResult {
  std::string kernel, run_dir;
  KernelPhase phase = KernelPhase::tune;
  std::string verdict, controls, error, objective;
  double baseline = NAN, best = NAN;
  double share = NAN; // of the program's GPU time (--from-profile)
  bool shipped = false;
  int evaluations = 0, invalid = 0;
  // Tuned by replay: the replay run's directory and the change it measured
  // (replay_change), before the program confirmed it (change()); "" / NaN
  // when tuned by program runs only. replay_note: why replay did not serve.
  std::string replay_dir, replay_note, replay_controls;  // replay_controls: what the replay found
  double replay_change = NAN;
  double seconds = NAN, replay_seconds = NAN;  // wall time of its runs (this attempt): all, and the replay's
  // When the program did not take a replay winner that set module-wide
  // knobs and the replay's fastest directive-only candidate was confirmed
  // instead (replay_fallback.h): what the program said of the first winner
  // ("" otherwise). run_dir, replay_controls and replay_change are then the
  // second confirmation's.
  std::string refused;
  // The control-set file a confirm phase confirms in the program; "" in
  // the other phases. Not saved: a resumed campaign replays again (a
  // finished replay answers at once) and finds it again.
  std::string to_confirm;
};

/// Seconds since `start`, for the wall times the campaign reports.
double seconds_since(std::chrono::steady_clock::time_point start);

/// 100 * `v` formatted by `format` (a printf format taking a double); "-"
/// when `v` is not finite.
std::string percent_text(double v, const char* format);

/// The kernel's change (best vs baseline) as the table shows it: "+1.2 %",
/// "-" when not measured.
std::string change_text(const KernelResult& r);

/// campaign.json: every kernel's row (format ciq-campaign/1), a newline
/// at the end.
std::string to_json(const std::vector<KernelResult>& results);

/// The table people read, on stderr: each kernel's change, whether it
/// shipped and the verdict; with shares (--from-profile) also its share,
/// its replay's change and what it is worth to the program.
void print_table(const std::vector<KernelResult>& results);

/// (best - baseline) / baseline of a finished run's preferred objective.
double relative_change(const SummaryResults& s);

/// `r`'s one way to its next phase, `to`: a move that allowed_move() does
/// not list is a bug of the campaign's; it stops a debug build (assert)
/// and is said on stderr as an internal error otherwise, and `r` then
/// moves anyway: a campaign does not lose the kernels it tuned for it.
void move_to(KernelResult& r, KernelPhase to);

/// `r` starts (again) in `p`, tune or replay, whatever it was before: a
/// resumed campaign's kernel, or each kernel of a group tuned together.
void start_in(KernelResult& r, KernelPhase p);

/// A finished run's results (its summary.json) into `r`, which is then
/// done (for advance() and start_phase(), which own the phases); false
/// when the run has no results (not run, or it failed before its search
/// ended). A run of several kernels (--together: `run --separately`) gives each its
/// own part of the summary; false when the kernel has none there.
bool take_results(KernelResult& r, const std::optional<RunSummary>& summary);

/// <run dir>/summary.json; none when absent or unreadable (the run's log
/// then says what happened).
std::optional<RunSummary> summary_of(const KernelResult& r);

} // namespace ciq::tuner
