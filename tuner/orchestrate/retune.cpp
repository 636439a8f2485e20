#include "tuner/orchestrate/retune.h"

#include "cache/stale.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "tuner/measure/gpu_monitor.h"
#include "tuner/orchestrate/progress.h"
#include "tuner/orchestrate/recorded_runs.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <cstdio>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace ciq::tuner {

namespace {

enum class Verdict { replaced, kept, dropped, skipped, failed };

const char* verdict_name(Verdict v) {
  switch (v) {
  case Verdict::replaced: return "replaced";
  case Verdict::kept: return "kept";
  case Verdict::dropped: return "dropped";
  case Verdict::skipped: return "skipped";
  case Verdict::failed: return "failed";
  }
  return "failed";
}

// One line of the table: an old entry and what its new run made of it.
struct Row {
  std::string kernel, key;    // the old entry
  double old_gain = NAN, new_gain = NAN;
  Verdict verdict = Verdict::skipped;
  std::string reason;
  std::string run_dir;        // the new run's ("" when none ran)
  std::string new_key;        // the new entry of the kernel ("" when none)
};

// A row for the old entry `e`: its name, key and the gain it recorded.
Row row_of(const RecordedEntry& e, const std::string& objective = "") {
  Row row;
  row.kernel = entry_name(e.record), row.key = e.key;
  row.old_gain = recorded_gain(e.record, objective).gain();
  return row;
}

// The GPU model --stale compares with: --gpu, else CIQ_GPU_MODEL (a machine
// without a GPU), else NVML's first GPU; std::nullopt when none (GPUs are
// then not compared), with a note.
std::optional<std::string> gpu_model_here(const std::string& named) {
  if (!trim(named).empty()) return std::string(trim(named));
  if (std::string model = env(Env::gpu_model); !trim(model).empty()) return std::string(trim(model));
  std::string why;
  if (Nvml* nvml = Nvml::get(&why))
    if (auto id = nvml->identity(""); id && !id->name.empty()) return id->name;
  std::fprintf(stderr, "ciq-tuner: no GPU named or found here (%s): entries are not compared by GPU; name one with --gpu NAME or %s\n",
               printable(why.empty() ? "NVML names none" : why).c_str(), env_name(Env::gpu_model));
  return std::nullopt;
}

// The keys `ciq-cache stale` lists (cache/stale.h: one reader of the question).
Result<std::set<std::string>> stale_keys(const RetuneOptions& o) {
  auto compared = gpu_model_here(o.gpu);
  // Runs here verify on this machine's GPU: what they ship is this model's,
  // so entries stale for another model named stay stale for it.
  if (!trim(o.gpu).empty()) {
    std::string why;
    if (Nvml* nvml = Nvml::get(&why))
      if (auto id = nvml->identity(""); id && !id->name.empty() && !cache::same_gpu_model(id->name, o.gpu))
        std::fprintf(stderr, "ciq-tuner: warning: --gpu %s is not this machine's GPU (%s): the runs verify, and their entries record, %s; "
                             "for %s they stay stale (retune on a machine with that GPU)\n",
                     printable(o.gpu).c_str(), printable(id->name).c_str(), printable(id->name).c_str(), printable(o.gpu).c_str());
  }
  auto report = cache::find_stale(o.cache_dir, compared);
  if (!report) return report.error();
  if (!report->ptxas_now) std::fprintf(stderr, "ciq-tuner: ptxas not compared: %s\n", printable(report->ptxas_why).c_str());
  std::set<std::string> keys;
  for (const auto& [id, group] : report->groups)
    for (const auto& e : group.entries) keys.insert(e.key);
  return keys;
}

// The entries a row is shown for: the kernels' and units' (a module entry
// goes with its kernels), else whatever was selected.
std::vector<const RecordedEntry*> shown_entries(const RecordedRun& run) {
  std::vector<const RecordedEntry*> shown;
  for (const auto& e : run.selected)
    if (e.record.kind != "module") shown.push_back(&e);
  if (shown.empty())
    for (const auto& e : run.selected) shown.push_back(&e);
  return shown;
}

// A new run directory's name under the retune's: the old one's, made unique.
std::string new_run_name(const std::string& batch, const std::string& command_line, std::set<std::string>& taken) {
  std::string base = command_line.empty() ? "run" : base_name(dir_name(command_line));
  if (base.empty() || base == "." || base == "/") base = "run";
  std::string name = base;
  // Nor one an earlier retune into the same --out left (or its log).
  auto used = [&](const std::string& n) {
    return !taken.insert(n).second || path_exists(join_path(batch, n)) || path_exists(join_path(batch, n + ".log"));
  };
  for (int n = 2; used(name); ++n) name = base + "-" + std::to_string(n);
  return name;
}

// Removes `entries` (their records and quarantine marks) in one transaction.
Result<void> remove_entries(const std::string& cache_dir, const std::vector<RecordedEntry>& entries) {
  auto store = cache::Store::open_for_writing(cache_dir);
  if (!store) return store.error();
  std::vector<cache::Change> changes;
  for (const auto& e : entries) {
    auto key = parse_digest<16>(e.key);
    if (!key) continue;
    changes.push_back(cache::Change{cache::Table::records, digest_bytes(*key), std::nullopt});
    changes.push_back(cache::Change{cache::Table::quarantine, digest_bytes(*key), std::nullopt});
  }
  return store->apply(changes);
}

// What one finished new run made of the old entries of `run`: replaced by a
// verified winner, kept (nothing wins now), or dropped (--drop-losers).
void conclude_run(const RetuneOptions& o, const RecordedRun& run, const std::string& new_dir, const SummaryResults& results,
                  std::vector<Row>& rows) {
  // Entries name their run by its real path (an --out through a link too).
  std::string command_line = join_path(new_dir, "command-line");
  if (char* real = ::realpath(command_line.c_str(), nullptr)) {
    command_line = real;
    std::free(real);
  }
  auto made = entries_of_run(o.cache_dir, command_line);
  std::map<std::string, const RecordedEntry*> new_by_name;
  if (made)
    for (const auto& e : *made) new_by_name.emplace(entry_name(e.record) + "\n" + e.record.kind, &e);
  // An old entry's row with what the new run made of its kernel or unit.
  auto new_row = [&](const RecordedEntry& e) {
    Row row = row_of(e, results.objective);
    row.run_dir = new_dir;
    if (auto it = new_by_name.find(row.kernel + "\n" + e.record.kind); it != new_by_name.end()) {
      row.new_key = it->second->key;
      row.new_gain = recorded_gain(it->second->record, results.objective).gain();
    }
    return row;
  };
  // A run of several kernels each judged by its own time (--separately)
  // has a verdict per kernel: each row goes by its kernel's.
  auto own = [&](const std::string& kernel) -> const SummaryKernel* {
    for (const auto& k : results.kernels)
      if (k.kernel == kernel) return &k;
    return nullptr;
  };
  if (!results.kernels.empty()) {
    std::vector<RecordedEntry> losers;
    for (const RecordedEntry* e : shown_entries(run))
      if (const SummaryKernel* k = own(entry_name(e->record)); k && !k->shipped && !e->record.controls.empty()) losers.push_back(*e);
    bool removed = false;
    if (o.drop_losers && !losers.empty()) {
      if (auto r = remove_entries(o.cache_dir, losers); !r)
        std::fprintf(stderr, "ciq-tuner: warning: could not remove the old entries: %s\n", printable(r.error().message).c_str());
      else removed = true;
    }
    for (const RecordedEntry* e : shown_entries(run)) {
      Row row = new_row(*e);
      const SummaryKernel* k = own(row.kernel);
      if (!k) {
        row.verdict = Verdict::kept;
        row.reason = "the new run did not judge it";
      } else if (k->shipped) {
        row.verdict = Verdict::replaced;
        row.reason = "a verified winner: " + k->controls;
      } else if (removed && !e->record.controls.empty()) {
        row.verdict = Verdict::dropped;
        row.reason = "nothing beats the default now (" + k->verdict + "): the old entry is removed";
      } else {
        row.verdict = Verdict::kept;
        row.reason = e->record.controls.empty() ? "no gain before, none now (" + k->verdict + ")"
                                                : "nothing beats the default now (" + k->verdict + "): the old entry stays (--drop-losers removes it)";
      }
      rows.push_back(std::move(row));
    }
    return;
  }
  bool dropped = false;
  if (!results.shipped && o.drop_losers) {
    // The old run's winners still in the cache (under this toolkit's keys a
    // new run's "no gain" entry may have taken their place already).
    auto left = entries_of_run(o.cache_dir, run.command_line);
    std::vector<RecordedEntry> winners;
    if (left)
      for (auto& e : *left)
        if (!e.record.controls.empty()) winners.push_back(e);
    if (!winners.empty()) {
      if (auto removed = remove_entries(o.cache_dir, winners); !removed) {
        std::fprintf(stderr, "ciq-tuner: warning: could not remove the old entries: %s\n", printable(removed.error().message).c_str());
      } else {
        dropped = true;
        std::fprintf(stderr, "ciq-tuner: removed %zu old entr%s: nothing beats the default now (--drop-losers)\n", winners.size(),
                     winners.size() == 1 ? "y" : "ies");
      }
    }
  }
  for (const RecordedEntry* e : shown_entries(run)) {
    Row row = new_row(*e);
    if (results.shipped) {
      row.verdict = Verdict::replaced;
      row.reason = "a verified winner: " + results.controls;
    } else if (dropped && !e->record.controls.empty()) {
      row.verdict = Verdict::dropped;
      row.reason = "nothing beats the default now (" + results.verdict + "): the old entry is removed";
    } else {
      row.verdict = Verdict::kept;
      row.reason = e->record.controls.empty() ? "no gain before, none now (" + results.verdict + ")"
                                              : "nothing beats the default now (" + results.verdict + "): the old entry stays (--drop-losers removes it)";
    }
    rows.push_back(std::move(row));
  }
}

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

std::string dumped(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The end of a retune: the table on stdout, or one JSON object.
void print_rows(const std::vector<Row>& rows, const std::string& batch, bool json) {
  if (json) {
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& r : rows)
      listed.push_back({{"kernel", r.kernel}, {"key", r.key}, {"old_gain", number_or_null(r.old_gain)}, {"new_gain", number_or_null(r.new_gain)},
                        {"verdict", verdict_name(r.verdict)}, {"reason", r.reason}, {"run_dir", r.run_dir}, {"new_key", r.new_key}});
    std::cout << dumped({{"out", batch}, {"rows", listed}}) << "\n";
    return;
  }
  std::size_t width = 6;
  for (const auto& r : rows) width = std::max(width, printable(r.kernel).size());
  std::printf("%-*s  %-8s  %-8s  %-8s  %s\n", int(width), "kernel", "old gain", "new gain", "verdict", "why");
  for (const auto& r : rows)
    std::printf("%-*s  %-8s  %-8s  %-8s  %s\n", int(width), printable(r.kernel).c_str(), gain_text(r.old_gain).c_str(),
                gain_text(r.new_gain).c_str(), verdict_name(r.verdict), printable(r.reason).c_str());
}

// The end of a dry run: the entries it would skip (the runs are printed as
// they are planned), or one JSON object with both.
void print_skipped(const std::vector<Row>& rows, const nlohmann::json& planned, bool json) {
  if (json) {
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& r : rows) skipped.push_back({{"kernel", r.kernel}, {"key", r.key}, {"reason", r.reason}});
    std::cout << dumped({{"would_run", planned}, {"skipped", skipped}}) << "\n";
    return;
  }
  for (const auto& r : rows)
    std::printf("# skipped %s (%s): %s\n", printable(r.kernel).c_str(), r.key.substr(0, 12).c_str(), printable(r.reason).c_str());
}

} // namespace

int run_retune(const RetuneOptions& given) {
  RetuneOptions o = given;
  if (!o.gpu.empty() && !o.stale) return fail(make_error("usage", "--gpu names the GPU model --stale compares entries with: give --stale too"));
  auto cache = existing_cache(o.cache_dir);
  if (!cache) return fail(cache.error().message);
  o.cache_dir = *cache;
  std::set<std::string> stale;
  if (o.stale) {
    auto keys = stale_keys(o);
    if (!keys) return fail(keys.error().message);
    stale = std::move(*keys);
  }
  auto runs = recorded_runs(o.cache_dir, [&](const RecordedEntry& e) {
    if (o.stale && !stale.count(e.key)) return false;
    if (!o.kernels.empty()) return e.record.kind == "kernel" && glob_match(o.kernels, e.record.kernel);
    return true;
  });
  if (!runs) return fail(runs.error().message);
  if (runs->empty()) {
    std::fprintf(stderr, "ciq-tuner: no entry of %s is selected%s: nothing to tune again\n", o.cache_dir.c_str(),
                 o.stale ? " (none is stale)" : "");
    if (o.json && o.dry_run) std::cout << nlohmann::json{{"would_run", nlohmann::json::array()}, {"skipped", nlohmann::json::array()}}.dump() << "\n";
    else if (o.json) std::cout << nlohmann::json{{"rows", nlohmann::json::array()}}.dump() << "\n";
    return 0;
  }

  auto batch = batch_directory(o.out_dir, "ciq-retune", !o.dry_run);
  if (!batch) return fail(batch.error());
  std::vector<Row> rows;
  nlohmann::json planned = nlohmann::json::array();
  std::set<std::string> taken;
  std::size_t runnable = 0;
  std::vector<std::pair<const RecordedRun*, SavedRun>> to_run;
  for (const auto& run : *runs) {
    auto saved = read_saved_run(run.command_line);
    if (!saved) {
      for (const RecordedEntry* e : shown_entries(run)) {
        Row row = row_of(*e);
        row.reason = saved.error().message;
        rows.push_back(std::move(row));
      }
      continue;
    }
    to_run.emplace_back(&run, std::move(*saved));
    ++runnable;
  }
  bool any_failed = false;
  std::size_t i = 0;
  // An interrupt stops the run in progress (it saves its state) and this:
  // the runs before it finished and shipped; what to do about that one.
  // One buffer, its address handed once: the handler never reads freed text.
  static char interrupted[4096] = "";
  if (!o.dry_run) kill_children_on_interrupt(interrupted, /*forward=*/true);
  for (auto& [run, saved] : to_run) {
    std::string new_dir = join_path(*batch, new_run_name(*batch, run->command_line, taken));
    // A run saved with --no-ship is tuned again to replace its entries: it ships.
    std::vector<std::string> args = without_options(saved.arguments, {"out", "cache-dir", "resume"}, {"json", "no-ship"});
    args.insert(args.end(), {"--out", new_dir, "--json", "--cache-dir", o.cache_dir});
    std::string names;
    for (const RecordedEntry* e : shown_entries(*run)) names += (names.empty() ? "" : ", ") + entry_name(e->record);
    if (o.dry_run) {
      std::vector<std::string> argv{self_executable()};
      argv.insert(argv.end(), args.begin(), args.end());
      if (o.json) {
        planned.push_back({{"command_line", run->command_line}, {"working_directory", saved.working_directory}, {"argv", argv},
                           {"entries", names}});
      } else {
        std::printf("# %s (recorded in %s)\n", printable(names).c_str(), printable(run->command_line).c_str());
        std::printf("cd %s && %s\n", shown_argv({saved.working_directory}).c_str(), shown_argv(argv).c_str());
      }
      continue;
    }
    ++i;
    std::snprintf(interrupted, sizeof interrupted,
                  "\nciq-tuner: retune interrupted in run %zu of %zu (the runs before it finished and shipped); finish it with: "
                  "ciq-tuner run --resume %s\n", i, runnable, printable(new_dir).c_str());
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] tuning %s again as recorded in %s: %s (log: %s.log)\n", i, runnable,
                 printable(names).c_str(), printable(run->command_line).c_str(), printable(new_dir).c_str(), printable(new_dir).c_str());
    RerunOutcome outcome = run_again(args, saved.working_directory, new_dir, new_dir + ".log");
    if (!outcome.summary) {
      any_failed = true;
      std::fprintf(stderr, "ciq-tuner: [%zu/%zu] could not tune: %s\n", i, runnable, printable(outcome.failure).c_str());
      for (const RecordedEntry* e : shown_entries(*run)) {
        Row row = row_of(*e);
        row.verdict = Verdict::failed;
        row.reason = outcome.failure;
        row.run_dir = new_dir;
        rows.push_back(std::move(row));
      }
      continue;
    }
    const SummaryResults& results = *outcome.summary->results;
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s\n", i, runnable, results.shipped ? ("shipped " + results.controls).c_str() : "nothing shipped",
                 printable(results.verdict).c_str());
    conclude_run(o, *run, new_dir, results, rows);
  }

  if (o.dry_run) print_skipped(rows, planned, o.json);
  else print_rows(rows, *batch, o.json);
  return any_failed ? 1 : 0;
}

} // namespace ciq::tuner
