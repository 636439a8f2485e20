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

/// Where a kernel stands in its campaign. It moves on only by the
/// campaign's one transition function (advance(), campaign.cpp), from
/// tune or replay (where a resumed campaign starts it: start_phase()) to
/// done or failed:
///   tune               -> done | failed
///   replay             -> done (the default won) | confirm | confirm_jointly
///                         | tune (the replay could not serve)
///   confirm            -> done | failed | confirm_directives | confirm_jointly
///   confirm_directives -> done | failed
///   confirm_jointly    -> done | failed (after every other kernel's phases)
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
