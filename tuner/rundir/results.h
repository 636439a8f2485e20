// <run dir>/results.csv: the journal as a table for people and spreadsheets,
// a header and then one row per evaluation:
//   number,generation,candidate,<objective names...>,status,reason,build_s,bench_s
// Objective values are as shown (maximised ones un-negated), empty when
// the evaluation is invalid. The journal is the run's memory; this file is
// a view of it, rewritten whole from the journal on --resume. The one reader
// and writer of the file (Python's ciq.tune reads its rows too: README,
// "The run directory").
#pragma once

#include "tuner/objectives/objectives.h"
#include "tuner/rundir/journal.h"
#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::tuner {

class ResultsCsv {
public:
  /// results.csv in run directory `dir`, for a run scored on `objectives`.
  ResultsCsv(std::string dir, const std::vector<Objective>& objectives);

  /// The header line and a record's row (no newline), CSV-quoted.
  std::string header() const;
  std::string row(const EvalRecord& r) const;

  /// A new run: the file begun with its header.
  Result<void> begin() const;
  /// A resumed run: the file written again from the journal's records (a
  /// run stopped between its journal line and its row left a row short or
  /// missing).
  Result<void> rewrite(const std::vector<EvalRecord>& records) const;
  /// One row, appended whole and synced (append_whole_line()).
  Result<void> append(const EvalRecord& r) const;

  const std::string& path() const { return path_; }

private:
  std::string path_;
  std::vector<std::string> names_;
  std::vector<bool> maximize_;
};

/// The fields of the first record of `text` (RFC 4180, as csv_field()
/// writes them: a field with a comma, quote or line break is quoted, with ""
/// for a quote); the record ends at the first line break outside quotes.
std::vector<std::string> parse_csv_record(std::string_view text);

/// The objectives' names from the header of <dir>/results.csv, in order;
/// fails when the file cannot be read or its header is not results.csv's.
Result<std::vector<std::string>> read_objective_names(const std::string& dir);

} // namespace ciq::tuner
