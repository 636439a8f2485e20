#include "tuner/orchestrate/run.h"

#include "cache/acf_candidates.h"
#include "spaces/control_set.h"
#include "spaces/space.h"
#include "cache/remote.h"
#include "tuner/measure/executor.h"
#include "tuner/search/occupancy.h"
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/results.h"
#include "tuner/rundir/summary.h"
#include "tuner/orchestrate/ship.h"
#include "tuner/search/space_builder.h"
#include "tuner/objectives/statistics.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <set>
#include <unistd.h>

namespace ciq::tuner {

namespace {

std::string percent(double from, double to) {
  if (from == 0 || !std::isfinite(from) || !std::isfinite(to)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%+.1f%%)", (to - from) / std::fabs(from) * 100);
  return buf;
}


// The value shown to people for objective k of a record (maximised ones un-negated).
double shown(const TuneOptions& o, const EvalRecord& r, std::size_t k) {
  if (!r.evaluation.valid || k >= r.evaluation.objectives.size()) return NAN;
  double v = r.evaluation.objectives[k];
  return o.setup.objectives[k].maximize ? -v : v;
}

class Progress {
public:
  Progress(const TuneOptions& o, int budget) : o_(o), budget_(budget), tty_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}

  void record(const EvalRecord& r, bool from_journal, const EvalRecord* baseline, const EvalRecord* best) {
    if (!seen_.insert(r.candidate).second) return; // asked again: already counted
    ++done_;
    if (!r.evaluation.valid) ++failed_;
    if (from_journal) ++replayed_;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int fresh = done_ - replayed_;
    double eta = fresh > 0 ? elapsed / fresh * std::max(0, budget_ - done_) : 0;
    // Pruning trials come after the budget: counted apart, not budgeted.
    if (pruning_) ++pruned_;
    std::string line = pruning_ ? "ciq-tuner: [prune] " + std::to_string(done_) + " (" + std::to_string(done_ - pruned_) +
                                      " searched + " + std::to_string(pruned_) + " pruning) "
                                : "ciq-tuner: [gen " + std::to_string(r.generation) + "] " + std::to_string(done_) + "/" +
                                      std::to_string(budget_) + " ";
    std::size_t k = o_.prefer; // the objective --prefer names (the first by default): the one "best" is about
    if (r.evaluation.valid) {
      line += format_number(shown(o_, r, k)) + (baseline ? percent(shown(o_, *baseline, k), shown(o_, r, k)) : "");
      if (r.status == "same-code") line += " (same code)";
    } else {
      line += "invalid: " + printable(r.evaluation.reason.substr(0, 80));
    }
    if (best) line += " | best " + format_number(shown(o_, *best, k)) + (baseline ? percent(shown(o_, *baseline, k), shown(o_, *best, k)) : "");
    line += " | " + std::to_string(failed_) + " failed";
    if (fresh > 0 && done_ < budget_ && !pruning_) line += " | ETA " + std::to_string(int(eta)) + "s";
    if (from_journal) line += " (from journal)";
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      if (!r.evaluation.valid) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  void finish() {
    if (tty_) std::fprintf(stderr, "\n");
  }
  void pruning() { pruning_ = true; }
  int failed() const { return failed_; }

private:
  const TuneOptions& o_;
  int budget_, done_ = 0, failed_ = 0, replayed_ = 0, pruned_ = 0;
  bool pruning_ = false;
  std::set<std::string> seen_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

// "Which ACF, or none": one more categorical dimension, from a candidate set
// in the cache or a zip/directory imported now. Only for a ptxas that takes
// --apply-controls; ACFs it refuses make their candidates invalid.
Result<Dimension> acf_dimension(const TuneOptions& o, const std::vector<TracedModule>& discovery) {
  if (discovery.empty()) return make_error("invalid", "--acf-candidates needs a build or benchmark that compiles through ciq-ptxas");
  if (!std::all_of(discovery.begin(), discovery.end(), [](const auto& m) { return m.accepts_controls_file; }))
    return make_error("invalid", "ptxas " + discovery.front().ptxas_version +
                                     " does not take --apply-controls, so --acf-candidates cannot be used with it");
  auto set = path_exists(o.acf_candidates) ? cache::import_acf_candidates(o.cache_dir, o.acf_candidates, "")
                                           : cache::load_acf_candidates(o.cache_dir, o.acf_candidates);
  if (!set) return set.error();
  // A set for another CUDA, stage or GPU is skipped with the reason, not
  // measured as so many invalid candidates.
  for (const auto& m : discovery)
    if (std::string why = cache::acf_set_fits(*set, m.ptxas_version, m.target); !why.empty())
      return make_error("skipped", "ACF set '" + set->name + "' does not fit: " + why);
  Dimension d;
  d.kind = DimensionKind::acf;
  d.knob = "acf";
  for (const auto& a : set->acfs) d.values.push_back(a.sha256);
  std::fprintf(stderr, "ciq-tuner: %zu ACF candidate(s) from set '%s'%s\n", set->acfs.size(), set->name.c_str(),
               set->cuda_version.empty() ? "" : (" (CUDA " + set->cuda_version + ")").c_str());
  return d;
}

std::string current_directory() {
  char buffer[4096];
  return ::getcwd(buffer, sizeof buffer) ? std::string(buffer) : std::string(".");
}

// Why the cache at `dir` cannot be written (it, or the nearest directory
// that exists above it, is not a writable directory); "" when it can.
std::string unwritable_cache(const std::string& dir) {
  std::string existing = dir;
  while (!path_exists(existing) && dir_name(existing) != existing) existing = dir_name(existing);
  if (!is_directory(existing))
    return existing == dir ? "'" + dir + "' is not a directory" : "'" + existing + "' (above it) is not a directory";
  if (::access(existing.c_str(), W_OK | X_OK) != 0) return "'" + existing + "' is not writable: " + std::strerror(errno);
  return "";
}

int fail(const std::string& message) {
  std::fprintf(stderr, "ciq-tuner: error: %s\n", printable_lines(message).c_str());
  return 1;
}

} // namespace

// The options make sense together; --replay's objective and settings are set up.
static Result<void> check_options(TuneOptions& o) {
  if (!o.replay.empty()) {
    if (!o.setup.build.empty() || !o.setup.bench.empty() || !o.setup.check.empty())
      return make_error("tuner", "--replay answers evaluations from its file: give no --build, --bench or --check");
    if (!o.setup.objectives.empty()) return make_error("tuner", "--replay's objective is the recorded time: give no --metric or --objective");
    auto data = ReplayData::load(o.replay);
    if (!data) return data.error();
    o.setup.replay = *data;
    o.setup.replay_seed = o.search.seed;
    auto objective = metric_objective("([0-9.]+)");
    if (!objective) return objective.error();
    objective->name = "replay:ms";
    o.setup.objectives = {*objective};
    o.ship = false;
  }
  // Where the commands run (measure/executor.h), made once for the run's
  // evaluators, checks the options that concern it. Before discovery, a
  // space "none" is all that says there will be no compiler knobs.
  o.setup.compiler = o.space != "none";
  o.setup.executor = make_executor(o.setup);
  if (auto ready = o.setup.executor->check_options(o.setup); !ready) return ready.error();
  if (o.setup.bench.empty() && !o.setup.replay && std::any_of(o.setup.objectives.begin(), o.setup.objectives.end(),
                                           [](auto& x) { return x.needs_benchmark(); }))
    return make_error("tuner", "--metric needs --bench (the command whose output holds the number)");
  if (o.setup.objectives.empty()) return make_error("tuner", "give an objective: --metric REGEX (with --bench) or --objective ptxas:spill-stores ...");
  if (o.setup.build.empty() && o.setup.bench.empty() && !o.setup.replay) return make_error("tuner", "give --build CMD and/or --bench CMD");
  // A cache named by the user (--cache-dir, CIQ_CACHE_DIR) is created if
  // missing, but not below a directory that does not exist: a typo would
  // ship where the wrappers never look (as ciq-cache put refuses it).
  bool named = !o.cache_dir.empty() || !env(Env::cache_dir).empty();
  if (o.cache_dir.empty()) o.cache_dir = cache_directory();
  // Found out now, not after the whole search, when shipping.
  if ((o.ship && o.space != "none") || !o.acf_candidates.empty()) {
    if (std::string why = unwritable_cache(o.cache_dir); !why.empty())
      return make_error("tuner", "cannot use the cache " + o.cache_dir + ": " + why + " (give a writable --cache-dir, or --no-ship)");
    std::string parent = dir_name(o.cache_dir);
    if (named && !path_exists(o.cache_dir) && !is_directory(parent))
      return make_error("tuner", "will not create the cache directory '" + o.cache_dir + "': its parent '" + parent +
                                     "' does not exist (a typo?). Create it first (mkdir -p " + parent +
                                     ") or fix --cache-dir / CIQ_CACHE_DIR, or give --no-ship");
  }
  o.out_dir = output_directory(o.out_dir, "ciq-tune");
  return {};
}

// The run directory made this run's own: created, locked (one tuner per
// run directory: a second one, or a --resume of a running one, would write
// the same journal and evaluation directories), and not another run's
// unless resumed. From here on, a failure is recorded in its summary.json.
static Result<void> claim_run_directory(const TuneOptions& o) {
  if (o.resume && !is_directory(o.out_dir)) return make_error("tuner", "nothing to resume: '" + o.out_dir + "' is not a run directory");
  if (auto r = make_own_directory(o.out_dir); !r) return r.error();
  if (auto locked = lock_run_directory(o.out_dir); !locked) return locked.error();
  if (!o.resume && path_exists(join_path(o.out_dir, "journal.jsonl"))) {
    release_run_directory();
    return make_error("tuner", "'" + o.out_dir + "' already holds a run; continue it with --resume " + o.out_dir);
  }
  return {};
}

// The run directory claimed: a new run begun (the command line saved,
// results.csv begun), or the journal of the one to resume read back.
// Interrupts stop the commands in flight from now on.
static Result<std::vector<EvalRecord>> open_run(TuneOptions& o) {
  // What an interrupted memoised build left in its scratch directories (no
  // build runs now: the lock is ours).
  remove_tree(join_path(o.out_dir, "memo/tmp"));
  // Interrupted: stop the commands in flight too (they run in their own
  // process groups), and say how to continue. The journal already holds
  // every finished evaluation.
  static std::string interrupt_message;
  interrupt_message = "\nciq-tuner: interrupted; continue with: ciq-tuner run --resume " + o.out_dir + "\n";
  kill_children_on_interrupt(interrupt_message.c_str());
  o.setup.run_dir = o.out_dir;
  std::string journal_path = join_path(o.out_dir, "journal.jsonl");
  std::vector<EvalRecord> journal;
  if (o.resume) {
    auto j = load_journal(journal_path);
    if (!j) return j.error();
    // results.csv again from the journal: a run stopped between the two
    // (a full disk) may have left a row short or missing.
    if (auto w = ResultsCsv(o.out_dir, o.setup.objectives).rewrite(*j); !w) return w.error();
    journal = std::move(*j);
    std::fprintf(stderr, "ciq-tuner: resuming %s: %zu evaluations in the journal\n", o.out_dir.c_str(), journal.size());
  } else {
    if (auto w = save_command_line(o.out_dir, o.command_line); !w) return w.error();
    // A resume from elsewhere runs the commands (relative paths in them) here.
    if (auto w = write_file_atomic(join_path(o.out_dir, "working-directory"), current_directory() + "\n"); !w) return w.error();
    if (auto w = ResultsCsv(o.out_dir, o.setup.objectives).begin(); !w) return w.error();
  }

  o.setup.executor->use_run_directory(o.out_dir);
  if (auto ready = o.setup.executor->start(o.resume); !ready) return ready.error();
  return journal;
}

// Discovery: what does the build compile, with which ptxas?
static Result<std::vector<TracedModule>> discover(const TuneOptions& o, std::vector<TracedUnit>& discovery_units) {
  std::vector<TracedModule> discovery;
  // A space named that does not exist: said before the build runs.
  if (!o.space.empty() && o.space != "none")
    if (auto named = spaces::load_space(spaces_directory(), o.space); !named) return named.error();
  if (o.space != "none" && !o.setup.replay) {
    std::string dir = join_path(o.out_dir, "discovery");
    // A resumed run searches the space the run began with: the one its
    // first discovery found. Built again, the NVVM stage would be missing
    // (the step memo answers cicc, so no unit is traced) and the journal's
    // candidates would belong to another space.
    std::string complete = join_path(dir, "complete"); // written once the discovery succeeded
    bool reuse = o.resume && path_exists(complete);
    Result<std::vector<TracedModule>> trace = std::vector<TracedModule>{};
    if (reuse) {
      std::fprintf(stderr, "ciq-tuner: discovery: the interrupted run's (%s)\n", dir.c_str());
      trace = read_trace(join_path(dir, "trace"));
      if (!trace) return trace.error();
    } else {
      std::fprintf(stderr, "ciq-tuner: discovery build (default controls, traced)\n");
      // The default controls, and each --param at its default: commands
      // may name {param:NAME}.
      SearchSpace empty;
      empty.compiler_space = o.space;
      for (const auto& spec : o.params) {
        auto d = parse_param(spec);
        if (!d) return d.error();
        empty.dimensions.push_back(std::move(*d));
      }
      Evaluator probe(o.setup, empty);
      Candidate none = empty.default_candidate();
      ::unlink(complete.c_str());
      trace = probe.build(none, dir);
      if (!trace) return make_error("tuner", "the discovery build failed: " + trace.error().message);
      if (trace->empty() && !o.setup.bench.empty() && o.setup.build.empty()) {
        if (auto ran = probe.bench_once(none, dir); !ran) return make_error("tuner", "the discovery run failed: " + ran.error().message);
        trace = read_trace(join_path(dir, "trace"));
        if (!trace) return trace.error();
      }
      if (auto w = write_file_atomic(complete, ""); !w) return w.error();
    }
    discovery = std::move(*trace);
    if (auto units = read_unit_trace(join_path(dir, "trace")); units) discovery_units = std::move(*units);
    else std::fprintf(stderr, "ciq-tuner: warning: %s; searching without NVVM-stage knobs\n", printable(units.error().message).c_str());
    if (!discovery_units.empty()) std::fprintf(stderr, "ciq-tuner: found %zu translation unit compile(s) through ciq-nvcc (NVVM stage)\n", discovery_units.size());
    std::size_t kernels = 0;
    for (const auto& m : discovery) kernels += m.kernels.size();
    std::fprintf(stderr, "ciq-tuner: found %zu kernel(s) in %zu module(s)%s\n", kernels, discovery.size(),
                 discovery.empty() ? "" : printable(" (ptxas " + discovery.front().ptxas_version + ", " + discovery.front().target + ")").c_str());
    std::size_t targeted_count = 0;
    for (const auto& m : discovery)
      for (const auto& k : m.kernels) {
        bool targeted = o.setup.kernels.empty() || glob_match(o.setup.kernels, k.name);
        targeted_count += targeted;
        std::fprintf(stderr, "  %s %s  key %s  %g registers, %g bytes spilled\n", targeted ? "*" : " ", printable(k.name).c_str(),
                     printable(k.key.substr(0, 12)).c_str(), k.registers, k.spill_stores);
      }
    // A glob that selects nothing would tune nothing: every candidate
    // invalid, or the default "best". (The names above are the mangled
    // ones the glob is matched against.)
    if (kernels > 0 && targeted_count == 0)
      return make_error("invalid", "--kernels '" + o.setup.kernels + "' matches none of the " + std::to_string(kernels) +
                                       " kernel(s) the build compiled (listed above; --kernels matches these mangled names, "
                                       "e.g. '*scale*' for scale(float*, int))");
  }
  return discovery;
}

std::string output_directory(std::string dir, const char* prefix) {
  if (dir.empty()) {
    char name[64];
    std::time_t now = std::time(nullptr);
    std::strftime(name, sizeof name, "-%Y%m%d-%H%M%S", std::localtime(&now));
    dir = prefix + std::string(name);
  }
  if (auto abs = real_path(dir_name(dir))) dir = join_path(*abs, base_name(dir));
  return dir;
}

Result<std::vector<std::string>> discover_kernels(TuneOptions o) {
  if (o.space == "none") return make_error("tuner", "a campaign tunes kernels: it needs a compiler space, not --space none");
  if (auto checked = check_options(o); !checked) return checked.error();
  if (o.setup.replay) return make_error("tuner", "a campaign runs builds: --replay does not apply");
  o.setup.executor->use_run_directory(o.out_dir);
  std::vector<TracedUnit> units;
  auto modules = discover(o, units);
  if (!modules) return modules.error();
  std::vector<std::string> names;
  for (const auto& m : *modules)
    for (const auto& k : m.kernels)
      if ((o.setup.kernels.empty() || glob_match(o.setup.kernels, k.name)) &&
          std::find(names.begin(), names.end(), k.name) == names.end())
        names.push_back(k.name);
  return names;
}

// The search space: the traced ptxas' knobs (and parameters, ACFs), the
// seeds, and the occupancy probes.
static Result<SearchSpace> make_space(TuneOptions& o, const std::vector<TracedModule>& discovery) {
  SpaceRequest request{o.space, o.params, o.setup.kernels, !o.setup.check.empty(), o.allow_unsafe, o.stages, o.units};
  auto space = o.setup.replay ? Result<SearchSpace>(o.setup.replay->space()) : build_search_space(request, discovery);
  if (!space) return space.error();
  o.setup.compiler = !space->compiler_space.empty();
  if (!o.acf_candidates.empty()) {
    auto acfs = acf_dimension(o, discovery);
    if (!acfs && acfs.error().code != "skipped") return acfs.error();
    if (acfs) {
      space->dimensions.push_back(std::move(*acfs));
      o.setup.acf_cache_dir = o.cache_dir;
    } else {
      std::fprintf(stderr, "ciq-tuner: warning: %s; searching without ACFs\n", printable(acfs.error().message).c_str());
    }
  }
  std::fprintf(stderr, "ciq-tuner: searching %zu dimensions (%.3g candidates) with a budget of %d evaluations\n",
               space->dimensions.size(), space->size(), o.search.budget);

  for (const auto& file : o.seeds) {
    auto text = read_file(file);
    if (!text) return text.error();
    auto set = spaces::parse_control_set(*text, file);
    if (!set) return set.error();
    auto c = candidate_from_controls(*space, *set);
    if (!c) return make_error("tuner", "seed " + file + ": " + c.error().message);
    if (space->repair(*c))
      std::fprintf(stderr, "ciq-tuner: warning: seed %s sets options ptxas refuses together; seeding %s instead\n",
                   file.c_str(), space->canonical(*c).c_str());
    o.search.seeds.push_back(*c);
  }
  // The random strategy is the baseline: it gets no informed candidates.
  if (o.occupancy_probes && !o.random_search) {
    std::size_t room = std::size_t(std::max(0, o.search.pool / 2 - int(o.search.seeds.size())));
    for (auto& s : occupancy_seeds(discovery, *space, room)) {
      std::fprintf(stderr, "ciq-tuner: occupancy probe %s:maxnreg=%d (%s)\n", printable(s.probe.kernel).c_str(), s.probe.maxnreg,
                   printable(s.probe.why).c_str());
      o.search.seeds.push_back(std::move(s.candidate));
    }
  }

  return std::move(*space);
}

// A finished evaluation that cannot be recorded (disk full, EIO) stops the
// run at once: going on would measure what a resume cannot replay. The
// journal holds whole lines only (append_whole_line), so the run resumes.
[[noreturn]] static void stop_unrecorded(const TuneOptions& o, const EvalRecord& r, const std::string& why) {
  kill_tracked_children();
  // Said in summary.json too if it can be (the disk may be full).
  (void)write_summary(o.out_dir, RunSummary{o.out_dir, std::nullopt, RunOutcome::failed,
                                            "cannot record evaluation " + std::to_string(r.number) + ": " + why});
  std::fprintf(stderr,
               "\nciq-tuner: error: cannot record evaluation %d: %s\n"
               "ciq-tuner: the run stopped; its journal holds every evaluation recorded before this one. Make room (or "
               "repair the file system), then continue with: ciq-tuner run --resume %s\n",
               r.number, why.c_str(), o.out_dir.c_str());
  std::_Exit(1); // other threads may be mid-evaluation: no destructors, no atexit
}

// One finished evaluation: a journal line (synced) and a results.csv row.
static void record_evaluation(const TuneOptions& o, const std::string& journal_path, const EvalRecord& r) {
  if (auto w = append_whole_line(journal_path, r.to_json()); !w) stop_unrecorded(o, r, w.error().message);
  if (auto w = ResultsCsv(o.out_dir, o.setup.objectives).append(r); !w) stop_unrecorded(o, r, w.error().message);
}

// The search itself, with the strategy the options ask for.
static SearchResult run_search(TuneOptions& o, const SearchSpace& space, const EvaluateBatch& batch,
                               const std::vector<EvalRecord>& journal) {
  // Several evaluations in flight: steady state, so that none waits for the
  // slowest of a generation. One at a time (or when asked): generations,
  // reproducible.
  bool steady = !o.random_search && !o.generational && o.setup.jobs > 1;
  if (steady) {
    for (const auto& r : journal)
      if (auto c = space.parse(r.candidate)) o.search.resumed.push_back(std::move(*c));
    std::fprintf(stderr, "ciq-tuner: steady-state search, %d evaluations in flight\n", o.setup.jobs);
  }
  return o.random_search ? random_search(space, o.search, batch)
         : steady        ? steady_state_search(space, o.search, batch, o.setup.jobs)
                         : genetic_search(space, o.search, batch);
}

// Drops every knob of the best that does not earn its place (a tie on
// spills must not ship an -O0 along with it). Measured objectives allow a
// quarter of the minimum effect for noise; the pruned set is what gets
// verified against the default.
static void prune_winner(const TuneOptions& o, const SearchSpace& space, Evaluator& evaluator, const EvaluateBatch& batch,
                         Progress& progress, SearchResult& result) {
  bool deterministic = std::all_of(o.setup.objectives.begin(), o.setup.objectives.end(), [](auto& x) { return x.deterministic(); });
  if (result.best.size() == 1 && result.evaluated[result.best[0]].candidate != space.default_candidate()) {
    const Evaluated& top = result.evaluated[result.best[0]];
    auto same_code = [&](const Candidate& a, const Candidate& b) {
      const EvalRecord* ra = evaluator.find(space.canonical(a));
      const EvalRecord* rb = evaluator.find(space.canonical(b));
      return ra && rb && !ra->digest.empty() && ra->digest == rb->digest;
    };
    progress.pruning();
    Candidate pruned = prune(space, top.candidate, top.evaluation, batch, top.generation + 1,
                             deterministic ? 0.0 : o.min_effect / 4, same_code);
    if (!(pruned == top.candidate)) {
      std::fprintf(stderr, "ciq-tuner: pruned the winner to %s\n", space.canonical(pruned).c_str());
      if (const EvalRecord* r = evaluator.find(space.canonical(pruned))) {
        result.evaluated.push_back(Evaluated{pruned, r->evaluation, r->generation});
        result.best = {result.evaluated.size() - 1};
      }
    }
  }
}

// The best evaluations (one, or the Pareto front with several objectives),
// best first; printed when there are several.
// With several objectives the preferred point (preferred_point: the best
// first objective that gives up no other) comes first: it is "the best" of
// the log, summary.json and the report, and the first one verified.
static std::vector<const EvalRecord*> pareto_front(const TuneOptions& o, const SearchSpace& space, const Evaluator& evaluator,
                                                   const SearchResult& result, const EvalRecord& def) {
  std::vector<const EvalRecord*> front;
  for (auto i : result.best) front.push_back(evaluator.find(space.canonical(result.evaluated[i].candidate)));
  std::sort(front.begin(), front.end(), [](auto a, auto b) { return a->evaluation.objectives < b->evaluation.objectives; });
  std::vector<const Evaluation*> points;
  for (auto* r : front) points.push_back(&r->evaluation);
  if (std::size_t p = preferred_point(points, &def.evaluation, o.prefer); p != SIZE_MAX && p > 0)
    std::rotate(front.begin(), front.begin() + std::ptrdiff_t(p), front.begin() + std::ptrdiff_t(p) + 1);
  if (front.size() > 1) {
    std::fprintf(stderr, "ciq-tuner: Pareto front (%zu points; * the preferred one: the best %s that is no worse than "
                         "the default on the other objectives):\n",
                 front.size(), o.setup.objectives[o.prefer].name.c_str());
    for (auto* r : front) {
      std::string values;
      for (std::size_t k = 0; k < o.setup.objectives.size(); ++k) values += (k ? ", " : "") + format_number(shown(o, *r, k));
      std::fprintf(stderr, "  %s %s  %s\n", r == front.front() ? "*" : " ", values.c_str(), r->candidate.c_str());
    }
  }

  return front;
}

// Verifies the front's candidates against the default, best first (at most
// four), until one is significantly better: that one is `*winner`.
static Verdict verify_front(const TuneOptions& o, Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def,
                            const std::vector<const EvalRecord*>& front, const EvalRecord** winner) {
  std::string default_key = space.canonical(space.default_candidate());
  Verdict verdict;
  verdict.reason = "the default was the best candidate found";
  verdict.default_values.resize(o.setup.objectives.size());
  verdict.best_values.resize(o.setup.objectives.size());
  for (std::size_t k = 0; k < o.setup.objectives.size(); ++k) verdict.default_values[k] = verdict.best_values[k] = shown(o, def, k);
  for (std::size_t i = 0; i < front.size() && i < 4; ++i) {
    if (front[i]->candidate == default_key) continue;
    std::fprintf(stderr, "ciq-tuner: verifying %s against the default\n", front[i]->candidate.c_str());
    Verdict v = verify(evaluator, space, def, *front[i], o);
    // When nothing ships, the verdict told is the preferred point's (the
    // front's first; when that is the default, the default's).
    if (i == 0 || v.better) verdict = v;
    if (v.better) {
      *winner = front[i];
      break;
    }
  }

  return verdict;
}

// The team tier: uploads exactly what was just written; "" or why it failed.
static std::string publish(const TuneOptions& o, const std::vector<Hash128>& shipped_keys) {
  auto published = cache::push_cache(o.cache_dir, o.publish, shipped_keys);
  if (!published) return published.error().message;
  std::fprintf(stderr, "ciq-tuner: published %d entr%s to %s (%d kept: the remote result is better)\n", published->pushed,
               published->pushed == 1 ? "y" : "ies", redact_secrets(o.publish).c_str(), published->kept_remote);
  for (const auto& why : published->refused) // the wrappers' rule: unsafe knobs need CIQ_ALLOW_UNSAFE=1
    std::fprintf(stderr, "ciq-tuner: not published: %s\n", printable(why).c_str());
  return "";
}

// Says what the search found and the verdict, and writes best.controls;
// returns the number of invalid evaluations.
// The default on each GPU (per-GPU baselines), for the log and summary.json.
static void say_gpu_defaults(const TuneOptions& o, const Evaluator& evaluator) {
  const auto& defaults = evaluator.gpu_defaults();
  if (defaults.size() < 2) return;
  std::size_t k = o.prefer;
  std::string line;
  for (const auto& d : defaults)
    line += (line.empty() ? "" : ", ") + std::string("GPU ") + d.gpu + " " + format_number(d.values[k]) +
            (&d == &defaults.front() ? "" : percent(defaults.front().values[k], d.values[k]));
  std::fprintf(stderr, "ciq-tuner: the default's %s on each GPU (median of %d run%s): %s; each run is compared with the default "
                       "of the GPU it ran on\n", o.setup.objectives[k].name.c_str(), defaults.front().runs, defaults.front().runs == 1 ? "" : "s", line.c_str());
}

static int report(const TuneOptions& o, const SearchSpace& space, const std::vector<EvalRecord>& records, const EvalRecord& def,
                  const std::vector<const EvalRecord*>& front, const EvalRecord* winner, const Verdict& verdict, int searched) {
  int invalid = 0;
  for (const auto& r : records) invalid += !r.evaluation.valid;
  // The best: what ships, else the preferred point of the front (first).
  const EvalRecord* best = winner ? winner : (front.empty() ? nullptr : front.front());
  std::string best_text = best ? best->candidate : "default";
  std::string split = int(records.size()) > searched ? ": " + std::to_string(searched) + " searching (--budget), " +
                                                          std::to_string(int(records.size()) - searched) + " pruning the winner"
                                                     : "";
  // With several objectives, in the preferred one's terms (named).
  std::size_t k = o.prefer;
  std::string named = o.setup.objectives.size() > 1 ? " " + o.setup.objectives[k].name : "";
  std::fprintf(stderr, "ciq-tuner: %zu evaluations%s (%d invalid); default%s %s, best found %s%s\n", records.size(), split.c_str(),
               invalid, named.c_str(), format_number(shown(o, def, k)).c_str(), best ? format_number(shown(o, *best, k)).c_str() : "-",
               best ? percent(shown(o, def, k), shown(o, *best, k)).c_str() : "");
  std::fprintf(stderr, "ciq-tuner: verdict: %s\n", printable_lines(verdict.reason).c_str());

  // The best control set, for people and for --seed.
  if (auto c = space.parse(best_text); c) {
    std::string text = "# best candidate of " + o.out_dir + "\n# " + best_text + "\n";
    if (o.setup.compiler) text += spaces::format_control_set(space.controls(*c));
    if (auto w = write_file_atomic(join_path(o.out_dir, "best.controls"), text); !w)
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(w.error().message).c_str());
  }

  return invalid;
}

// Writes the winner (or, when nothing won, the default as "tuned with no
// gain") to the cache under the keys its trace shows; the keys written.
static Result<std::vector<Hash128>> ship_to_cache(const TuneOptions& o, const SearchSpace& space,
                                                      const std::vector<EvalRecord>& records, const EvalRecord& def,
                                                      const EvalRecord* winner, const Verdict& verdict,
                                                      const std::vector<TracedModule>& discovery) {
  const EvalRecord* source = winner ? winner : &def;
  // Parameters are the program's to apply: only compiler controls reach the
  // cache. A winner that won by its parameters alone has the default's
  // controls: for the compiler that is "tuned, no gain".
  std::string knobs, params;
  if (winner) {
    auto c = space.parse(winner->candidate);
    if (!c) return c.error();
    Candidate controls_only = *c, none = space.default_candidate(); // the winner with its parameters at their defaults
    for (std::size_t i = 0; i < space.dimensions.size(); ++i)
      if (space.dimensions[i].kind == DimensionKind::param) {
        controls_only.genes[i] = none.genes[i];
        params += (params.empty() ? "" : " ") + space.dimensions[i].knob + "=" + space.param(*c, space.dimensions[i].knob);
      }
    if (space.canonical(controls_only) != space.canonical(none)) knobs = space.canonical(controls_only);
  }
  bool compiler_gain = winner && !knobs.empty();
  auto trace = read_trace(join_path(source->workdir, "trace"));
  if (!trace || trace->empty()) trace = discovery;
  auto written = ship(space, *source, *trace, verdict, o, int(records.size()), !compiler_gain);
  if (!written) return written.error();
  if (compiler_gain) {
    std::fprintf(stderr, "ciq-tuner: shipped %s to %zu cache entr%s in %s\n", knobs.c_str(), written->size(), written->size() == 1 ? "y" : "ies", o.cache_dir.c_str());
  } else if (winner) {
    std::fprintf(stderr, "ciq-tuner: the winner differs from the default in its parameters only: recorded %zu entr%s as tuned "
                         "with no gain from the compiler\n", written->size(), written->size() == 1 ? "y" : "ies");
  } else {
    std::fprintf(stderr, "ciq-tuner: nothing beat the default; recorded %zu entr%s as tuned with no gain\n", written->size(),
                 written->size() == 1 ? "y" : "ies");
  }
  if (!params.empty())
    std::fprintf(stderr, "ciq-tuner: the winner's parameters are yours to apply (the cache holds compiler controls only): %s\n",
                 params.c_str());
  return written;
}

// summary.json's results: the preferred objective's baseline and best, the
// counts, the verdict; with several objectives every objective's values and
// the front; per-GPU baselines when there were several GPUs.
static SummaryResults summary_results(const TuneOptions& o, const Evaluator& evaluator, const Verdict& verdict,
                                      const std::vector<const EvalRecord*>& front, const EvalRecord* winner, int invalid,
                                      int searched) {
  SummaryResults s;
  std::size_t k = o.prefer;
  s.objective = o.setup.objectives[k].name;
  s.baseline = verdict.default_values[k];
  s.best = verdict.best_values[k];
  s.evaluations = int(evaluator.records().size());
  s.invalid = invalid;
  s.searched = searched;
  s.pruning = s.evaluations - searched;
  if (verdict.how == "welch") s.p_value = verdict.p_value;
  s.controls = winner ? winner->candidate : "default";
  s.verdict = verdict.reason;
  if (o.setup.objectives.size() > 1) {
    s.baseline_values = verdict.default_values;
    s.best_values = verdict.best_values;
    for (const EvalRecord* r : front) {
      SummaryPoint p{r->candidate, {}};
      for (std::size_t j = 0; j < o.setup.objectives.size(); ++j) p.values.push_back(shown(o, *r, j));
      s.front.push_back(std::move(p));
    }
  }
  s.prefer = int(o.prefer) + 1;
  for (const auto& d : evaluator.gpu_defaults()) s.gpu_defaults.push_back(SummaryGpuDefault{d.gpu, d.runs, d.values});
  return s;
}

// A run that holds its directory and cannot go on: the reason in its
// summary.json (what a campaign reads), then on stderr.
static int fail_recorded(const TuneOptions& o, const std::string& message, std::optional<SummaryResults> results = std::nullopt) {
  RunSummary summary{o.out_dir, std::move(results), RunOutcome::failed, message};
  if (auto w = write_summary(o.out_dir, summary); !w)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(w.error().message).c_str());
  return fail(message);
}

int run_tuning(TuneOptions o) {
  if (auto checked = check_options(o); !checked) return fail(checked.error().message);
  if (auto claimed = claim_run_directory(o); !claimed) return fail(claimed.error().message);
  struct Unlock {
    ~Unlock() { release_run_directory(); }
  } unlock;
  auto opened = open_run(o);
  if (!opened) return fail_recorded(o, opened.error().message);
  std::vector<EvalRecord> journal = std::move(*opened);
  std::string journal_path = join_path(o.out_dir, "journal.jsonl");

  auto discovered = discover(o, o.units);
  if (!discovered) return fail_recorded(o, discovered.error().message);
  const std::vector<TracedModule>& discovery = *discovered;
  for (const auto& m : discovery) o.setup.baseline_warnings.insert(m.warnings.begin(), m.warnings.end());
  for (const auto& u : o.units) o.setup.baseline_warnings.insert(u.warnings.begin(), u.warnings.end());
  auto made = make_space(o, discovery);
  if (!made) return fail_recorded(o, made.error().message);
  auto space = &*made;

  auto made_evaluator = make_evaluator(o.setup, *space);
  Evaluator& evaluator = *made_evaluator;
  Progress progress(o, o.search.budget);
  const EvalRecord* baseline = nullptr;
  std::size_t best_index = SIZE_MAX;
  std::string default_key = space->canonical(space->default_candidate());
  evaluator.on_record = [&](const EvalRecord& r, bool from_journal) {
    // An evaluation that ended because its commands were killed by the
    // interrupt is not journalled (it would read "killed by signal 9" for
    // ever): the resumed run measures it.
    if (!from_journal && interrupt_arrived()) return;
    const auto& all = evaluator.records();
    std::vector<const Evaluation*> points;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].candidate == default_key) baseline = &all[i];
      points.push_back(&all[i].evaluation);
    }
    best_index = preferred_point(points, baseline ? &baseline->evaluation : nullptr, o.prefer); // what the summary will call the best
    if (!from_journal) record_evaluation(o, journal_path, r);
    progress.record(r, from_journal, baseline, best_index == SIZE_MAX ? nullptr : &all[best_index]);
  };
  evaluator.preload(journal);

  // The default first: if it fails, there is nothing to compare against.
  auto first = evaluator.evaluate_batch({space->default_candidate()}, 0);
  if (!first[0].valid) {
    progress.finish();
    const EvalRecord* failed = evaluator.find(default_key);
    std::string detail = failed && !failed->detail.empty() ? "\n" + failed->detail : "";
    return fail_recorded(o, "the default candidate fails, so nothing can be compared with it: " + first[0].reason + detail);
  }
  say_gpu_defaults(o, evaluator);
  EvaluateBatch batch = [&](const std::vector<Candidate>& cs, int g) { return evaluator.evaluate_batch(cs, g); };
  SearchResult result = run_search(o, *space, batch, journal);
  progress.finish();
  // What the search spent; pruning the winner comes on top (reported apart).
  int searched = int(std::min(result.evaluated.size(), evaluator.records().size()));

  prune_winner(o, *space, evaluator, batch, progress, result);
  const auto& records = evaluator.records();
  const EvalRecord* def = evaluator.find(default_key);
  std::vector<const EvalRecord*> front = pareto_front(o, *space, evaluator, result, *def);
  const EvalRecord* winner = nullptr;
  Verdict verdict = verify_front(o, evaluator, *space, *def, front, &winner);

  int invalid = report(o, *space, records, *def, front, winner, verdict, searched);

  std::vector<Hash128> shipped_keys; // the keys written to the cache
  bool shipped = false;
  // A comparison spoilt by the GPU's conditions says nothing of the code:
  // nothing is recorded then, not even "tuned, no gain".
  if (o.ship && o.setup.compiler && !winner && !verdict.conditions.empty())
    std::fprintf(stderr, "ciq-tuner: nothing written to the cache: the verification ran under different GPU conditions\n");
  else if (o.ship && o.setup.compiler) {
    auto written = ship_to_cache(o, *space, records, *def, winner, verdict, discovery);
    if (!written) return fail_recorded(o, "cannot write to the cache: " + written.error().message);
    shipped_keys = std::move(*written);
    shipped = winner != nullptr;
  }

  std::string publish_error = o.publish.empty() || shipped_keys.empty() ? "" : publish(o, shipped_keys);

  RunSummary summary{o.out_dir, summary_results(o, evaluator, verdict, front, winner, invalid, searched), RunOutcome::finished, ""};
  if (!publish_error.empty()) {
    summary.outcome = RunOutcome::failed;
    summary.reason = "shipped to the local cache, but publishing to " + redact_secrets(o.publish) + " failed: " + publish_error +
                     " (retry with: ciq-cache push " + redact_secrets(o.publish) + ", the password in place of ***)";
  }
  summary.results->shipped = shipped;
  summary.results->entries = int(shipped_keys.size());
  auto summary_written = write_summary(o.out_dir, summary);
  if (o.json) std::cout << summary.to_json() << std::endl;
  else std::cout << (winner ? winner->candidate : "default") << "\n";
  if (!publish_error.empty()) return fail(summary.reason);
  if (!summary_written) return fail("the run finished, but its summary could not be saved: " + summary_written.error().message);
  return 0;
}

int sample_space(const TuneOptions& o, int count) {
  SpaceRequest request{o.space.empty() ? "none" : o.space, o.params, o.setup.kernels, !o.setup.check.empty(), o.allow_unsafe, o.stages, {}};
  auto space = build_search_space(request, {});
  if (!space) return fail(space.error().message);
  std::mt19937_64 rng(o.search.seed);
  for (int i = 0; i < count; ++i) std::cout << space->canonical(space->random_candidate(rng)) << "\n";
  return 0;
}

} // namespace ciq::tuner
