#include "tuner/commands/recorded_runs.h"

#include "cache/store.h"
#include "cache/tuned_on.h"
#include "tuner/measure/command.h"
#include "tuner/run/options.h"
#include "tuner/rundir/command_line.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// Every readable record of the cache, in key order; `visit` returns false to stop.
Result<void> for_each_entry(const std::string& cache_dir, const std::function<void(RecordedEntry)>& visit) {
  auto store = cache::Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  if (!*store) return {};
  return (*store)->for_each(cache::Table::records, [&](std::string_view k, std::string_view v) {
    // An unreadable record is `ciq-cache verify`'s to report: it names no run.
    if (auto r = cache::parse_record(v, "record " + bytes_to_hex(k))) visit(RecordedEntry{bytes_to_hex(k), std::move(*r)});
    return true;
  });
}

// "why" as the reason a run is skipped.
Error skipped(const std::string& why) { return Error{ciq::errc::skipped, why}; }

} // namespace

std::string entry_name(const cache::Record& r) {
  if (r.kind == cache::RecordKind::unit) return r.unit.empty() ? "(unit)" : r.unit;
  return r.kernel.empty() ? "(module)" : r.kernel;
}

std::vector<std::vector<RecordedEntry>> kernel_rows(const std::vector<RecordedEntry>& entries) {
  std::vector<std::vector<RecordedEntry>> rows;
  std::vector<RecordedEntry> others; // units first, then modules
  for (const auto& e : entries)
    if (e.record.kind == cache::RecordKind::kernel) rows.push_back({e});
  for (const auto& e : entries)
    if (e.record.kind == cache::RecordKind::unit) others.push_back(e);
  for (const auto& e : entries)
    if (e.record.kind != cache::RecordKind::kernel && e.record.kind != cache::RecordKind::unit) others.push_back(e);
  if (others.empty()) return rows;
  if (rows.empty()) rows.emplace_back();
  rows.front().insert(rows.front().end(), others.begin(), others.end());
  return rows;
}

Result<std::vector<RecordedRun>> recorded_runs(const std::string& cache_dir, const std::function<bool(const RecordedEntry&)>& select) {
  std::vector<RecordedRun> runs;
  std::map<std::string, std::size_t> index; // command line, run id -> runs[i]
  auto run_of = [](const cache::TunedOn& on) { return on.command_line + '\n' + on.run_id; };
  std::vector<RecordedEntry> entries;
  if (auto walked = for_each_entry(cache_dir, [&](RecordedEntry e) { entries.push_back(std::move(e)); }); !walked) return walked.error();
  for (const auto& e : entries) {
    if (!select(e)) continue;
    cache::TunedOn on = cache::tuned_on(e.record);
    auto [it, added] = index.try_emplace(run_of(on), runs.size());
    if (added) runs.push_back(RecordedRun{on.command_line, on.run_id, {}, {}});
    runs[it->second].selected.push_back(e);
  }
  for (const auto& e : entries)
    if (auto it = index.find(run_of(cache::tuned_on(e.record))); it != index.end()) runs[it->second].all.push_back(e);
  return runs;
}

Result<std::set<std::string>> entry_keys(const std::string& cache_dir) {
  std::set<std::string> keys;
  if (auto walked = for_each_entry(cache_dir, [&](RecordedEntry e) { keys.insert(std::move(e.key)); }); !walked) return walked.error();
  return keys;
}

Result<std::vector<RecordedEntry>> entries_of_run(const std::string& cache_dir, const std::string& command_line,
                                                  const std::string& run_id) {
  std::vector<RecordedEntry> out;
  auto walked = for_each_entry(cache_dir, [&](RecordedEntry e) {
    cache::TunedOn on = cache::tuned_on(e.record);
    if (!command_line.empty() && on.command_line == command_line && on.run_id == run_id) out.push_back(std::move(e));
  });
  if (!walked) return walked.error();
  return out;
}

spaces::ControlSet run_controls(const std::vector<RecordedEntry>& entries) {
  spaces::ControlSet set;
  for (const auto& e : entries) {
    const spaces::ControlSet& c = e.record.controls;
    if (c.empty()) continue;
    if (e.record.kind == cache::RecordKind::unit) {
      set.nvcc_space = c.space;
      set.nvcc.insert(c.options.begin(), c.options.end());
      continue;
    }
    set.space = c.space;
    set.options.insert(c.options.begin(), c.options.end());
    for (const auto& [kernel, knobs] : c.kernels) set.kernels[kernel].insert(knobs.begin(), knobs.end());
    if (c.acf) set.acf = c.acf;
  }
  return set;
}

Result<SavedRun> read_saved_run(const std::string& path, const std::string& run_id) {
  if (path.empty()) return skipped("made by hand (ciq-cache put): no run is recorded to tune it again");
  if (path.front() != '/') return skipped("its run's command line " + path + " is not an absolute path (an entry edited by hand): not run");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return skipped("its run's command line " + path + " is " + (errno == ENOENT ? "missing" : std::string("unreadable: ") + std::strerror(errno)) +
                   " (an entry from a pack or another machine, or a run directory since removed)");
  // What it reads and refuses is what --resume reads and refuses.
  auto start = load_saved_start(dir_name(path));
  if (!start) return skipped(start.error().message + (start.error().code == ciq::errc::unsafe ? ": not run" : ""));
  // An --out path used again (here, or on the machine a pack came from)
  // holds another run: its commands are not the ones that made the entry.
  // An entry of before run ids (none recorded) is not of a run that has one.
  if (start->run_id != run_id)
    return skipped("its run directory " + start->dir + " now holds another run (run-id " +
                   (start->run_id.empty() ? std::string("none") : start->run_id.substr(0, 12)) + ", the entry's " +
                   (run_id.empty() ? std::string("none: it is older than run ids") : run_id.substr(0, 12)) + "): the run that made it is gone");
  if (start->arguments.empty() || start->arguments.front() != "run")
    return skipped(path + " is not the command line of a `ciq-tuner run`");
  if (start->working_directory.empty())
    return skipped("its run saved no working-directory file beside " + path + ": its commands' relative paths mean nothing elsewhere");
  return SavedRun{std::move(start->arguments), std::move(start->working_directory)};
}

namespace {

// The bytes of the UTF-8 character that starts at s[i] (1 for a byte that
// cannot start one: printable() then judges it alone).
std::size_t character_size(std::string_view s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
  return i + n <= s.size() ? n : 1;
}

// `word` as one sh word (see shown_argv()).
std::string sh_word(std::string_view word) {
  bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+=.,/:@%") ==
                                    std::string::npos;
  if (plain) return std::string(word);
  std::string out, quoted; // `quoted`: the printable text not yet written, inside '...'
  auto flush = [&] {
    if (!quoted.empty()) out += shell_quoted(quoted);
    quoted.clear();
  };
  for (std::size_t i = 0; i < word.size();) {
    std::size_t n = character_size(word, i);
    std::string_view character = word.substr(i, n);
    // A newline stands as it is inside '...': "$(printf '\012')" would lose
    // it where it ends the word (command substitution drops trailing
    // newlines), and it does nothing to a terminal.
    if (is_printable(character) || character == "\n") {
      quoted += character;
    } else {
      flush();
      out += "\"$(printf '";
      for (unsigned char byte : character) {
        char octal[8];
        std::snprintf(octal, sizeof octal, "\\%03o", unsigned(byte));
        out += octal;
      }
      out += "')\"";
    }
    i += n;
  }
  flush();
  return out.empty() ? "''" : out;
}

} // namespace

std::string shown_argv(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) line += (line.empty() ? "" : " ") + sh_word(word);
  return line;
}


Result<std::string> batch_directory(const std::string& dir, const char* prefix, bool make) {
  if (make) {
    auto made = output_directory(dir, prefix);
    if (!made) return made.error();
    if (!dir.empty())
      if (auto own = make_own_directory(*made); !own) return own.error();
    return made;
  }
  std::string name = dir;
  if (name.empty()) {
    char stamp[64];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "-%Y%m%d-%H%M%S", std::localtime(&now));
    name = prefix + std::string(stamp);
  }
  if (name[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) name = join_path(cwd, name);
  }
  // What making it would refuse is refused now: a dry run's --out too.
  if (auto secure = check_place_to_make(name); !secure) return secure.error();
  struct stat st {};
  if (::lstat(name.c_str(), &st) == 0)
    if (auto own = check_own_directory(name); !own) return own.error();
  return name;
}

Result<std::string> existing_cache(const std::string& given) {
  std::string dir = given.empty() ? cache_directory() : given;
  if (!dir.empty() && dir[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) dir = join_path(cwd, dir);
  }
  if (!cache::Store::exists(dir))
    return make_error(ciq::errc::usage, "no cache at " + dir + " (give --cache-dir DIR or set CIQ_CACHE_DIR)");
  return dir;
}

double RecordedGain::gain() const { return lower_is_better == 0 ? NAN : relative_gain(baseline, tuned, lower_is_better); }

RecordedGain recorded_gain(const cache::Record& r, const std::string& objective) {
  RecordedGain g;
  std::size_t k = 0;
  for (std::size_t i = 0; i < 16; ++i)
    if (!objective.empty() && r.provenance_value("objective" + std::to_string(i)) == objective) {
      k = i;
      break;
    }
  std::string n = std::to_string(k);
  g.objective = r.provenance_value("objective" + n);
  auto number = [](const std::string& text) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    return text.empty() || *end ? NAN : v;
  };
  g.baseline = number(r.provenance_value("baseline" + n));
  g.tuned = number(r.provenance_value("tuned" + n));
  // Only a verified winner says which way was better: it beat the default.
  bool winner = r.provenance_value("result") == cache::record_result::tuned && !r.controls.empty();
  if (winner && g.tuned < g.baseline) g.lower_is_better = 1;
  if (winner && g.tuned > g.baseline) g.lower_is_better = -1;
  return g;
}

double relative_gain(double baseline, double value, int lower_is_better) {
  if (!std::isfinite(baseline) || !std::isfinite(value) || baseline == 0) return NAN;
  double change = (value - baseline) / std::fabs(baseline);
  if (lower_is_better == 0) return std::fabs(change);
  return lower_is_better > 0 ? -change : change;
}

nlohmann::json gain_json(double gain) { return std::isfinite(gain) ? nlohmann::json(gain) : nlohmann::json(nullptr); }

nlohmann::json entry_json(const RecordedEntry& e) { return {{"key", e.key}, {"kind", e.record.kind}, {"name", entry_name(e.record)}}; }

double row_recorded_gain(const std::vector<RecordedEntry>& row, const std::string& objective) {
  for (const auto& e : row)
    if (double g = recorded_gain(e.record, objective).gain(); std::isfinite(g)) return g;
  return NAN;
}

std::string gain_text(double gain) {
  if (!std::isfinite(gain)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100 * gain);
  return text;
}


RerunOutcome run_again(const std::vector<std::string>& arguments, const std::string& working_directory, const std::string& run_dir,
                       const std::string& log) {
  RunOptions run;
  run.argv = {self_executable()};
  run.argv.insert(run.argv.end(), arguments.begin(), arguments.end());
  // Checked again now, not only when the retune started (a directory
  // removed and made again by another user meanwhile), and opened: the run
  // starts in the directory checked, whatever its path names later.
  RerunOutcome outcome;
  auto refuse = [&](const std::string& why) {
    outcome.failure = "not run: the directory the run ran in, " + working_directory + ", " + why;
    return outcome;
  };
  if (auto own = check_command_directory(working_directory); !own) return refuse("is not yours alone (" + own.error().message + ")");
  int dir = ::open(working_directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return refuse(std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(dir, &st) != 0 || (st.st_uid != ::geteuid() && st.st_uid != 0) || !writable_by_others(st.st_mode).empty()) {
    ::close(dir);
    return refuse("changed between its check and its use");
  }
  run.cwd_fd = dir;
  run.capture_stdout = run.stdin_null = true;
  run.stderr_file = log;
  run.own_process_group = true; // an interrupt reaches it through us, and it cancels its own jobs
  run.set_env = {{env_name(Env::campaign_pid), std::to_string(::getpid())}}; // it ends if we die
  auto ran = run_process(run);
  ::close(dir);
  // Its outcome from its summary only (summary.json, else the one it
  // printed on stdout before its directory was its own); its stderr is
  // the log, for people.
  std::optional<RunSummary> summary = child_summary(run_dir, ran ? std::string_view(ran->out) : std::string_view());
  if (ran && ran->succeeded() && summary && summary->outcome == RunOutcome::finished && summary->results) {
    outcome.summary = std::move(*summary);
    return outcome;
  }
  if (summary && summary->outcome == RunOutcome::failed && !summary->reason.empty()) {
    outcome.failure = summary->reason.substr(0, summary->reason.find('\n'));
    return outcome;
  }
  if (!ran) {
    outcome.failure = "ciq-tuner run could not start: " + ran.error().message;
    return outcome;
  }
  outcome.failure = "ciq-tuner run " + (ran->succeeded() ? std::string("wrote no finished summary") : ran->describe() + " and left no summary") +
                    ": see its log " + log;
  return outcome;
}

} // namespace ciq::tuner
