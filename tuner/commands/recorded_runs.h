// The runs that made the cache's entries, found again from the entries:
// a tuned entry's provenance names its run's saved command line (<run
// dir>/command-line, cache/tuned_on.h), and next to that file the run
// kept the directory it ran in (working-directory). `ciq-tuner retune`
// runs such a run again; `ciq-tuner reverify` runs its verification
// alone. What both share is here: reading the entries grouped by run,
// deciding whether a saved command line may be run, the arguments to run
// it with, and the gains the entries recorded.
#pragma once

#include "cache/record.h"
#include "tuner/rundir/summary.h"
#include "utils/result.h"

#include <cmath>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

struct RecordedEntry {
  std::string key; // hex, as ciq-cache lists it
  cache::Record record;
};

/// The name a table gives an entry: its kernel, its unit's file name, or
/// "(module)".
std::string entry_name(const cache::Record& record);

/// The entries of one run: those selected, and every entry of the cache
/// that names the same command line (the run's whole result: the module
/// and unit entries that go with its kernels').
struct RecordedRun {
  std::string command_line;            // the saved command-line file; "" for entries made by hand
  std::string run_id;                  // the run's id, when its entries record one (tuned_on.h)
  std::vector<RecordedEntry> selected; // in key order
  std::vector<RecordedEntry> all;      // selected or not, in key order
};

/// The entries of a run as a table's rows, one row per kernel: each kernel
/// entry starts a row, and the run's other entries (its unit entries, with
/// the NVVM stage's knobs, and its module entry) go in its first row: they
/// are that run's result for its kernels, not kernels of their own. So a
/// table has one row per kernel and every entry in exactly one row.
/// Entries with no kernel entry among them make one row, led by a unit
/// entry when there is one. The first entry of a row names it.
std::vector<std::vector<RecordedEntry>> kernel_rows(const std::vector<RecordedEntry>& entries);

/// Reads the cache under `cache_dir` and groups the entries `select`
/// accepts by the run that made them (in the order of their first key): its
/// command line and run id (a reused --out path held two runs); entries
/// made by hand form one group with an empty command line. A cache
/// that does not exist has no entries. Fails when it is unusable.
Result<std::vector<RecordedRun>> recorded_runs(const std::string& cache_dir,
                                               const std::function<bool(const RecordedEntry&)>& select);

/// The keys of every readable entry of the cache (hex).
Result<std::set<std::string>> entry_keys(const std::string& cache_dir);

/// Every entry of the cache whose recorded command line is `command_line`
/// and run id `run_id` ("" for entries of before run ids).
Result<std::vector<RecordedEntry>> entries_of_run(const std::string& cache_dir, const std::string& command_line,
                                                  const std::string& run_id);

/// The control set a run shipped, whole again from its entries: the
/// options, ACF and per-kernel directives of its kernel and module entries
/// (each holds its kernel's part) and, from its unit entries, the NVVM
/// stage's knobs. Entries without controls add nothing.
spaces::ControlSet run_controls(const std::vector<RecordedEntry>& entries);

/// A saved command line, ready to run again.
struct SavedRun {
  std::vector<std::string> arguments; // after the program's name: "run", then its options
  std::string working_directory;      // where it ran (its relative paths mean something there)
};

/// Reads the saved command line `path` and the working-directory file
/// beside it. Fails ("skipped", with the reason for people) when either is
/// missing or unreadable, when the file is not this user's own (an entry
/// from a pack names a file on another machine, and a file someone else
/// wrote is not a command to run as you), when it is not a `run`'s, when
/// the directory it ran in is gone, or when its directory now holds another
/// run than `run_id` (the entries' run; "" for entries of before run ids).
Result<SavedRun> read_saved_run(const std::string& path, const std::string& run_id);

/// An argv as one line a person can read and paste into any POSIX sh (not
/// only bash): a word the shell would split or expand in single quotes,
/// with '\\'' for a quote in it. What a terminal would act on instead of
/// showing (a control character, a C1 control or bidirectional override,
/// a byte that is not UTF-8) is not printed as it is: each such byte is
/// written "$(printf '\\NNN')" (octal), which sh turns back into that byte,
/// so the line shows no control character and still runs the same argv.
/// (A saved argument holds no newline: the file has one per line.)
std::string shown_argv(const std::vector<std::string>& argv);

/// `dir` as given (made absolute), or `<prefix>-<date>-<time>` here when
/// empty, checked for a place no other user controls (an existing one must
/// be a directory of yours); `make`: made (another name when that one is
/// taken). Not made when nothing would go in it (a dry run, every run
/// skipped): no empty directory is left behind.
Result<std::string> batch_directory(const std::string& dir, const char* prefix, bool make);

/// What an entry recorded of the objective `objective` ("" = its first):
/// the default's value, the winner's, and the direction it was tuned in,
/// from the provenance its run wrote (objectiveN, baselineN, tunedN).
struct RecordedGain {
  std::string objective;
  double baseline = NAN, tuned = NAN;
  /// +1: lower was better (the winner's value is below the default's);
  /// -1: higher was better; 0: unknown (no gain recorded).
  int lower_is_better = 0;
  /// The verified winner's relative gain over the default; NaN when the
  /// entry records none (tuned with no gain, made by hand, a baseline of 0).
  double gain() const;
};

RecordedGain recorded_gain(const cache::Record& record, const std::string& objective);

/// The relative gain of `value` over `baseline` when lower values are
/// better (`lower_is_better` +1) or higher ones (-1); with 0 (unknown), the
/// size of the change. NaN when either is not a number or the baseline is 0.
double relative_gain(double baseline, double value, int lower_is_better);

/// "12.5 %" (one decimal, a sign only when negative), "-" for NaN.
std::string gain_text(double gain);

/// A gain in --json: the number, or null for NaN (no gain recorded or measured).
nlohmann::json gain_json(double gain);

/// An entry in --json: {"key", "kind", "name"} (name as entry_name()).
nlohmann::json entry_json(const RecordedEntry& entry);

/// The first gain recorded among `row`'s entries (kernel_rows()): a kernel
/// entry of a run whose winner is an NVVM-stage knob holds no controls,
/// its unit entry does. NaN when none records one.
double row_recorded_gain(const std::vector<RecordedEntry>& row, const std::string& objective);

/// The cache retune and reverify read: `given` (--cache-dir), else
/// CIQ_CACHE_DIR's or the default, made absolute (the runs they start work
/// in their own directories); an error when there is no cache there.
Result<std::string> existing_cache(const std::string& given);

/// How a run started again ended: its summary.json when it wrote one and
/// ended well; otherwise `failure`, why: the reason its summary gives, else
/// how it ended and where its log is (nothing is read from its log). Not escaped for a terminal:
/// the caller escapes what it prints there, and --json keeps it as it is.
struct RerunOutcome {
  std::optional<RunSummary> summary; // a finished run's
  std::string failure;               // "" when it finished
};

/// Runs this program with `arguments` (argv, no shell) in
/// `working_directory`, as a campaign runs its runs: in its own process
/// group, stdin closed, stdout (its --json line) captured, stderr written
/// to `log` as it goes, and ended if this process dies. Reads the summary
/// it wrote in `run_dir`. `working_directory` is checked again
/// (check_command_directory) and opened first, and the run starts in the
/// directory opened: one another user removed and made again since it was
/// read is not run in ("not run: ..." in `failure`).
RerunOutcome run_again(const std::vector<std::string>& arguments, const std::string& working_directory, const std::string& run_dir,
                       const std::string& log);

} // namespace ciq::tuner
