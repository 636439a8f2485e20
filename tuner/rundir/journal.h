// The run directory's journal (journal.jsonl): one line per finished
// evaluation, the run's memory. Appended so that a failed write leaves no
// partial line behind, synced, and read back so that a partial last line (a
// run killed mid-write) is cut off instead of glued to the next record. The
// one reader and writer of the file: the run (run/) appends and
// resumes from it (load_journal), the report reads it (read_journal).
#pragma once

#include "tuner/rundir/gpu_state.h"
#include "tuner/search/search.h"
#include "utils/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

/// How an evaluation ended; the journal's and results.csv's `status`.
enum class EvalStatus {
  ok,        // measured and scored ("ok")
  invalid,   // failed a step or was not compiled as asked; the reason says which ("invalid")
  same_code, // compiled to the code of an earlier evaluation, whose result it reuses ("same-code")
};

/// The status as the journal writes it: "ok", "invalid", "same-code".
std::string_view status_name(EvalStatus status);
/// The status a journal's text names; std::nullopt for any other text (a
/// journal of another version: its line is not read as a record).
std::optional<EvalStatus> parse_status(std::string_view name);

/// Everything known about one evaluation; a line of the journal.
struct EvalRecord {
  int number = 0;
  int generation = 0;
  std::string candidate; // canonical form
  Evaluation evaluation;
  EvalStatus status = EvalStatus::invalid;
  std::string detail;    // invalid: what the failing step printed (its first and last lines), after the one-line reason
  std::vector<std::vector<double>> samples; // per objective, raw values (maximised ones not negated)
  std::string digest;    // compiled code digest (+ parameters)
  double build_seconds = 0, bench_seconds = 0; // bench_seconds: benchmark and check, GPU waits included
  double gpu_wait_seconds = 0;                  // of bench_seconds, waiting for a free GPU
  int steps_run = 0, steps_reused = 0; // nvcc steps ciq-nvcc ran and reused from the memo (wrapper/step_memo.h)
  double finished = 0;   // wall clock (Unix seconds) when it ended: evaluations per minute
  std::vector<GpuState> gpu_states;    // per benchmark run, as NVML read it (gpu_state.h); none without NVML
  std::vector<std::string> run_gpus;   // per benchmark run, the GPU (slot) it ran on; samples are as measured there
  // A run that times its kernels separately (`run --separately`): per
  // targeted kernel, its own time in ms in each benchmark run, in run order
  // (journal `kernel_samples`, written only when there are some). A kernel
  // that did not run in a run has no sample of it.
  std::map<std::string, std::vector<double>> kernel_samples;
  std::string workdir;

  std::string to_json() const;
  static Result<EvalRecord> from_json(const std::string& line);
};

/// Appends `line` and a newline to `path` and syncs it. On failure (disk
/// full, EIO) whatever part of the line reached the file is cut off again,
/// so the file still ends in a whole line; the error names the file.
Result<void> append_whole_line(const std::string& path, const std::string& line);

/// Cuts a partial last line (no newline at the end) off `path`, saying so on
/// stderr; returns the bytes cut (0 when the file ends in a newline, is
/// empty or absent).
Result<std::size_t> drop_partial_last_line(const std::string& path);

/// The journal's records, oldest first, after drop_partial_last_line();
/// an absent journal gives none. A whole line that does not parse, or whose
/// status is none of status_name()'s, is skipped with a warning (its
/// evaluation runs again).
Result<std::vector<EvalRecord>> load_journal(const std::string& path);

/// The journal's records for a reader (the report): as load_journal() would
/// give them, but the file is left as it is (a running tuner may be
/// appending to it): a partial last line is ignored rather than cut off, and
/// lines that do not parse are skipped quietly. Fails when the file cannot
/// be read (absent included).
Result<std::vector<EvalRecord>> read_journal(const std::string& path);

} // namespace ciq::tuner
