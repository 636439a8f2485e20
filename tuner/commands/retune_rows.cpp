#include "tuner/commands/retune_rows.h"

#include "cache/entries.h"
#include "cache/store.h"
#include "tuner/rundir/command_line.h"
#include "utils/files.h"
#include "utils/text.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

namespace ciq::tuner {

namespace {

const char* verdict_name(RetuneVerdict v) {
  switch (v) {
  case RetuneVerdict::replaced: return "replaced";
  case RetuneVerdict::added: return "added";
  case RetuneVerdict::kept: return "kept";
  case RetuneVerdict::dropped: return "dropped";
  case RetuneVerdict::unchanged: return "unchanged";
  case RetuneVerdict::skipped: return "skipped";
  case RetuneVerdict::failed: return "failed";
  }
  return "failed";
}

const char* fate_name(EntryFate f) {
  switch (f) {
  case EntryFate::replaced: return "replaced";
  case EntryFate::kept: return "kept";
  case EntryFate::removed: return "removed";
  }
  return "kept";
}

// A row for the old entries `entries`, all kept as they are.
RetuneRow row_of(std::vector<RecordedEntry> entries, const std::string& objective = "") {
  RetuneRow row;
  row.kernel = entry_name(entries.front().record), row.key = entries.front().key;
  row.old_gain = row_recorded_gain(entries, objective);
  row.fates.assign(entries.size(), EntryFate::kept);
  row.entries = std::move(entries);
  return row;
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

// A cache entry's kernel (or unit) name and kind: what an old entry and
// the new run's counterpart of it share, whatever their keys.
std::string name_and_kind(const cache::Record& r) { return entry_name(r) + "\n" + std::string(cache::kind_name(r.kind)); }

// The new run's entries in the cache: by name_and_kind, their keys, and
// those of them without controls ("tuned, no gain").
struct NewEntries {
  std::map<std::string, RecordedEntry> by_name;
  std::set<std::string> keys, no_gain;
};

NewEntries new_entries_of(const RetuneOptions& o, const std::string& new_dir) {
  // Entries name their run by its real path (an --out through a link too).
  std::string command_line = join_path(new_dir, "command-line");
  if (char* real = ::realpath(command_line.c_str(), nullptr)) {
    command_line = real;
    std::free(real);
  }
  NewEntries made;
  if (auto entries = entries_of_run(o.cache_dir, command_line, read_run_id(new_dir)))
    for (const auto& e : *entries) {
      made.by_name.emplace(name_and_kind(e.record), e);
      made.keys.insert(e.key);
      if (e.record.controls.empty()) made.no_gain.insert(e.key);
    }
  return made;
}

// What the new run said of the kernel of `first` (a row's first entry): a
// run of several kernels each judged by its own time (--separately) has a
// verdict per kernel, and judged only the kernel entries of its kernels.
struct KernelSaid {
  bool judged = false, shipped = false;
  std::string controls, verdict;
};

KernelSaid said_of(const SummaryResults& results, const RecordedEntry& first) {
  if (results.kernels.empty()) return {true, results.shipped, results.controls, results.verdict};
  for (const auto& k : results.kernels)
    if (k.kernel == first.record.kernel) return {first.record.kind == cache::RecordKind::kernel, k.shipped, k.controls, k.verdict};
  return {};
}

// --drop-losers: per kernel (--separately), a losing kernel's selected
// entry; for a whole run that found nothing, every winner of the old run
// still in the cache. Under this toolkit's keys the new run's "tuned, no
// gain" took their place (--replaces-run); what is left is removed. The
// keys removed.
std::set<std::string> drop_losers(const RetuneOptions& o, const RecordedRun& run, const SummaryResults& results,
                                  const std::set<std::string>& new_keys) {
  std::vector<RecordedEntry> losers;
  if (o.drop_losers && !results.kernels.empty()) {
    for (const auto& e : run.selected) {
      KernelSaid k = said_of(results, e);
      if (k.judged && !k.shipped && !e.record.controls.empty() && !new_keys.count(e.key)) losers.push_back(e);
    }
  } else if (o.drop_losers && !results.shipped) {
    if (auto left = entries_of_run(o.cache_dir, run.command_line, run.run_id))
      for (auto& e : *left)
        if (!e.record.controls.empty()) losers.push_back(e);
  }
  std::set<std::string> removed;
  if (losers.empty()) return removed;
  if (auto r = remove_entries(o.cache_dir, losers); !r) {
    std::fprintf(stderr, "ciq-tuner: warning: could not remove the old entries: %s\n", printable(r.error().message).c_str());
    return removed;
  }
  for (const auto& e : losers) removed.insert(e.key);
  std::fprintf(stderr, "ciq-tuner: removed %zu old entr%s: nothing beats the default now (--drop-losers)\n", losers.size(),
               losers.size() == 1 ? "y" : "ies");
  return removed;
}

// How a row's entries fared: removed, superseded (a winner whose key now
// records "tuned, no gain"), and whether any held controls before.
struct RowFates {
  std::size_t gone = 0, superseded = 0;
  bool had_controls = false;
};

// The verdict and reason of `row` from what the new run said of its kernel
// and its entries' `counterparts` in the new run (the kernel's first).
void judge_row(RetuneRow& row, const KernelSaid& said, const std::vector<RecordedEntry>& counterparts, const RowFates& fates,
               const std::string& objective, const std::set<std::string>& keys_before) {
  // The winner's entry for the kernel: one that holds controls.
  const RecordedEntry* winner = nullptr;
  for (const auto& c : counterparts)
    if (!winner && !c.record.controls.empty()) winner = &c;
  if (!said.judged) {
    row.verdict = RetuneVerdict::unchanged;
    row.reason = "the new run did not judge it: the entry is as it was";
  } else if (said.shipped && winner) {
    row.new_gain = row_recorded_gain(counterparts, objective);
    bool same_key = false;
    for (const auto& e : row.entries) same_key |= e.key == winner->key;
    row.verdict = same_key ? RetuneVerdict::replaced : RetuneVerdict::added;
    row.reason = same_key ? "by a new verified winner: " + said.controls
                          : "a new verified winner: " + said.controls + ", under this toolkit's key " + winner->key.substr(0, 12) +
                                (keys_before.count(winner->key) ? " (in place of what an earlier retune put there; " : " (") +
                                "the old entry stays under its own key)";
  } else if (said.shipped) {
    row.verdict = RetuneVerdict::unchanged;
    row.reason = "the new run's winner (" + said.controls + ") made no entry for it: the entry is as it was";
  } else if (fates.gone || fates.superseded) {
    row.verdict = RetuneVerdict::dropped;
    // "the old entry is removed", "its 2 entries now record ...", "1 of its 2 entries is removed"
    auto count = [&](std::size_t n, const char* one, const char* many) {
      std::string who = row.entries.size() == 1 ? std::string("the old entry")
                        : n == row.entries.size() ? "its " + std::to_string(n) + " entries"
                                                  : std::to_string(n) + " of its " + std::to_string(row.entries.size()) + " entries";
      return who + (n == 1 ? one : many);
    };
    std::string parts = fates.superseded ? count(fates.superseded, " now records 'tuned, no gain'", " now record 'tuned, no gain'") : "";
    if (fates.gone) parts += (parts.empty() ? "" : "; ") + count(fates.gone, " is removed", " are removed");
    row.reason = "nothing beats the default now (" + said.verdict + "): " + parts;
  } else {
    row.verdict = RetuneVerdict::kept;
    row.reason = fates.had_controls
                     ? "nothing beats the default now (" + said.verdict + "): the old entry stays (--drop-losers replaces it by 'tuned, no gain')"
                     : "no gain before, none now (" + said.verdict + ")";
  }
}

std::string dumped(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

} // namespace

void add_unchanged_rows(const RecordedRun& run, RetuneVerdict verdict, const std::string& reason, const std::string& run_dir,
                        std::vector<RetuneRow>& rows) {
  for (auto& entries : kernel_rows(run.selected)) {
    RetuneRow row = row_of(std::move(entries));
    row.verdict = verdict;
    row.reason = reason;
    row.run_dir = run_dir;
    rows.push_back(std::move(row));
  }
}

std::string row_names(const RecordedRun& run) {
  std::string names;
  for (const auto& entries : kernel_rows(run.selected)) names += (names.empty() ? "" : ", ") + entry_name(entries.front().record);
  return names;
}

void conclude_run(const RetuneOptions& o, const RecordedRun& run, const std::string& new_dir, const SummaryResults& results,
                  const std::set<std::string>& keys_before, std::vector<RetuneRow>& rows) {
  NewEntries made = new_entries_of(o, new_dir);
  std::set<std::string> removed = drop_losers(o, run, results, made.keys);
  std::set<std::string> selected;
  for (const auto& e : run.selected) selected.insert(e.key);
  // Also an old entry the new run wrote a counterpart of under another key
  // (this toolkit's): that entry is new in the cache.
  std::vector<RecordedEntry> covered;
  for (const auto& e : run.all)
    if (selected.count(e.key) || made.keys.count(e.key) || removed.count(e.key) || made.by_name.count(name_and_kind(e.record)))
      covered.push_back(e);
  for (auto& entries : kernel_rows(covered)) {
    RetuneRow row = row_of(std::move(entries), results.objective);
    row.run_dir = new_dir;
    RowFates fates;
    for (std::size_t i = 0; i < row.entries.size(); ++i) {
      const RecordedEntry& e = row.entries[i];
      row.fates[i] = removed.count(e.key) ? EntryFate::removed : made.keys.count(e.key) ? EntryFate::replaced : EntryFate::kept;
      fates.gone += row.fates[i] == EntryFate::removed;
      fates.superseded += row.fates[i] == EntryFate::replaced && !e.record.controls.empty() && made.no_gain.count(e.key);
      fates.had_controls |= !e.record.controls.empty();
    }
    std::vector<RecordedEntry> counterparts;
    for (const auto& e : row.entries)
      if (auto it = made.by_name.find(name_and_kind(e.record)); it != made.by_name.end()) counterparts.push_back(it->second);
    if (!counterparts.empty() && entry_name(counterparts.front().record) == row.kernel) row.new_key = counterparts.front().key;
    judge_row(row, said_of(results, row.entries.front()), counterparts, fates, results.objective, keys_before);
    rows.push_back(std::move(row));
  }
}

void print_rows(const std::vector<RetuneRow>& rows, const std::string& batch, bool json) {
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

void print_skipped(const std::vector<RetuneRow>& rows, const nlohmann::json& planned, bool json) {
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

} // namespace ciq::tuner
