// <run dir>/summary.json: what a run came to, in one JSON object. Written
// once at the end of a run (its last stdout line with --json), and also when
// a run that holds its directory fails, so that whoever started it (a
// campaign) reads the outcome and its reason instead of scraping stderr.
// Read back by campaigns and `ciq-tuner report`; Python's ciq.tune reads the
// same object from stdout. The one reader and writer of the file: its
// members, their order and their number format are fixed here (README,
// "The run directory").
#pragma once

#include "utils/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

/// How a run ended. `failed` with results: the search finished and its
/// results hold, but a later step did not (publishing to the team tier).
enum class RunOutcome { finished, failed };

/// One point of the Pareto front: the candidate and its values as shown
/// (maximised objectives un-negated), one per objective.
struct SummaryPoint {
  std::string controls;
  std::vector<double> values;
};

/// The default as measured on one GPU (per-GPU baselines): per objective
/// the median of its `runs` there; NaN (null) where not measured.
struct SummaryGpuDefault {
  std::string gpu;
  int runs = 0;
  std::vector<double> values;
};

/// `run --separately`: one targeted kernel's result, judged by its own time
/// (ms, summed over its launches in a run of the program): the default's
/// and its best part's medians in the verification (else in the search),
/// the change (best - baseline) / baseline, Welch's p-value, and its part of
/// what ships ("default" when its part did not win).
struct SummaryKernel {
  std::string kernel;
  double baseline = 0, best = 0;
  std::optional<double> p_value;
  std::string controls = "default";
  std::string verdict;
  bool shipped = false;
  int parts = 0;                    // distinct settings of its knobs measured in the search

  /// (best - baseline) / baseline; NaN when either is unknown or baseline is 0.
  double change() const;
};

/// What a finished search found. Values are as shown to people (maximised
/// objectives un-negated); NaN is written as null.
struct SummaryResults {
  std::string objective;            // the preferred objective's name
  double baseline = 0, best = 0;    // the default's and the best's value of it
  bool shipped = false;             // a verified winner was written to the cache
  int entries = 0;                  // cache entries written (a "tuned, no gain" one included)
  int evaluations = 0, invalid = 0;
  int searched = 0, pruning = 0;    // evaluations spent searching (--budget) and pruning the winner
  std::optional<double> p_value;    // Welch's test of the verdict; none when no test ran
  std::string controls = "default"; // the winner's canonical form, else "default"
  std::string verdict;
  // Several objectives only (empty with one): every objective's value of
  // the default and of the best, and the front, preferred point first.
  std::vector<double> baseline_values, best_values;
  std::vector<SummaryPoint> front;
  int prefer = 1;                   // --prefer, counted from 1
  std::vector<SummaryGpuDefault> gpu_defaults; // empty without per-GPU baselines
  // --separately only (absent otherwise): each targeted kernel's own result.
  // Then `baseline` is the summed objective's default, `best` that less the
  // shipped kernels' gains, `controls` the composition of what ships.
  std::vector<SummaryKernel> kernels;
};

struct RunSummary {
  std::string run_dir;
  std::optional<SummaryResults> results; // absent when the run failed before its search ended
  RunOutcome outcome = RunOutcome::finished;
  std::string reason;                    // failed: the error, as the run printed it (without "ciq-tuner: error: ")

  /// One line of JSON (no newline): run_dir, the results' members in the
  /// order above, then, when failed, `"outcome":"failed"` and `reason` (a
  /// finished run writes no outcome). Numbers are written in the file
  /// format: integers as such, others to 6 significant digits.
  std::string to_json() const;
  /// Parses what to_json() writes: a summary without `outcome` is finished;
  /// one without `verdict` has no results.
  static Result<RunSummary> from_json(const std::string& text);
};

/// <dir>/summary.json.
std::string summary_path(const std::string& dir);

/// Writes <dir>/summary.json (atomically, with a newline).
Result<void> write_summary(const std::string& dir, const RunSummary& summary);

/// Reads <dir>/summary.json; std::nullopt when there is none. Fails when it
/// exists but cannot be read or parsed.
Result<std::optional<RunSummary>> read_summary(const std::string& dir);

/// What a child `ciq-tuner run --json` came to, read from its summary only
/// (never from its stderr): <dir>/summary.json, else the last line of its
/// standard output, `child_stdout`, that is a summary (a run that fails
/// before its directory is its own prints a failed one there, and nowhere
/// else). std::nullopt when it left neither: it died or was killed.
std::optional<RunSummary> child_summary(const std::string& dir, std::string_view child_stdout);

/// Removes <dir>/summary.json (a failed attempt's, before the next one):
/// what is read afterwards is the next attempt's or nothing.
Result<void> remove_summary(const std::string& dir);

} // namespace ciq::tuner
