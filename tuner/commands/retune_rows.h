// ciq-tuner retune's rows: what a new run made of each old entry (a kernel's
// row: replaced, added, kept, dropped, unchanged, skipped, failed, with why),
// the --drop-losers removal, and the table and JSON that report them.
#pragma once

#include "tuner/commands/recorded_runs.h"
#include "tuner/commands/retune.h"
#include "tuner/rundir/summary.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

// What the retune did about a kernel (a row). Each word says exactly what
// happened to its entries: `replaced` (a new verified winner now stands
// under the old entry's key), `added` (a new verified winner under this
// toolkit's key; the old entry stays under its own), `kept` (nothing wins
// now, the old entry stays as it was), `dropped` (nothing wins now,
// --drop-losers removed it), `unchanged` (the new run did not judge it or
// made no entry for it), `skipped` (no run started), `failed` (its run failed).
enum class RetuneVerdict { replaced, added, kept, dropped, unchanged, skipped, failed };

// What became of one old entry: its key now holds the new run's entry,
// it is as it was, or --drop-losers removed it.
enum class EntryFate { replaced, kept, removed };

// One line of the table: a kernel's old entry (with the entries of its run
// that go with it, kernel_rows()) and what its new run made of them.
struct RetuneRow {
  std::string kernel, key;          // the row's first old entry
  std::vector<RecordedEntry> entries;
  std::vector<EntryFate> fates;          // one per entry
  double old_gain = NAN, new_gain = NAN;
  RetuneVerdict verdict = RetuneVerdict::skipped;
  std::string reason;
  std::string run_dir;              // the new run's ("" when none ran)
  std::string new_key;              // the new entry of the kernel ("" when none)
};

/// The rows of a run that did not run (skipped, failed): its selected entries, unchanged.
void add_unchanged_rows(const RecordedRun& run, RetuneVerdict verdict, const std::string& reason, const std::string& run_dir,
                        std::vector<RetuneRow>& rows);

/// The names of a run's rows, for progress and --dry-run.
std::string row_names(const RecordedRun& run);

/// What one finished new run made of the old entries of `run`: a kernel's
/// row is replaced or added to by a verified winner, kept (nothing wins
/// now), dropped (--drop-losers) or unchanged. The rows cover the entries
/// selected and every other entry of the run the retune changed (the new
/// run wrote under its key, or --drop-losers removed it), so that each
/// entry changed is in the output.
void conclude_run(const RetuneOptions& o, const RecordedRun& run, const std::string& new_dir, const SummaryResults& results,
                  const std::set<std::string>& keys_before, std::vector<RetuneRow>& rows);

/// The end of a retune: the table on stdout, or one JSON object.
void print_rows(const std::vector<RetuneRow>& rows, const std::string& batch, bool json);

/// The end of a dry run: the entries it would skip (the runs are printed as
/// they are planned), or one JSON object with both.
void print_skipped(const std::vector<RetuneRow>& rows, const nlohmann::json& planned, bool json);

} // namespace ciq::tuner
