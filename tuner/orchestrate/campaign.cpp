#include "tuner/orchestrate/campaign.h"

#include "tuner/measure/executor.h"
#include "spaces/control_set.h"
#include "tuner/orchestrate/captures.h"
#include "tuner/orchestrate/discovery.h"
#include "tuner/orchestrate/profile.h"
#include "tuner/orchestrate/program_check.h"
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/summary.h"
#include "tuner/measure/command.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/json.h"
#include "utils/process.h"
#include "utils/text.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace ciq::tuner {

namespace {

/// Where a kernel's run stands: not run (or interrupted), finished (its
/// summary.json holds results), or could not tune.
enum class KernelState { pending, done, failed };

const char* state_name(KernelState s) {
  switch (s) {
  case KernelState::pending: return "pending";
  case KernelState::done: return "done";
  case KernelState::failed: return "failed";
  }
  return "pending";
}

/// What one kernel's run said (its summary.json), or why it said nothing.
struct KernelResult {
  std::string kernel, run_dir;
  KernelState state = KernelState::pending;
  std::string verdict, controls, error, objective;
  double baseline = NAN, best = NAN;
  double share = NAN; // of the program's GPU time (--from-profile)
  bool shipped = false;
  int evaluations = 0, invalid = 0;
  // Tuned by replay: the replay run's directory and the change it measured
  // (replay_change), before the program confirmed it (change()); "" / NaN
  // when tuned by program runs only. replay_note: why replay did not serve.
  std::string replay_dir, replay_note, replay_controls;  // replay_controls: what the replay found
  double replay_change = NAN;
  double seconds = NAN, replay_seconds = NAN;  // wall time of its runs (this attempt): all, and the replay's
};

/// Seconds since `start`, for the wall times the campaign reports.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string number_json(double v) {
  if (!std::isfinite(v)) return "null";
  return format_number(v);
}

/// The relative change of the kernel's objective (best vs baseline).
double change(const KernelResult& r) {
  if (!std::isfinite(r.baseline) || !std::isfinite(r.best) || r.baseline == 0) return NAN;
  return (r.best - r.baseline) / r.baseline;
}

/// What the kernel's change is worth to the program's GPU time: its share
/// times its change, when it shipped (a winner not shipped changes nothing).
double program_change(const KernelResult& r) {
  if (!std::isfinite(r.share)) return NAN;
  return r.shipped ? r.share * change(r) : 0.0;
}

std::string percent(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, 100 * v);
  return buf;
}

std::string to_json(const std::vector<KernelResult>& results) {
  std::string j = "{\"format\":\"ciq-campaign/1\",\"kernels\":[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const KernelResult& r = results[i];
    j += std::string(i ? "," : "") + "{\"kernel\":" + json_string(r.kernel) + ",\"run_dir\":" + json_string(r.run_dir) +
         ",\"state\":" + json_string(state_name(r.state)) + ",\"verdict\":" + json_string(r.verdict) +
         ",\"objective\":" + json_string(r.objective) + ",\"share\":" + number_json(r.share) +
         ",\"program_change\":" + number_json(program_change(r)) + ",\"baseline\":" + number_json(r.baseline) +
         ",\"best\":" + number_json(r.best) + ",\"shipped\":" + (r.shipped ? "true" : "false") +
         ",\"controls\":" + json_string(r.controls) + ",\"evaluations\":" + std::to_string(r.evaluations) +
         ",\"invalid\":" + std::to_string(r.invalid) + ",\"error\":" + json_string(r.error) +
         ",\"tuned_by\":" + json_string(r.replay_dir.empty() ? "program" : "replay") + ",\"replay_dir\":" + json_string(r.replay_dir) +
         ",\"replay_change\":" + number_json(r.replay_change) + ",\"replay_note\":" + json_string(r.replay_note) +
         ",\"seconds\":" + number_json(r.seconds) + ",\"replay_seconds\":" + number_json(r.replay_seconds) + "}";
  }
  return j + "]}\n";
}

/// (best - baseline) / baseline of a finished run's preferred objective.
double relative_change(const SummaryResults& s) {
  if (!std::isfinite(s.baseline) || !std::isfinite(s.best) || s.baseline == 0) return NAN;
  return (s.best - s.baseline) / s.baseline;
}

/// A finished run's results (its summary.json) into `r`, which is then
/// done; false when the run has no results (not run, or it failed before its
/// search ended).
/// A run of several kernels (--together: `run --separately`) gives each its
/// own part of the summary; false when the kernel has none there.
bool take_results(KernelResult& r, const std::optional<RunSummary>& summary) {
  if (!summary || !summary->results) return false;
  const SummaryResults& s = *summary->results;
  const SummaryKernel* own = nullptr;
  for (const auto& k : s.kernels)
    if (k.kernel == r.kernel) own = &k;
  if (!s.kernels.empty() && !own) return false;
  r.state = KernelState::done;
  r.verdict = own ? own->verdict : s.verdict;
  r.controls = own ? own->controls : s.controls;
  r.objective = s.objective;
  r.baseline = own ? own->baseline : s.baseline;
  r.best = own ? own->best : s.best;
  r.shipped = own ? own->shipped : s.shipped;
  r.evaluations = s.evaluations;
  r.invalid = s.invalid;
  r.error.clear();
  return true;
}

/// <run dir>/summary.json; none when absent or unreadable (the run's log
/// then says what happened).
std::optional<RunSummary> summary_of(const KernelResult& r) {
  auto summary = read_summary(r.run_dir);
  return summary ? std::move(*summary) : std::nullopt;
}

std::string change_text(const KernelResult& r) { return percent(change(r), "%+.1f %%"); }

// A kernel's name in the table: printable(), at most 48 bytes, cut at the
// start of a character (never inside its UTF-8 bytes).
std::string table_name(const std::string& kernel) {
  std::string shown = printable(kernel);
  if (shown.size() <= 48) return shown;
  std::size_t cut = 48;
  while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xc0) == 0x80) --cut;
  return shown.substr(0, cut);
}

void print_table(const std::vector<KernelResult>& results) {
  std::size_t width = 6;
  bool shares = false;
  for (const auto& r : results) {
    width = std::max(width, table_name(r.kernel).size());
    shares |= std::isfinite(r.share);
  }
  if (shares)
    std::fprintf(stderr, "\n%-*s  %6s  %-8s  %-8s  %-8s  %-7s  %s\n", int(width), "kernel", "share", "replay", "change", "program",
                 "shipped", "verdict");
  else
    std::fprintf(stderr, "\n%-*s  %-8s  %-10s  %s\n", int(width), "kernel", "change", "shipped", "verdict");
  double total = 0;
  for (const auto& r : results) {
    std::string verdict = printable(r.state == KernelState::done ? r.verdict
                                                                  : state_name(r.state) + (r.error.empty() ? "" : ": " + r.error));
    if (shares) {
      if (std::isfinite(program_change(r))) total += program_change(r);
      std::fprintf(stderr, "%-*s  %6s  %-8s  %-8s  %-8s  %-7s  %s\n", int(width), table_name(r.kernel).c_str(),
                   percent(r.share, "%.1f%%").c_str(), percent(r.replay_change, "%+.1f %%").c_str(), change_text(r).c_str(),
                   percent(program_change(r), "%+.2f %%").c_str(), r.shipped ? "yes" : "no", verdict.c_str());
    } else {
      std::fprintf(stderr, "%-*s  %-8s  %-10s  %s\n", int(width), table_name(r.kernel).c_str(), change_text(r).c_str(),
                   r.shipped ? "yes" : "no", verdict.c_str());
    }
  }
  if (shares) {
    std::fprintf(stderr, "program: %s of its GPU time, estimated from the shipped kernels' changes (confirm with fresh runs)\n",
                 percent(total, "%+.2f %%").c_str());
    std::fprintf(stderr, "replay: the kernel's change replayed alone; change: in the program (a replay winner is shipped only "
                         "when it wins there too)\n");
  }
}

/// A directory name for the i-th kernel: its number and a readable part.
std::string run_name(std::size_t i, const std::string& kernel) {
  char number[32];
  std::snprintf(number, sizeof number, "%03zu-", i);
  std::string readable;
  for (char c : kernel.substr(0, 40)) readable += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return number + readable;
}

} // namespace

std::string exact_glob(const std::string& name) {
  std::string g;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '{' || c == '}' || c == ',') g += std::string("[") + c + "]";
    else g += c;
  }
  return g;
}

namespace {

// Two searches timing on one GPU disturb each other: locally, each
// concurrent search gets GPUs of its own (slot i: the i-th share of --gpus),
// unless a scheduler places the benchmarks (Slurm). There are enough
// (check_campaign_options()).
std::vector<std::string> gpu_sets_for(const CampaignOptions& c) {
  const TuneOptions& o = c.tune;
  std::vector<std::string> sets(std::size_t(c.concurrent));
  if (!campaign_needs_gpus(o, c.concurrent)) return sets;
  for (std::size_t g = 0; g < o.setup.gpus.size(); ++g) {
    std::string& set = sets[g % sets.size()];
    set += (set.empty() ? "" : ",") + o.setup.gpus[g];
  }
  return sets;
}

// --bench as the program a profiling run starts, its placeholders filled
// (`values`) with {workdir} = <dir>/work (made), the first GPU, no controls.
Result<std::vector<std::string>> program_argv(const TuneOptions& o, const std::string& dir,
                                              std::map<std::string, std::string>& values) {
  values = {{"workdir", join_path(dir, "work")}, {"gpu", o.setup.gpus.empty() ? "0" : o.setup.gpus.front()},
            {"controls", "/dev/null"}};
  if (auto made = make_dirs(values["workdir"]); !made) return made.error();
  return command_argv(o.setup.bench, values, o.setup.shell);
}

// One more run of the program (not the build: the profile's build trace
// kept the PTX), capturing the first launches of `chosen` into
// <campaign>/capture/captures, each tied to its module (attach_compiles).
// A fresh {workdir}: a JIT inside the program (Triton) compiles again, so
// that its compiles are traced with their PTX.
Result<void> capture_chosen(const TuneOptions& o, const std::vector<std::string>& chosen, const std::string& profile_build_dir) {
  std::string dir = join_path(o.out_dir, "capture");
  std::map<std::string, std::string> values;
  auto argv = program_argv(o, dir, values);
  if (!argv) return argv.error();
  std::string names;
  for (const auto& k : chosen) names += (names.empty() ? "" : ",") + k;
  std::fprintf(stderr, "ciq-tuner: capturing the launches of %zu kernel(s) in one more run of the program\n", chosen.size());
  const auto started = std::chrono::steady_clock::now();
  auto captured = capture_profile("", *argv, false, dir, o.setup.inject_library, values, /*quiet=*/true, names);
  if (!captured) return captured.error();
  std::fprintf(stderr, "ciq-tuner: the capturing run took %.0f s\n", seconds_since(started));
  if (!captured->program_describe.empty()) {
    std::fprintf(stderr, "ciq-tuner: warning: the capturing run ended with %s: every kernel is tuned by program runs\n",
                 captured->program_describe.c_str());
    return {};
  }
  auto outcome = attach_compiles(captured->captures_dir, {profile_build_dir, captured->build_dir});
  if (!outcome) return outcome.error();
  say_captures(*outcome, names, true);
  return {};
}

// --from-profile: the program's kernels by GPU time, hottest first, until
// `cover` of it; those this build did not compile are said and left out.
// Writes <campaign>/profile.json (the whole profile: the shares the table
// shows, also after --resume).
Result<std::vector<std::string>> profiled_kernels(const CampaignOptions& c, const TuneOptions& o) {
  std::string kernel_dir, build_dir;
  if (c.from_profile == "now") {
    if (o.setup.bench.empty()) return make_error("invalid", "--from-profile runs --bench once to find the hot kernels: give --bench");
    if (!o.setup.bench_server.empty())
      return make_error("invalid", "--from-profile runs the program of --bench once, as a process, and with --bench-server "
                                   "--bench is a request, not a program: profile the program with `ciq-tuner profile --out DIR "
                                   "-- PROGRAM` and give --from-profile=DIR");
    std::string dir = join_path(o.out_dir, "profile");
    std::map<std::string, std::string> values;
    auto argv = program_argv(o, dir, values);
    if (!argv) return argv.error();
    const auto started = std::chrono::steady_clock::now();
    auto captured = capture_profile(o.setup.build, *argv, false, dir, o.setup.inject_library, values, /*quiet=*/true);
    if (!captured) return captured.error();
    std::fprintf(stderr, "ciq-tuner: the profiling run (build and program) took %.0f s\n", seconds_since(started));
    if (!captured->program_describe.empty()) {
      std::string log = join_path(dir, "profile.log");
      auto output = read_file(log);
      return make_error("profile", failure_message("the profiling run of --bench (" + o.setup.bench + ") ended with " +
                                                       captured->program_describe + no_driver_note(),
                                                   output ? *output : "", log));
    }
    kernel_dir = captured->kernel_dir;
    build_dir = captured->build_dir;
  } else {
    kernel_dir = join_path(c.from_profile, "kernels");
    build_dir = join_path(c.from_profile, "build-trace");
    if (!is_directory(kernel_dir))
      return make_error("invalid", "--from-profile=" + c.from_profile + ": no kernels/ in it (the --out DIR of a `ciq-tuner profile`)");
  }
  auto p = read_profile(kernel_dir, is_directory(build_dir) ? build_dir : "");
  if (!p) return p.error();
  auto rows = profile_rows(p->trace, p->build);
  if (auto w = write_file_atomic(join_path(o.out_dir, "profile.json"), profile_json(p->trace, rows) + "\n"); !w) return w.error();
  std::vector<std::string> chosen;
  std::optional<std::set<std::string>> own_build;  // the kernels --build compiles through ciq, once asked
  double covered = 0;
  for (const auto& row : rows) {
    if (covered >= c.cover) break;
    const auto& k = *row.kernel;
    covered += k.share;
    std::string label = printable(k.demangled.empty() ? k.kernel : k.demangled);
    if (!o.setup.kernels.empty() && !glob_match(o.setup.kernels, k.kernel) && !glob_match(o.setup.kernels, k.demangled)) {
      std::fprintf(stderr, "ciq-tuner: %5.1f%% %s: not selected by --kernels\n", 100 * k.share, label.c_str());
      continue;
    }
    if (row.origins.empty()) {
      // The profile's build trace does not name it (a profile taken without
      // --build has none): the campaign's own --build says, by one traced
      // default build, made at the first such kernel.
      if (!own_build && !o.setup.build.empty()) {
        auto found = discover_kernels(o);
        if (!found) return found.error();
        own_build.emplace(found->begin(), found->end());
      }
      if (!own_build || !own_build->count(k.kernel)) {
        std::fprintf(stderr, "ciq-tuner: %5.1f%% %s: not compiled by %s through ciq (a library's, or built elsewhere): left out\n",
                     100 * k.share, label.c_str(), o.setup.build.empty() ? "the profiled build (give --build)" : "this build");
        continue;
      }
    }
    std::fprintf(stderr, "ciq-tuner: %5.1f%% %s: to tune\n", 100 * k.share, label.c_str());
    chosen.push_back(k.kernel);
  }
  std::fprintf(stderr, "ciq-tuner: the first %.1f%% of the program's GPU time (--cover %.0f%%): %zu kernel(s) to tune\n",
               100 * std::min(covered, 1.0), 100 * c.cover, chosen.size());
  if (c.capture && c.from_profile == "now" && !chosen.empty()) {
    if (auto captured = capture_chosen(o, chosen, build_dir); !captured) return captured.error();
  }
  return chosen;
}

// Each kernel's share of the program's GPU time, from <campaign>/profile.json.
std::map<std::string, double> profiled_shares(const std::string& out_dir) {
  std::map<std::string, double> shares;
  auto text = read_file(join_path(out_dir, "profile.json"));
  if (!text) return shares;
  auto json = parse_json(*text);
  if (!json) return shares;
  for (const auto& k : (*json)["kernels"].array) shares[k["kernel"].string_or("")] = k["share"].number_or(NAN);
  return shares;
}

// The campaign's kernels: kernels.txt when resuming, else from a discovery
// build or the program's profile (saved, with the command line, for a
// later --resume).
Result<std::vector<std::string>> campaign_kernels(const CampaignOptions& c, TuneOptions& o, const std::string& list_path) {
  std::vector<std::string> kernels;
  if (o.resume) {
    auto text = read_file(list_path);
    if (!text) return make_error("invalid", "nothing to resume: '" + o.out_dir + "' holds no campaign (" + text.error().message + ")");
    for (auto line : split(*text, '\n'))
      if (!trim(line).empty()) kernels.emplace_back(trim(line));
    std::fprintf(stderr, "ciq-tuner: resuming campaign %s (%zu kernels)\n", o.out_dir.c_str(), kernels.size());
    return kernels;
  }
  if (path_exists(list_path)) return make_error("invalid", "'" + o.out_dir + "' already holds a campaign; continue it with --resume " + o.out_dir);
  if (auto made = make_own_directory(o.out_dir); !made) return made.error();
  if (auto w = save_command_line(o.out_dir, o.command_line); !w) return w.error();
  auto found = c.from_profile.empty() ? discover_kernels(o) : profiled_kernels(c, o);
  if (!found) return found.error();
  if (found->empty())
    return make_error("invalid", c.from_profile.empty() ? "the discovery build compiled no kernel that --kernels selects"
                                                        : "none of the program's hot kernels was compiled by this build through ciq");
  std::string list;
  for (const auto& k : *found) list += k + "\n";
  if (auto w = write_file_atomic(list_path, list); !w) return w.error();
  return found;
}

// A `ciq-tuner run` of the campaign: a fresh one (`args`, then --out DIR
// --json, and the slot's --gpus), or the resumption of what an
// interrupted campaign left in DIR.
RunOptions tuner_run(const CampaignOptions& c, const std::string& dir, std::vector<std::string> args, const std::string& gpus) {
  RunOptions run;
  std::string self = self_executable();
  if (path_exists(join_path(dir, "journal.jsonl"))) {
    run.argv = {self, "run", "--resume", dir, "--json"};
  } else {
    run.argv = {self, "run"};
    run.argv.insert(run.argv.end(), args.begin(), args.end());
    run.argv.insert(run.argv.end(), {"--out", dir, "--json"});
    if (!gpus.empty()) run.argv.insert(run.argv.end(), {"--gpus", gpus});
  }
  run.capture_stdout = run.stdin_null = true;
  run.stderr_file = dir + ".log"; // as it goes: `tail -f` it, and it survives an interrupt
  run.own_process_group = true; // tracked: an interrupt reaches it, and it cancels its own jobs
  run.set_env = {{env_name(Env::campaign_pid), std::to_string(::getpid())}}; // and it ends if the campaign dies
  // Its argv (c.run_args, and the command-line it saves) shows --publish
  // without the password, which anyone may read in ps: the URL comes here.
  if (!c.tune.publish.empty()) run.set_env.emplace_back(env_name(Env::publish), c.tune.publish);
  return run;
}

// The run of one kernel by program runs: every candidate a build and a run
// of the program.
RunOptions kernel_run(const CampaignOptions& c, const KernelResult& r, const std::string& gpus,
                      const std::vector<std::string>& hints) {
  std::vector<std::string> args = c.run_args;
  args.insert(args.end(), {"--kernels", exact_glob(r.kernel)});
  for (const auto& h : hints) args.insert(args.end(), {"--seed-hint", h});
  return tuner_run(c, r.run_dir, std::move(args), gpus);
}

// The one run of the kernels tuned together (--together): `run
// --separately` on all of them, each judged by its own time; a program run
// measures a candidate of every one.
RunOptions together_run(const CampaignOptions& c, const std::vector<std::string>& kernels, const std::string& dir,
                        const std::string& gpus) {
  std::string glob;
  for (const auto& k : kernels) glob += (glob.empty() ? "{" : ",") + exact_glob(k);
  std::vector<std::string> args = c.run_args;
  args.insert(args.end(), {"--kernels", glob + "}", "--separately"});
  return tuner_run(c, dir, std::move(args), gpus);
}

// The campaign's run options less those a replay replaces: the program's
// build and benchmark, and what is read from them.
std::vector<std::string> replay_run_args(const std::vector<std::string>& run_args) {
  static const std::set<std::string> replaced{"build", "bench", "check", "bench-server", "metric", "objective", "direction", "prefer"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < run_args.size(); ++i) {
    std::string name = run_args[i].substr(0, run_args[i].find('='));
    bool joined = run_args[i].find('=') != std::string::npos;
    while (starts_with(name, "-")) name.erase(0, 1);
    if (name == "shell") continue;
    if (replaced.count(name)) {
      if (!joined) ++i;
      continue;
    }
    out.push_back(run_args[i]);
  }
  return out;
}

// The replay run of one kernel: its captured launches timed by ciq-replay,
// nothing shipped (the program decides).
RunOptions replay_run(const CampaignOptions& c, const KernelResult& r, const std::string& captures, const std::string& gpus,
                      const std::vector<std::string>& hints) {
  std::vector<std::string> args = replay_run_args(c.run_args);
  args.insert(args.end(), {"--capture", captures, "--kernels", exact_glob(r.kernel), "--no-ship"});
  for (const auto& h : hints) args.insert(args.end(), {"--seed-hint", h});
  return tuner_run(c, r.replay_dir, std::move(args), gpus);
}

// The program's confirmation of a replay winner: a run of the program whose
// only candidates are the default and the winner (budget 2, no probes, no
// pruning: the replay pruned it, at a fraction of a program run's cost),
// verified interleaved against the default as every run is, and shipped
// only if it wins there.
RunOptions confirm_run(const CampaignOptions& c, const KernelResult& r, const std::string& gpus) {
  std::vector<std::string> args = c.run_args;
  args.insert(args.end(), {"--kernels", exact_glob(r.kernel), "--seed-controls", join_path(r.replay_dir, "best.controls"),
                           "--budget", "2", "--occupancy-probes=false", "--prune=false"});
  return tuner_run(c, r.run_dir, std::move(args), gpus);
}

// Why a run could not tune, in one line: the error its summary.json records
// (as the run printed it: "ciq-tuner: error: " and the message's first
// line), else (it wrote none: it died, or failed before its directory was
// its own) the last line of its log, else how it ended.
std::string failure_reason(const std::optional<RunSummary>& summary, const Result<RunResult>& ran, const std::string& log_file) {
  if (summary && summary->outcome == RunOutcome::failed && !summary->reason.empty()) {
    std::string shown = printable_lines(summary->reason);
    return "ciq-tuner: error: " + shown.substr(0, shown.find('\n'));
  }
  auto log = read_file(log_file);
  std::string said = ran ? std::string(trim(log ? *log : "")) : ran.error().message;
  std::string last = said.substr(said.rfind('\n') == std::string::npos ? 0 : said.rfind('\n') + 1);
  if (last.empty() && ran) return "ciq-tuner run " + ran->describe();
  return last;
}

// What one kernel's run came to, in `r` and on stderr (under the lock).
void record_outcome(KernelResult& r, const Result<RunResult>& ran, const std::string& log_file, std::size_t i, std::size_t n) {
  std::optional<RunSummary> summary = summary_of(r);
  if (ran && ran->succeeded() && take_results(r, summary)) {
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s (%s, %.0f s)%s\n", i + 1, n, printable(r.kernel).c_str(),
                 printable(r.verdict).c_str(), change_text(r).c_str(), r.seconds, r.shipped ? ", shipped" : "");
    return;
  }
  r.state = KernelState::failed;
  r.error = failure_reason(summary, ran, log_file);
  std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: could not tune: %s (log: %s.log)\n", i + 1, n, printable(r.kernel).c_str(),
               printable(r.error).c_str(), printable(r.run_dir).c_str());
}

// The winners of the kernels shipped so far, each as a first guess for
// `r` (at most the 4 latest): its options as they are, its directives moved
// to `r`'s kernel (a maxnreg that won on one softmax is a good first guess
// for the next). Written to <campaign>/seeds/; the run skips one that does
// not fit its space (--seed-hint). Under the campaign's lock.
std::vector<std::string> seed_hints(const CampaignOptions& c, const std::vector<KernelResult>& results, const KernelResult& r) {
  std::vector<std::string> files;
  for (auto it = results.rbegin(); it != results.rend() && files.size() < 4; ++it) {
    const KernelResult& done = *it;
    if (&done == &r || done.state != KernelState::done || !done.shipped) continue;
    auto text = read_file(join_path(done.run_dir, "best.controls"));
    if (!text) continue;
    auto won = spaces::parse_control_set(*text, "best.controls");
    if (!won) continue;
    spaces::ControlSet hint;
    hint.space = won->space;
    hint.options = won->options;
    if (auto k = won->kernels.find(done.kernel); k != won->kernels.end()) hint.kernels[r.kernel] = k->second;
    if (hint.empty()) continue;
    std::string dir = join_path(c.tune.out_dir, "seeds");
    std::string file = join_path(dir, base_name(r.run_dir) + "-from-" + base_name(done.run_dir) + ".controls");
    if (!make_dirs(dir) || !write_file_atomic(file, spaces::format_control_set(hint))) continue;
    files.push_back(file);
  }
  return files;
}

// What a kernel's replay run came to.
enum class Replayed {
  done,      // nothing beat the default: the replay's result is the kernel's
  confirm,   // a winner, for the program to confirm
  fallback,  // no result (r.replay_note says why): tuned by program runs
};

// Takes the replay run's summary into `r`. Under the campaign's lock.
Replayed take_replay(KernelResult& r, const Result<RunResult>& ran, const std::string& log_file) {
  auto summary = read_summary(r.replay_dir);
  std::optional<RunSummary> said = summary ? std::move(*summary) : std::nullopt;
  if (ran && ran->succeeded() && said && said->results) {
    r.replay_change = relative_change(*said->results);
    r.replay_controls = said->results->controls;
    if (r.replay_controls != "default") return Replayed::confirm;
    take_results(r, said);
    r.seconds = r.replay_seconds;
    return Replayed::done;
  }
  r.replay_note = "replay could not tune it (" + failure_reason(said, ran, log_file) + "): tuned by program runs";
  r.replay_dir.clear();
  return Replayed::fallback;
}

void say_replay(const KernelResult& r, Replayed what, std::size_t i, std::size_t n) {
  std::string kernel = printable(r.kernel);
  switch (what) {
  case Replayed::done:
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: by replay: %s (%.0f s)\n", i + 1, n, kernel.c_str(), printable(r.verdict).c_str(),
                 r.seconds);
    break;
  case Replayed::confirm:
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: replay found %s (%s, %.0f s); confirming in the program\n", i + 1, n,
                 kernel.c_str(), printable(r.replay_controls).c_str(), percent(r.replay_change, "%+.1f %%").c_str(),
                 r.replay_seconds);
    break;
  case Replayed::fallback:
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s\n", i + 1, n, kernel.c_str(), printable(r.replay_note).c_str());
    break;
  }
}

// The captures the kernels are replayed from: those of the campaign's own
// capturing run, or of the profile it was given (`profile --capture`);
// "" when the campaign tunes by program runs only.
std::string captures_root(const CampaignOptions& c) {
  if (!c.capture || c.from_profile.empty()) return "";
  if (c.from_profile == "now") return join_path(join_path(c.tune.out_dir, "capture"), "captures");
  return join_path(c.from_profile, "captures");
}

// The kernels with a capture ready for replay (its compile.json written).
std::set<std::string> replayable_kernels(const std::string& root) {
  std::set<std::string> kernels;
  if (root.empty() || !is_directory(root)) return kernels;
  auto set = profile::read_capture_set(root);
  if (!set) return kernels;
  for (const auto& capture : set->captures)
    if (capture.has_compile) kernels.insert(capture.kernel);
  return kernels;
}

// The kernels of `group` (indices into `results`, sharing one run
// directory) tuned in one run, unless all are done; each one's outcome is
// its part of that run's summary.
template <class WriteSummary>
void run_together(const CampaignOptions& c, std::vector<KernelResult>& results, const std::vector<std::size_t>& group,
                  const std::string& gpus, std::mutex& mutex, WriteSummary& write_summary) {
  if (std::all_of(group.begin(), group.end(), [&](std::size_t i) { return results[i].state == KernelState::done; })) return;
  const std::string& dir = results[group.front()].run_dir;
  if (auto removed = remove_summary(dir); !removed)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(removed.error().message).c_str());
  std::vector<std::string> kernels;
  for (std::size_t i : group) kernels.push_back(results[i].kernel);
  RunOptions run = together_run(c, kernels, dir, gpus);
  {
    std::lock_guard lock(mutex);
    std::fprintf(stderr, "ciq-tuner: tuning %zu kernels together, each by its own time in the same program runs (%s)\n",
                 kernels.size(), printable(dir).c_str());
  }
  const auto started = std::chrono::steady_clock::now();
  auto ran = run_process(run);
  std::lock_guard lock(mutex);
  for (std::size_t i : group) {
    results[i].seconds = seconds_since(started);
    record_outcome(results[i], ran, run.stderr_file, i, results.size());
  }
  write_summary();
}

// Runs the kernels' runs not done yet, --concurrent at a time (slot i
// benchmarks on gpu_sets[i]), each outcome recorded in `results` and
// campaign.json as it ends; the kernels of `together` in one run.
void run_kernels(const CampaignOptions& c, std::vector<KernelResult>& results, const std::vector<std::string>& gpu_sets,
                 const std::string& captures, const std::vector<std::size_t>& together) {
  std::mutex mutex;
  auto write_summary = [&] { // under the mutex
    if (auto w = write_file_atomic(join_path(c.tune.out_dir, "campaign.json"), to_json(results)); !w)
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", w.error().message.c_str());
  };
  {
    std::lock_guard lock(mutex);
    write_summary();
  }
  // The work in order: each kernel alone, but those of `together` as one
  // run, where the first of them stands.
  std::vector<std::vector<std::size_t>> jobs;
  for (std::size_t i = 0; i < results.size(); ++i) {
    bool grouped = std::find(together.begin(), together.end(), i) != together.end();
    if (!grouped) jobs.push_back({i});
    else if (i == together.front()) jobs.push_back(together);
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&](std::size_t slot) {
    for (std::size_t job = next++; job < jobs.size(); job = next++) {
      if (jobs[job].size() > 1) {
        run_together(c, results, jobs[job], gpu_sets[slot], mutex, write_summary);
        continue;
      }
      std::size_t i = jobs[job].front();
      KernelResult& r = results[i];
      if (r.state == KernelState::done) continue;
      // What an earlier attempt's summary said (it failed) is not this one's.
      if (auto removed = remove_summary(r.run_dir); !removed)
        std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(removed.error().message).c_str());
      std::vector<std::string> hints;
      {
        std::lock_guard lock(mutex);
        hints = seed_hints(c, results, r);
      }
      RunOptions run = kernel_run(c, r, gpu_sets[slot], hints);
      const auto started = std::chrono::steady_clock::now();
      if (!r.replay_dir.empty()) {
        {
          std::lock_guard lock(mutex);
          std::fprintf(stderr, "ciq-tuner: [%zu/%zu] tuning %s by replay\n", i + 1, results.size(), printable(r.kernel).c_str());
        }
        RunOptions replay = replay_run(c, r, captures, gpu_sets[slot], hints);
        auto replayed = run_process(replay);
        std::lock_guard lock(mutex);
        r.replay_seconds = seconds_since(started);
        Replayed what = take_replay(r, replayed, replay.stderr_file);
        say_replay(r, what, i, results.size());
        if (what == Replayed::done) {
          write_summary();
          continue;
        }
        if (what == Replayed::confirm) run = confirm_run(c, r, gpu_sets[slot]);
      } else {
        std::lock_guard lock(mutex);
        std::fprintf(stderr, "ciq-tuner: [%zu/%zu] tuning %s\n", i + 1, results.size(), printable(r.kernel).c_str());
      }
      auto ran = run_process(run);
      std::lock_guard lock(mutex);
      r.seconds = seconds_since(started);
      record_outcome(r, ran, run.stderr_file, i, results.size());
      write_summary();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < c.concurrent; ++t) threads.emplace_back(worker, std::size_t(t));
  for (auto& t : threads) t.join();

}

// The kernels (indices into `kernels`) tuned together in one run: those
// that go to program runs (no capture to replay), when --together, there
// are two or more, and each can be judged by its own time (kernel-time).
std::vector<std::size_t> together_kernels(const CampaignOptions& c, const std::vector<std::string>& kernels,
                                          const std::set<std::string>& replayable) {
  std::vector<std::size_t> program;
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (!replayable.count(kernels[i])) program.push_back(i);
  if (!c.together || program.size() < 2) return {};
  const auto& objectives = c.tune.setup.objectives;
  if (objectives.size() != 1 || objectives[0].kind != ObjectiveKind::kernel_time) {
    std::fprintf(stderr, "ciq-tuner: tuning the %zu kernels that go to program runs one at a time: together, each is judged "
                         "by its own time, which needs --objective kernel-time as the only objective\n", program.size());
    return {};
  }
  return program;
}

} // namespace

int run_campaign(CampaignOptions c) {
  TuneOptions& o = c.tune;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "ciq-tuner: error: %s\n", printable_lines(message).c_str());
    return 1;
  };
  if (auto checked = check_campaign_options(o, c.concurrent); !checked) return fail(checked.error().message);
  std::vector<std::string> gpu_sets = gpu_sets_for(c);
  auto out = output_directory(o.out_dir, "ciq-campaign");
  if (!out) return fail(out.error().message);
  o.out_dir = *out;
  static std::string interrupt_message;
  interrupt_message = "\nciq-tuner: campaign interrupted; continue with: ciq-tuner campaign --resume " + o.out_dir + "\n";
  kill_children_on_interrupt(interrupt_message.c_str(), /*forward=*/true);
  // One campaign per directory (each run locks its own as well).
  if (auto made = make_own_directory(o.out_dir); !made) return fail(made.error().message);
  if (auto locked = lock_run_directory(o.out_dir); !locked) return fail(locked.error().message);
  struct Unlock {
    ~Unlock() { release_run_directory(); }
  } unlock;
  auto kernels = campaign_kernels(c, o, join_path(o.out_dir, "kernels.txt"));
  if (!kernels) return fail(kernels.error().message);
  auto shares = profiled_shares(o.out_dir);

  std::string captures = captures_root(c);
  std::set<std::string> replayable = replayable_kernels(captures);
  std::vector<std::size_t> together = together_kernels(c, *kernels, replayable);
  std::vector<KernelResult> results(kernels->size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].kernel = (*kernels)[i];
    bool grouped = std::find(together.begin(), together.end(), i) != together.end();
    results[i].run_dir = join_path(join_path(o.out_dir, "runs"), grouped ? "together" : run_name(i, results[i].kernel));
    if (replayable.count(results[i].kernel)) {
      results[i].replay_dir = results[i].run_dir + ".replay";
      // A resumed campaign's table keeps what the replay measured.
      if (auto said = read_summary(results[i].replay_dir); said && *said && (*said)->results)
        results[i].replay_change = relative_change(*(*said)->results);
    }
    if (auto it = shares.find(results[i].kernel); it != shares.end()) results[i].share = it->second;
    take_results(results[i], summary_of(results[i]));
  }
  if (auto made = make_dirs(join_path(o.out_dir, "runs")); !made) return fail(made.error().message);
  std::size_t finished = std::count_if(results.begin(), results.end(), [](auto& r) { return r.state == KernelState::done; });
  std::fprintf(stderr, "ciq-tuner: campaign of %zu kernel(s), %zu done, %d at a time\n", results.size(), finished, c.concurrent);
  run_kernels(c, results, gpu_sets, captures, together);

  print_table(results);
  int failed = int(std::count_if(results.begin(), results.end(), [](auto& r) { return r.state != KernelState::done; }));
  int shipped = int(std::count_if(results.begin(), results.end(), [](auto& r) { return r.shipped; }));
  std::fprintf(stderr, "ciq-tuner: campaign: %zu kernel(s), %d shipped, %d could not be tuned; %s\n", results.size(), shipped,
               failed, join_path(o.out_dir, "campaign.json").c_str());
  if (c.check_program > 0 && shipped > 0) {
    if (o.setup.bench.empty() || !o.setup.bench_server.empty()) {
      std::fprintf(stderr, "ciq-tuner: warning: --check-program runs the program of --bench (a process, not a --bench-server): not checked\n");
    } else {
      std::fprintf(stderr, "ciq-tuner: checking the program: %d fresh build(s) and run(s) with the cache and as many without it "
                           "(CIQ_DISABLE=1), interleaved\n", c.check_program);
      std::string dir = join_path(o.out_dir, "program-check");
      auto checked = check_program(o, dir, c.check_program);
      if (!checked) {
        std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable_lines(checked.error().message).c_str());
      } else {
        std::fprintf(stderr, "ciq-tuner: program, with the cache against without: %s; runs in %s\n",
                     describe(*checked, c.check_program).c_str(), dir.c_str());
        if (checked->change > 0 && checked->p_value > 0.5)
          std::fprintf(stderr, "ciq-tuner: warning: the program's GPU time is longer with what the campaign shipped: the entries "
                               "together may not do what each did alone (ciq-cache list; ciq-cache rm KEY)\n");
      }
    }
  }
  if (o.json) std::printf("%s", to_json(results).c_str());
  return failed ? 1 : 0;
}

} // namespace ciq::tuner
