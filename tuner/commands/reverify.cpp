#include "tuner/commands/reverify.h"

#include "cache/stale.h"
#include "cache/tuned_on.h"
#include "spaces/control_set.h"
#include "tuner/run/progress.h"
#include "tuner/commands/recorded_runs.h"
#include "tuner/rundir/command_line.h"
#include "tuner/search/candidate.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

namespace ciq::tuner {

namespace {

enum class Standing { still_wins, stopped_winning, not_measured };

const char* standing_name(Standing s) {
  switch (s) {
  case Standing::still_wins: return "still wins";
  case Standing::stopped_winning: return "stopped winning";
  case Standing::not_measured: return "could not measure";
  }
  return "could not measure";
}

// One kernel's row, with the entries of its run it stands for (kernel_rows()).
struct Row {
  std::string kernel, key;
  std::vector<RecordedEntry> entries;
  double recorded_gain = NAN, gain_now = NAN;
  Standing standing = Standing::not_measured;
  std::string reason, run_dir;
};

// The entries whose keys name another ptxas or nvcc than the one found
// now: they no longer apply (a build misses them), so there is nothing
// of theirs to re-measure here (`ciq-tuner retune --stale` tunes them again).
Result<std::set<std::string>> other_toolkit_keys(const std::string& cache_dir) {
  auto report = cache::find_stale(cache_dir, std::nullopt);
  if (!report) return report.error();
  std::set<std::string> keys;
  for (const auto& [id, group] : report->groups)
    for (const auto& e : group.entries) keys.insert(e.key);
  return keys;
}

// A run's rows: one per kernel entry selected, its unit and module entries
// counted in its first (kernel_rows()), each with what was found.
void add_rows(const RecordedRun& run, Standing standing, const std::string& reason, const std::string& run_dir,
              const SummaryResults* results, std::vector<Row>& rows) {
  std::string objective = results ? results->objective : "";
  for (auto& entries : kernel_rows(run.selected)) {
    Row row;
    row.kernel = entry_name(entries.front().record), row.key = entries.front().key;
    row.recorded_gain = row_recorded_gain(entries, objective);
    // The direction the run tuned in, from the entry that recorded a gain.
    int lower_is_better = 0;
    for (const auto& e : entries)
      if (!lower_is_better) lower_is_better = recorded_gain(e.record, objective).lower_is_better;
    if (results) row.gain_now = relative_gain(results->baseline, results->best, lower_is_better);
    row.entries = std::move(entries);
    row.standing = standing;
    row.reason = reason;
    row.run_dir = run_dir;
    rows.push_back(std::move(row));
  }
}

// The run's entries that apply with this toolkit: its whole shipped result here.
std::vector<RecordedEntry> of_this_toolkit(const RecordedRun& run, const std::set<std::string>& elsewhere) {
  std::vector<RecordedEntry> current;
  for (const auto& e : run.all)
    if (!elsewhere.count(e.key)) current.push_back(e);
  return current;
}

nlohmann::json entries_json(const std::vector<RecordedEntry>& entries) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& e : entries) listed.push_back(entry_json(e));
  return listed;
}

void print_table(const std::vector<Row>& rows) {
  std::size_t width = 6;
  for (const auto& r : rows) width = std::max(width, printable(r.kernel).size());
  std::printf("%-*s  %-7s  %-8s  %-8s  %-17s  %s\n", int(width), "kernel", "entries", "recorded", "now", "verdict", "why");
  for (const auto& r : rows)
    std::printf("%-*s  %-7zu  %-8s  %-8s  %-17s  %s\n", int(width), printable(r.kernel).c_str(), r.entries.size(), gain_text(r.recorded_gain).c_str(),
                gain_text(r.gain_now).c_str(), standing_name(r.standing), printable(r.reason).c_str());
}

// The recorded runs whose shipped winners `o` selects (--kernels), of this
// toolkit (`elsewhere`: keys made for another ptxas or nvcc, left out and
// said) and with controls to re-measure (said how many runs shipped none).
Result<std::vector<RecordedRun>> runs_to_measure(const ReverifyOptions& o, const std::set<std::string>& elsewhere) {
  std::size_t left_out = 0;
  auto runs = recorded_runs(o.cache_dir, [&](const RecordedEntry& e) {
    // Made by hand: no run to measure it with.
    if (cache::tuned_on(e.record).command_line.empty()) return false;
    if (!o.kernels.empty() && !(e.record.kind == cache::RecordKind::kernel && glob_match(o.kernels, e.record.kernel))) return false;
    if (elsewhere.count(e.key)) return ++left_out, false;
    return true;
  });
  if (!runs) return runs.error();
  if (left_out)
    std::fprintf(stderr, "ciq-tuner: left out %zu entr%s made for another ptxas or nvcc than the one found now: they no longer apply "
                         "(ciq-tuner retune --stale tunes them again)\n", left_out, left_out == 1 ? "y" : "ies");
  // A run that shipped no controls (tuned, no gain) has nothing to re-measure.
  std::size_t no_gain = runs->size();
  std::erase_if(*runs, [&](const RecordedRun& run) { return run_controls(of_this_toolkit(run, elsewhere)).empty(); });
  no_gain -= runs->size();
  if (no_gain)
    std::fprintf(stderr, "ciq-tuner: left out %zu run%s that shipped no gain: nothing to re-measure\n", no_gain, no_gain == 1 ? "" : "s");
  return runs;
}

// The measurements of one reverify, each a `run --verify-controls` child
// in the batch directory, its outcome a row.
struct Measurer {
  const ReverifyOptions& o;
  const std::string& batch;
  std::size_t count;            // the runs to measure, for progress
  std::vector<Row>& rows;
  std::set<std::string> taken;  // the names given in the batch

  // One measurement of `run` (numbered `i`): `set` against the default, for
  // the entries of `part`, with `args` in the run's working directory.
  Result<void> measure(std::size_t i, const RecordedRun& run, const SavedRun& saved, const RecordedRun& part,
                       const spaces::ControlSet& set, std::vector<std::string> args) {
    std::string name = base_name(dir_name(run.command_line));
    for (int n = 2; !taken.insert(name).second; ++n) name = base_name(dir_name(run.command_line)) + "-" + std::to_string(n);
    std::string dir = join_path(batch, name), controls_file = dir + ".controls";
    if (auto w = write_file_atomic(controls_file, spaces::format_control_set(set)); !w) return w.error();
    args.insert(args.end(), {"--verify-controls", controls_file, "--out", dir, "--json"});
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] re-measuring %s (the run recorded in %s) against the default: %s (log: %s.log)\n", i,
                 count, printable(spaces::summarise_control_set(set)).c_str(), printable(run.command_line).c_str(),
                 printable(dir).c_str(), printable(dir).c_str());
    RerunOutcome outcome = run_again(args, saved.working_directory, dir, dir + ".log");
    if (!outcome.summary) {
      std::fprintf(stderr, "ciq-tuner: [%zu/%zu] could not measure: %s\n", i, count, printable(outcome.failure).c_str());
      add_rows(part, Standing::not_measured, outcome.failure, dir, nullptr, rows);
      return {};
    }
    const SummaryResults& results = *outcome.summary->results;
    Standing standing = results.controls != k_default_candidate ? Standing::still_wins : Standing::stopped_winning;
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s\n", i, count, standing_name(standing), printable(results.verdict).c_str());
    add_rows(part, standing, results.verdict, dir, &results, rows);
    return {};
  }

  // Every measurement of `run` (numbered `i`): its whole shipped set of
  // this toolkit's entries, selected or not; or, for a run that tuned
  // several kernels each by its own time (--separately, a campaign's
  // kernels tuned together), each kernel's entry alone, judged by its own
  // time as that run judged it.
  Result<void> measure_run(std::size_t i, const RecordedRun& run, const SavedRun& saved, const std::set<std::string>& elsewhere) {
    std::vector<std::string> runs;
    if (o.runs > 0) runs = {"--verify-runs", std::to_string(o.runs)};
    std::vector<std::string> args = forward_arguments(
        saved.arguments, "run", "run", group_output | group_resume | group_earlier_run | group_shipping | group_seeds, runs);
    bool separately = false;
    for (const auto& p : parse_arguments(saved.arguments, "run"))
      if (p.name == "separately") separately = p.flag_on();
    if (!separately) return measure(i, run, saved, run, run_controls(of_this_toolkit(run, elsewhere)), args);
    std::vector<std::string> one = forward_arguments(args, "run", "run", group_kernels);
    for (const auto& e : run.selected) {
      if (e.record.kind != cache::RecordKind::kernel || e.record.controls.empty()) continue;
      RecordedRun part = run;
      part.selected = {e};
      std::vector<std::string> part_args = one;
      part_args.insert(part_args.end(), {"--kernels", exact_glob(e.record.kernel)});
      if (auto m = measure(i, run, saved, part, run_controls({e}), part_args); !m) return m;
    }
    return {};
  }
};

// The rows as one JSON object on stdout (--json), or the table.
void report(const ReverifyOptions& o, const std::vector<Row>& rows, const std::string* batch) {
  if (o.json) {
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& r : rows)
      listed.push_back({{"kernel", r.kernel}, {"key", r.key}, {"entries", entries_json(r.entries)}, {"recorded_gain", gain_json(r.recorded_gain)},
                        {"gain_now", gain_json(r.gain_now)}, {"verdict", standing_name(r.standing)}, {"reason", r.reason},
                        {"run_dir", r.run_dir}});
    nlohmann::json out = batch ? nlohmann::json(*batch) : nlohmann::json(nullptr);
    std::cout << nlohmann::json{{"out", out}, {"rows", listed}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (rows.empty()) {
    std::fprintf(stderr, "ciq-tuner: no shipped winner with a recorded run is selected in %s: nothing to re-measure\n", o.cache_dir.c_str());
  } else {
    print_table(rows);
  }
}

} // namespace

int run_reverify(const ReverifyOptions& given) {
  ReverifyOptions o = given;
  auto cache = existing_cache(o.cache_dir);
  if (!cache) return fail(cache.error().message);
  o.cache_dir = *cache;
  auto elsewhere = other_toolkit_keys(o.cache_dir);
  if (!elsewhere) return fail(elsewhere.error().message);
  auto runs = runs_to_measure(o, *elsewhere);
  if (!runs) return fail(runs.error().message);
  // Each run's saved start, read once; nothing to measure (every run
  // skipped too): no directory is made for it.
  std::vector<Result<SavedRun>> starts;
  bool any = false;
  for (const auto& run : *runs) {
    starts.push_back(read_saved_run(run.command_line, run.run_id));
    any |= starts.back().ok();
  }
  auto batch = batch_directory(o.out_dir, "ciq-reverify", any);
  if (!batch) return fail(batch.error());
  // An interrupt stops the measurement in progress, and this: the cache is
  // as it was (reverify changes nothing); measure again from the start.
  kill_children_on_interrupt("\nciq-tuner: reverify interrupted; nothing in the cache changed: run it again to measure\n",
                             /*forward=*/true);
  std::vector<Row> rows;
  Measurer measurer{o, *batch, runs->size(), rows, {}};
  for (std::size_t i = 0; i < runs->size(); ++i) {
    const Result<SavedRun>& saved = starts[i];
    if (!saved) add_rows((*runs)[i], Standing::not_measured, saved.error().message, "", nullptr, rows);
    else if (auto m = measurer.measure_run(i + 1, (*runs)[i], *saved, *elsewhere); !m) return fail(m.error().message);
  }
  report(o, rows, any ? &*batch : nullptr);
  bool stopped = false, unmeasured = false;
  for (const auto& r : rows) {
    stopped |= r.standing == Standing::stopped_winning;
    unmeasured |= r.standing == Standing::not_measured;
  }
  return stopped ? k_stopped_winning : unmeasured ? k_not_measured : 0;
}

} // namespace ciq::tuner
