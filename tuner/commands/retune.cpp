#include "tuner/commands/retune.h"

#include "cache/entries.h"
#include "cache/stale.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "tuner/run/progress.h"
#include "tuner/commands/recorded_runs.h"
#include "tuner/rundir/command_line.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/gpu_model.h"
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

// What the retune did about a kernel (a row). Each word says exactly what
// happened to its entries: `replaced` (a new verified winner now stands
// under the old entry's key), `added` (a new verified winner under this
// toolkit's key; the old entry stays under its own), `kept` (nothing wins
// now, the old entry stays as it was), `dropped` (nothing wins now,
// --drop-losers removed it), `unchanged` (the new run did not judge it or
// made no entry for it), `skipped` (no run started), `failed` (its run failed).
enum class Verdict { replaced, added, kept, dropped, unchanged, skipped, failed };

const char* verdict_name(Verdict v) {
  switch (v) {
  case Verdict::replaced: return "replaced";
  case Verdict::added: return "added";
  case Verdict::kept: return "kept";
  case Verdict::dropped: return "dropped";
  case Verdict::unchanged: return "unchanged";
  case Verdict::skipped: return "skipped";
  case Verdict::failed: return "failed";
  }
  return "failed";
}

// What became of one old entry: its key now holds the new run's entry,
// it is as it was, or --drop-losers removed it.
enum class Fate { replaced, kept, removed };

const char* fate_name(Fate f) {
  switch (f) {
  case Fate::replaced: return "replaced";
  case Fate::kept: return "kept";
  case Fate::removed: return "removed";
  }
  return "kept";
}

// One line of the table: a kernel's old entry (with the entries of its run
// that go with it, kernel_rows()) and what its new run made of them.
struct Row {
  std::string kernel, key;          // the row's first old entry
  std::vector<RecordedEntry> entries;
  std::vector<Fate> fates;          // one per entry
  double old_gain = NAN, new_gain = NAN;
  Verdict verdict = Verdict::skipped;
  std::string reason;
  std::string run_dir;              // the new run's ("" when none ran)
  std::string new_key;              // the new entry of the kernel ("" when none)
};

// A row for the old entries `entries`, all kept as they are.
Row row_of(std::vector<RecordedEntry> entries, const std::string& objective = "") {
  Row row;
  row.kernel = entry_name(entries.front().record), row.key = entries.front().key;
  row.old_gain = row_recorded_gain(entries, objective);
  row.fates.assign(entries.size(), Fate::kept);
  row.entries = std::move(entries);
  return row;
}

// The rows of a run that did not run (skipped, failed): its selected entries, unchanged.
void add_unchanged_rows(const RecordedRun& run, Verdict verdict, const std::string& reason, const std::string& run_dir,
                        std::vector<Row>& rows) {
  for (auto& entries : kernel_rows(run.selected)) {
    Row row = row_of(std::move(entries));
    row.verdict = verdict;
    row.reason = reason;
    row.run_dir = run_dir;
    rows.push_back(std::move(row));
  }
}

// The names of a run's rows, for progress and --dry-run.
std::string row_names(const RecordedRun& run) {
  std::string names;
  for (const auto& entries : kernel_rows(run.selected)) names += (names.empty() ? "" : ", ") + entry_name(entries.front().record);
  return names;
}

// The --publish URL a saved command line gives ("" = none); its password,
// if any, is masked (command_line.h).
std::string publish_url_of(const std::vector<std::string>& arguments) {
  std::string url;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    if ((a == "--publish" || a == "-publish") && i + 1 < arguments.size()) url = arguments[i + 1];
    for (const char* prefix : {"--publish=", "-publish="})
      if (starts_with(a, prefix)) url = a.substr(std::string(prefix).size());
  }
  return url;
}

// The GPU model --stale compares with (utils/gpu_model.h: --gpu, else
// CIQ_GPU_MODEL, else NVML's first GPU); std::nullopt when none (GPUs are
// then not compared), with a note.
std::optional<std::string> gpu_model_compared(const std::string& named) {
  std::string why;
  if (auto here = gpu_model_here(named, "--gpu", why)) return here->model;
  std::fprintf(stderr, "ciq-tuner: no GPU named or found here (%s): entries are not compared by GPU; name one with --gpu NAME or %s\n",
               printable(why.empty() ? "NVML names none" : why).c_str(), env_name(Env::gpu_model));
  return std::nullopt;
}

// The keys `ciq-cache stale` lists (cache/stale.h: one reader of the question).
Result<std::set<std::string>> stale_keys(const RetuneOptions& o) {
  auto compared = gpu_model_compared(o.gpu);
  // Runs here verify on this machine's GPU: what they ship is this model's,
  // so entries stale for another model named stay stale for it.
  // The same when CIQ_GPU_MODEL names the other model.
  std::string named = trim(o.gpu).empty() ? std::string(trim(env(Env::gpu_model))) : std::string(trim(o.gpu));
  std::string source = trim(o.gpu).empty() ? env_name(Env::gpu_model) : std::string("--gpu");
  if (!named.empty()) {
    std::string why;
    if (auto here = nvml_gpu_model(why); here && !cache::same_gpu_model(*here, named))
      std::fprintf(stderr, "ciq-tuner: warning: %s %s is not this machine's GPU (%s): the runs verify, and their entries record, %s; "
                           "for %s they stay stale (retune on a machine with that GPU)\n",
                   source.c_str(), printable(named).c_str(), printable(*here).c_str(), printable(*here).c_str(),
                   printable(named).c_str());
  }
  auto report = cache::find_stale(o.cache_dir, compared);
  if (!report) return report.error();
  if (!report->ptxas_now) std::fprintf(stderr, "ciq-tuner: ptxas not compared: %s\n", printable(report->ptxas_why).c_str());
  std::set<std::string> keys;
  for (const auto& [id, group] : report->groups)
    for (const auto& e : group.entries) keys.insert(e.key);
  return keys;
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
  std::vector<std::string> keys;
  for (const auto& e : entries)
    if (auto key = parse_digest<16>(e.key)) keys.push_back(digest_bytes(*key));
  return cache::remove_entries(*store, keys);
}

// What one finished new run made of the old entries of `run`: a kernel's
// row is replaced or added to by a verified winner, kept (nothing wins
// now), dropped (--drop-losers) or unchanged. The rows cover the entries
// selected and every other entry of the run the retune changed (the new
// run wrote under its key, or --drop-losers removed it), so that each
// entry changed is in the output.
void conclude_run(const RetuneOptions& o, const RecordedRun& run, const std::string& new_dir, const SummaryResults& results,
                  const std::set<std::string>& keys_before, std::vector<Row>& rows) {
  // Entries name their run by its real path (an --out through a link too).
  std::string command_line = join_path(new_dir, "command-line");
  if (char* real = ::realpath(command_line.c_str(), nullptr)) {
    command_line = real;
    std::free(real);
  }
  auto made = entries_of_run(o.cache_dir, command_line, read_run_id(new_dir));
  auto name_and_kind = [](const cache::Record& r) { return entry_name(r) + "\n" + std::string(cache::kind_name(r.kind)); };
  std::map<std::string, RecordedEntry> new_by_name; // name_and_kind -> the new run's entry
  std::set<std::string> new_keys, new_no_gain; // the new run's entries; those of them without controls
  if (made)
    for (const auto& e : *made) {
      new_by_name.emplace(name_and_kind(e.record), e);
      new_keys.insert(e.key);
      if (e.record.controls.empty()) new_no_gain.insert(e.key);
    }
  // A run of several kernels each judged by its own time (--separately)
  // has a verdict per kernel: each row goes by its kernel's.
  bool per_kernel = !results.kernels.empty();
  auto own = [&](const std::string& kernel) -> const SummaryKernel* {
    for (const auto& k : results.kernels)
      if (k.kernel == kernel) return &k;
    return nullptr;
  };
  // --drop-losers: per kernel, a losing kernel's selected entry; for a
  // whole run that found nothing, every winner of the old run still in the
  // cache. Under this toolkit's keys the new run's "tuned, no gain" took
  // their place (--replaces-run); what is left is removed.
  std::vector<RecordedEntry> losers;
  if (o.drop_losers && per_kernel) {
    for (const auto& e : run.selected)
      if (const SummaryKernel* k = own(e.record.kernel);
          e.record.kind == cache::RecordKind::kernel && k && !k->shipped && !e.record.controls.empty() && !new_keys.count(e.key))
        losers.push_back(e);
  } else if (o.drop_losers && !results.shipped) {
    if (auto left = entries_of_run(o.cache_dir, run.command_line, run.run_id))
      for (auto& e : *left)
        if (!e.record.controls.empty()) losers.push_back(e);
  }
  std::set<std::string> removed;
  if (!losers.empty()) {
    if (auto r = remove_entries(o.cache_dir, losers); !r) {
      std::fprintf(stderr, "ciq-tuner: warning: could not remove the old entries: %s\n", printable(r.error().message).c_str());
    } else {
      for (const auto& e : losers) removed.insert(e.key);
      std::fprintf(stderr, "ciq-tuner: removed %zu old entr%s: nothing beats the default now (--drop-losers)\n", losers.size(),
                   losers.size() == 1 ? "y" : "ies");
    }
  }
  std::set<std::string> selected;
  for (const auto& e : run.selected) selected.insert(e.key);
  // Also an old entry the new run wrote a counterpart of under another key
  // (this toolkit's): that entry is new in the cache.
  std::vector<RecordedEntry> covered;
  for (const auto& e : run.all)
    if (selected.count(e.key) || new_keys.count(e.key) || removed.count(e.key) ||
        new_by_name.count(name_and_kind(e.record)))
      covered.push_back(e);

  for (auto& entries : kernel_rows(covered)) {
    Row row = row_of(std::move(entries), results.objective);
    row.run_dir = new_dir;
    std::size_t gone = 0, superseded = 0; // removed; a winner whose key now records "tuned, no gain"
    bool had_controls = false;
    for (std::size_t i = 0; i < row.entries.size(); ++i) {
      const RecordedEntry& e = row.entries[i];
      row.fates[i] = removed.count(e.key) ? Fate::removed : new_keys.count(e.key) ? Fate::replaced : Fate::kept;
      gone += row.fates[i] == Fate::removed;
      superseded += row.fates[i] == Fate::replaced && !e.record.controls.empty() && new_no_gain.count(e.key);
      had_controls |= !e.record.controls.empty();
    }
    // The new run's entries for this row's: the kernel's first.
    std::vector<RecordedEntry> counterparts;
    for (const auto& e : row.entries)
      if (auto it = new_by_name.find(name_and_kind(e.record)); it != new_by_name.end()) counterparts.push_back(it->second);
    if (!counterparts.empty() && entry_name(counterparts.front().record) == row.kernel) row.new_key = counterparts.front().key;
    const RecordedEntry& first = row.entries.front();
    const SummaryKernel* k = per_kernel ? own(first.record.kernel) : nullptr;
    bool judged = !per_kernel || (first.record.kind == cache::RecordKind::kernel && k);
    bool shipped = per_kernel ? k && k->shipped : results.shipped;
    std::string controls = per_kernel ? (k ? k->controls : "") : results.controls;
    std::string verdict = per_kernel ? (k ? k->verdict : "") : results.verdict;
    // The winner's entry for the kernel: one that holds controls.
    const RecordedEntry* winner = nullptr;
    for (const auto& c : counterparts)
      if (!winner && !c.record.controls.empty()) winner = &c;
    if (!judged) {
      row.verdict = Verdict::unchanged;
      row.reason = "the new run did not judge it: the entry is as it was";
    } else if (shipped && winner) {
      row.new_gain = row_recorded_gain(counterparts, results.objective);
      bool same_key = false;
      for (const auto& e : row.entries) same_key |= e.key == winner->key;
      row.verdict = same_key ? Verdict::replaced : Verdict::added;
      row.reason = same_key ? "by a new verified winner: " + controls
                            : "a new verified winner: " + controls + ", under this toolkit's key " + winner->key.substr(0, 12) +
                                  (keys_before.count(winner->key) ? " (in place of what an earlier retune put there; " : " (") +
                                  "the old entry stays under its own key)";
    } else if (shipped) {
      row.verdict = Verdict::unchanged;
      row.reason = "the new run's winner (" + controls + ") made no entry for it: the entry is as it was";
    } else if (gone || superseded) {
      row.verdict = Verdict::dropped;
      // "the old entry is removed", "its 2 entries now record ...", "1 of its 2 entries is removed"
      auto count = [&](std::size_t n, const char* one, const char* many) {
        std::string who = row.entries.size() == 1 ? std::string("the old entry")
                          : n == row.entries.size() ? "its " + std::to_string(n) + " entries"
                                                    : std::to_string(n) + " of its " + std::to_string(row.entries.size()) + " entries";
        return who + (n == 1 ? one : many);
      };
      std::string parts = superseded ? count(superseded, " now records 'tuned, no gain'", " now record 'tuned, no gain'") : "";
      if (gone) parts += (parts.empty() ? "" : "; ") + count(gone, " is removed", " are removed");
      row.reason = "nothing beats the default now (" + verdict + "): " + parts;
    } else {
      row.verdict = Verdict::kept;
      row.reason = had_controls ? "nothing beats the default now (" + verdict + "): the old entry stays (--drop-losers replaces it by 'tuned, no gain')"
                                : "no gain before, none now (" + verdict + ")";
    }
    rows.push_back(std::move(row));
  }
}

std::string dumped(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The end of a retune: the table on stdout, or one JSON object.
void print_rows(const std::vector<Row>& rows, const std::string& batch, bool json) {
  if (json) {
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json entries = nlohmann::json::array();
      for (std::size_t i = 0; i < r.entries.size(); ++i) {
        nlohmann::json e = entry_json(r.entries[i]);
        e["fate"] = fate_name(r.fates[i]);
        entries.push_back(std::move(e));
      }
      listed.push_back({{"kernel", r.kernel}, {"key", r.key}, {"entries", entries}, {"old_gain", gain_json(r.old_gain)},
                        {"new_gain", gain_json(r.new_gain)}, {"verdict", verdict_name(r.verdict)}, {"reason", r.reason},
                        {"run_dir", r.run_dir}, {"new_key", r.new_key}});
    }
    std::cout << dumped({{"out", batch.empty() ? nlohmann::json(nullptr) : nlohmann::json(batch)}, {"rows", listed}}) << "\n";
    return;
  }
  std::size_t width = 6;
  for (const auto& r : rows) width = std::max(width, printable(r.kernel).size());
  std::printf("%-*s  %-7s  %-8s  %-8s  %-9s  %s\n", int(width), "kernel", "entries", "old gain", "new gain", "verdict", "why");
  for (const auto& r : rows)
    std::printf("%-*s  %-7zu  %-8s  %-8s  %-9s  %s\n", int(width), printable(r.kernel).c_str(), r.entries.size(), gain_text(r.old_gain).c_str(),
                gain_text(r.new_gain).c_str(), verdict_name(r.verdict), printable(r.reason).c_str());
}

// The end of a dry run: the entries it would skip (the runs are printed as
// they are planned), or one JSON object with both.
void print_skipped(const std::vector<Row>& rows, const nlohmann::json& planned, bool json) {
  if (json) {
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json entries = nlohmann::json::array();
      for (const auto& e : r.entries) entries.push_back(entry_json(e));
      skipped.push_back({{"kernel", r.kernel}, {"key", r.key}, {"entries", entries}, {"reason", r.reason}});
    }
    std::cout << dumped({{"would_run", planned}, {"skipped", skipped}}) << "\n";
    return;
  }
  for (const auto& r : rows)
    std::printf("# skipped %s (%s%s): %s\n", printable(r.kernel).c_str(), r.key.substr(0, 12).c_str(),
                r.entries.size() > 1 ? (", +" + std::to_string(r.entries.size() - 1) + " entr" + (r.entries.size() == 2 ? "y" : "ies") + " of its run").c_str() : "",
                printable(r.reason).c_str());
}

} // namespace

int run_retune(const RetuneOptions& given) {
  RetuneOptions o = given;
  if (!o.gpu.empty() && !o.stale) return fail(make_error(ciq::errc::usage, "--gpu names the GPU model --stale compares entries with: give --stale too"));
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
    if (!o.kernels.empty()) return e.record.kind == cache::RecordKind::kernel && glob_match(o.kernels, e.record.kernel);
    return true;
  });
  if (!runs) return fail(runs.error().message);
  if (runs->empty()) {
    std::fprintf(stderr, "ciq-tuner: no entry of %s is selected%s: nothing to tune again\n", o.cache_dir.c_str(),
                 o.stale ? " (none is stale)" : "");
    if (o.json && o.dry_run) std::cout << nlohmann::json{{"would_run", nlohmann::json::array()}, {"skipped", nlohmann::json::array()}}.dump() << "\n";
    else if (o.json) std::cout << nlohmann::json{{"out", nullptr}, {"rows", nlohmann::json::array()}}.dump() << "\n";
    return 0;
  }

  std::vector<Row> rows;
  nlohmann::json planned = nlohmann::json::array();
  std::set<std::string> taken;
  std::size_t runnable = 0;
  std::vector<std::pair<const RecordedRun*, SavedRun>> to_run;
  std::map<std::string, std::vector<std::string>> published; // --publish URL -> the runs (command lines) that gave it and shipped again
  for (const auto& run : *runs) {
    auto saved = read_saved_run(run.command_line, run.run_id);
    if (!saved) {
      add_unchanged_rows(run, Verdict::skipped, saved.error().message, "", rows);
      continue;
    }
    to_run.emplace_back(&run, std::move(*saved));
    ++runnable;
  }
  // Made only when something runs in it (a dry run's is checked only).
  auto batch = batch_directory(o.out_dir, "ciq-retune", !o.dry_run && !to_run.empty());
  if (!batch) return fail(batch.error());
  // What the cache held before: a new winner under a key already there
  // (an earlier retune's) replaced it, and the table says so.
  std::set<std::string> keys_before;
  if (!o.dry_run)
    if (auto keys = entry_keys(o.cache_dir)) keys_before = std::move(*keys);
  bool any_failed = false;
  std::size_t i = 0;
  // An interrupt stops the run in progress (it saves its state) and this:
  // the runs before it finished and shipped; what to do about that one.
  // One buffer, its address handed once: the handler never reads freed text.
  static char interrupted[4096] = "";
  if (!o.dry_run) kill_children_on_interrupt(interrupted, /*forward=*/true);
  for (auto& [run, saved] : to_run) {
    std::string new_dir = join_path(*batch, new_run_name(*batch, run->command_line, taken));
    // A run saved with --no-ship is tuned again to replace its entries: it
    // ships, to the cache read; not to a team's Redis (--publish): that is
    // for you to do once you have seen what it found (said at the end).
    std::vector<std::string> args =
        without_options(saved.arguments, "run",
                        {"out", "cache-dir", "resume", "publish", "replaces-run", "discovery-from", "json", "no-ship"});
    args.insert(args.end(), {"--out", new_dir, "--json", "--cache-dir", o.cache_dir});
    // --drop-losers: where nothing wins now, the new run's "tuned, no gain"
    // takes the old winner's place (a campaign then does not tune it again).
    if (o.drop_losers) args.insert(args.end(), {"--replaces-run", run->command_line});
    std::string names = row_names(*run);
    if (o.dry_run) {
      std::vector<std::string> argv{self_executable()};
      argv.insert(argv.end(), args.begin(), args.end());
      if (o.json) {
        nlohmann::json entries = nlohmann::json::array();
        for (const auto& e : run->selected) entries.push_back(entry_json(e));
        planned.push_back({{"command_line", run->command_line}, {"working_directory", saved.working_directory}, {"argv", argv},
                           {"entries", entries}});
      } else {
        std::printf("# %s (recorded in %s)\n", printable(names).c_str(), printable(run->command_line).c_str());
        if (std::string url = publish_url_of(saved.arguments); !url.empty())
          std::printf("# made with --publish %s: tuned again, it ships to the local cache only (then: %s)\n", printable(url).c_str(),
                      shown_argv({"ciq-cache", "push", url, "--cache-dir", o.cache_dir}).c_str());
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
      add_unchanged_rows(*run, Verdict::failed, outcome.failure, new_dir, rows);
      continue;
    }
    const SummaryResults& results = *outcome.summary->results;
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s\n", i, runnable, results.shipped ? ("shipped " + results.controls).c_str() : "nothing shipped",
                 printable(results.verdict).c_str());
    conclude_run(o, *run, new_dir, results, keys_before, rows);
    if (std::string url = publish_url_of(saved.arguments); !url.empty() && results.shipped) published[url].push_back(run->command_line);
  }

  if (o.dry_run) print_skipped(rows, planned, o.json);
  else print_rows(rows, to_run.empty() ? "" : *batch, o.json);
  // Runs that published what they shipped: this time it is in the local cache only.
  for (const auto& [url, lines] : published)
    std::fprintf(stderr, "ciq-tuner: note: %zu run%s made with --publish %s (%s%s) shipped again to %s only; to publish the new entries: %s%s\n",
                 lines.size(), lines.size() == 1 ? "" : "s", printable(url).c_str(), printable(lines.front()).c_str(),
                 lines.size() > 1 ? ", ..." : "", printable(o.cache_dir).c_str(), shown_argv({"ciq-cache", "push", url, "--cache-dir", o.cache_dir}).c_str(),
                 url.find("***") != std::string::npos ? " (the password in place of ***)" : "");
  return any_failed ? 1 : 0;
}

} // namespace ciq::tuner
