#include "tuner/commands/retune.h"

#include "cache/entries.h"
#include "cache/stale.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "tuner/run/progress.h"
#include "tuner/commands/recorded_runs.h"
#include "tuner/commands/retune_rows.h"
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

// The --publish URL a saved command line gives ("" = none); its password,
// if any, is masked (command_line.h).
std::string publish_url_of(const std::vector<std::string>& arguments) {
  std::string url;
  for (const auto& p : parse_arguments(arguments, "run"))
    if (p.name == "publish") url = p.value;
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

// The recorded runs behind the entries `o` selects (--stale, --kernels);
// o.cache_dir made the cache's real directory.
Result<std::vector<RecordedRun>> selected_runs(RetuneOptions& o) {
  auto cache = existing_cache(o.cache_dir);
  if (!cache) return cache.error();
  o.cache_dir = *cache;
  std::set<std::string> stale;
  if (o.stale) {
    auto keys = stale_keys(o);
    if (!keys) return keys.error();
    stale = std::move(*keys);
  }
  return recorded_runs(o.cache_dir, [&](const RecordedEntry& e) {
    if (o.stale && !stale.count(e.key)) return false;
    if (!o.kernels.empty()) return e.record.kind == cache::RecordKind::kernel && glob_match(o.kernels, e.record.kernel);
    return true;
  });
}

// The arguments of `saved`'s run tuned again into `new_dir`. A run saved
// with --no-ship is tuned again to replace its entries: it ships, to the
// cache read; not to a team's Redis (--publish): that is for you to do
// once you have seen what it found (said at the end). --drop-losers: where
// nothing wins now, the new run's "tuned, no gain" takes the old winner's
// place (a campaign then does not tune it again).
std::vector<std::string> rerun_arguments(const RetuneOptions& o, const RecordedRun& run, const SavedRun& saved,
                                         const std::string& new_dir) {
  std::vector<std::string> set{"--out", new_dir, "--json", "--cache-dir", o.cache_dir};
  if (o.drop_losers) set.insert(set.end(), {"--replaces-run", run.command_line});
  return forward_arguments(saved.arguments, "run", "run", group_output | group_resume | group_earlier_run | group_shipping, set);
}

// --dry-run: what would run for `run` (`args` in its working directory),
// as a JSON object added to `planned`, or as shell lines on stdout.
void plan_rerun(const RetuneOptions& o, const RecordedRun& run, const SavedRun& saved, const std::vector<std::string>& args,
                nlohmann::json& planned) {
  std::vector<std::string> argv{self_executable()};
  argv.insert(argv.end(), args.begin(), args.end());
  if (o.json) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& e : run.selected) entries.push_back(entry_json(e));
    planned.push_back({{"command_line", run.command_line}, {"working_directory", saved.working_directory}, {"argv", argv},
                       {"entries", entries}});
    return;
  }
  std::printf("# %s (recorded in %s)\n", printable(row_names(run)).c_str(), printable(run.command_line).c_str());
  if (std::string url = publish_url_of(saved.arguments); !url.empty())
    std::printf("# made with --publish %s: tuned again, it ships to the local cache only (then: %s)\n", printable(url).c_str(),
                shown_argv({"ciq-cache", "push", url, "--cache-dir", o.cache_dir}).c_str());
  std::printf("cd %s && %s\n", shown_argv({saved.working_directory}).c_str(), shown_argv(argv).c_str());
}

// The runs that published what they shipped: this time it is in the
// local cache only; said, with the command that publishes it.
void say_published(const RetuneOptions& o, const std::map<std::string, std::vector<std::string>>& published) {
  for (const auto& [url, lines] : published)
    std::fprintf(stderr, "ciq-tuner: note: %zu run%s made with --publish %s (%s%s) shipped again to %s only; to publish the new entries: %s%s\n",
                 lines.size(), lines.size() == 1 ? "" : "s", printable(url).c_str(), printable(lines.front()).c_str(),
                 lines.size() > 1 ? ", ..." : "", printable(o.cache_dir).c_str(), shown_argv({"ciq-cache", "push", url, "--cache-dir", o.cache_dir}).c_str(),
                 url.find("***") != std::string::npos ? " (the password in place of ***)" : "");
}

// No entry selected: said, and with --json the empty answer; exit 0.
int say_nothing_selected(const RetuneOptions& o) {
  std::fprintf(stderr, "ciq-tuner: no entry of %s is selected%s: nothing to tune again\n", o.cache_dir.c_str(),
               o.stale ? " (none is stale)" : "");
  if (o.json && o.dry_run) std::cout << nlohmann::json{{"would_run", nlohmann::json::array()}, {"skipped", nlohmann::json::array()}}.dump() << "\n";
  else if (o.json) std::cout << nlohmann::json{{"out", nullptr}, {"rows", nlohmann::json::array()}}.dump() << "\n";
  return 0;
}

// Run `i` of `n` about to start in `new_dir`: said, and what an interrupt
// is to say now written into `interrupted` (the handler's buffer).
void say_starting(std::size_t i, std::size_t n, const RecordedRun& run, const std::string& new_dir, char* interrupted,
                  std::size_t size) {
  std::snprintf(interrupted, size,
                "\nciq-tuner: retune interrupted in run %zu of %zu (the runs before it finished and shipped); finish it with: "
                "ciq-tuner run --resume %s\n", i, n, printable(new_dir).c_str());
  std::fprintf(stderr, "ciq-tuner: [%zu/%zu] tuning %s again as recorded in %s: %s (log: %s.log)\n", i, n,
               printable(row_names(run)).c_str(), printable(run.command_line).c_str(), printable(new_dir).c_str(),
               printable(new_dir).c_str());
}

} // namespace

int run_retune(const RetuneOptions& given) {
  RetuneOptions o = given;
  if (!o.gpu.empty() && !o.stale) return fail(make_error(ciq::errc::usage, "--gpu names the GPU model --stale compares entries with: give --stale too"));
  auto runs = selected_runs(o);
  if (!runs) return fail(runs.error().message);
  if (runs->empty()) return say_nothing_selected(o);
  std::vector<RetuneRow> rows;
  std::vector<std::pair<const RecordedRun*, SavedRun>> to_run;
  for (const auto& run : *runs) {
    auto saved = read_saved_run(run.command_line, run.run_id);
    if (saved) to_run.emplace_back(&run, std::move(*saved));
    else add_unchanged_rows(run, RetuneVerdict::skipped, saved.error().message, "", rows);
  }
  // Made only when something runs in it (a dry run's is checked only).
  auto batch = batch_directory(o.out_dir, "ciq-retune", !o.dry_run && !to_run.empty());
  if (!batch) return fail(batch.error());
  // What the cache held before: a new winner under a key already there
  // (an earlier retune's) replaced it, and the table says so.
  std::set<std::string> keys_before;
  if (!o.dry_run)
    if (auto keys = entry_keys(o.cache_dir)) keys_before = std::move(*keys);
  // An interrupt stops the run in progress (it saves its state) and this:
  // the runs before it finished and shipped; what to do about that one.
  // One buffer, its address handed once: the handler never reads freed text.
  static char interrupted[4096] = "";
  if (!o.dry_run) kill_children_on_interrupt(interrupted, /*forward=*/true);
  nlohmann::json planned = nlohmann::json::array();
  std::set<std::string> taken;
  std::map<std::string, std::vector<std::string>> published; // --publish URL -> the runs (command lines) that gave it and shipped again
  bool any_failed = false;
  std::size_t i = 0, n = to_run.size();
  for (auto& [run, saved] : to_run) {
    std::string new_dir = join_path(*batch, new_run_name(*batch, run->command_line, taken));
    std::vector<std::string> args = rerun_arguments(o, *run, saved, new_dir);
    if (o.dry_run) {
      plan_rerun(o, *run, saved, args, planned);
      continue;
    }
    ++i;
    say_starting(i, n, *run, new_dir, interrupted, sizeof interrupted);
    RerunOutcome outcome = run_again(args, saved.working_directory, new_dir, new_dir + ".log");
    if (!outcome.summary) {
      any_failed = true;
      std::fprintf(stderr, "ciq-tuner: [%zu/%zu] could not tune: %s\n", i, n, printable(outcome.failure).c_str());
      add_unchanged_rows(*run, RetuneVerdict::failed, outcome.failure, new_dir, rows);
      continue;
    }
    const SummaryResults& results = *outcome.summary->results;
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: %s\n", i, n, results.shipped ? ("shipped " + results.controls).c_str() : "nothing shipped",
                 printable(results.verdict).c_str());
    conclude_run(o, *run, new_dir, results, keys_before, rows);
    if (std::string url = publish_url_of(saved.arguments); !url.empty() && results.shipped) published[url].push_back(run->command_line);
  }
  if (o.dry_run) print_skipped(rows, planned, o.json);
  else print_rows(rows, to_run.empty() ? "" : *batch, o.json);
  say_published(o, published);
  return any_failed ? 1 : 0;
}

} // namespace ciq::tuner
