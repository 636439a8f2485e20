#include "tuner/run/run.h"

#include "tuner/measure/evaluator.h"
#include "tuner/run/discovery.h"
#include "tuner/run/kernel_parts.h"
#include "tuner/run/progress.h"
#include "tuner/run/run_directory.h"
#include "tuner/run/run_start.h"
#include "tuner/run/ship.h"
#include "tuner/run/space_setup.h"
#include "tuner/run/verify.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/summary.h"
#include "tuner/objectives/statistics.h"
#include "tuner/search/lockstep.h"
#include "tuner/search/space_builder.h"
#include "utils/process.h"
#include "utils/redis.h"
#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <cstdio>
#include <iostream>

namespace ciq::tuner {

namespace {

// What the search and the verification came to.
struct Found {
  const EvalRecord* def = nullptr;           // the default's record
  std::vector<const EvalRecord*> front;      // the best, preferred first
  const EvalRecord* winner = nullptr;        // verified better than the default; null: none
  Verdict verdict;
  int searched = 0;                          // evaluations spent searching (pruning comes on top)
  // --separately (several targeted kernels): each kernel's part, its
  // verification, and whether it ships; `front` and `winner` then point
  // into `composed` (records of compositions no single run measured).
  std::vector<KernelPart> parts;
  std::vector<PartVerdict> part_verdicts;    // per part
  std::vector<bool> kept;                    // per part: its part wins and ships
  std::vector<std::shared_ptr<EvalRecord>> composed;
};

// The search itself, with the strategy the options ask for.
SearchResult run_search(TuneOptions& o, const SearchSpace& space, const EvaluateBatch& batch,
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

// --separately: one search per kernel (lockstep.h), each scored by its
// kernel's own time in the program runs that carried its candidates; the
// i-th candidates of all of them make one program run. The budget counts
// program runs (distinct whole candidates, the default's included): what
// the searches propose beyond it is answered "budget spent" unrun.
// Returns the evaluations the searches asked for.
int run_part_searches(const TuneOptions& o, const SearchSpace& space, Evaluator& evaluator) {
  std::vector<KernelPart> parts;
  std::vector<std::vector<std::size_t>> dims;
  for (auto& p : kernel_parts(space, o.setup.own_kernels))
    if (!p.dims.empty()) {
      dims.push_back(p.dims);
      parts.push_back(std::move(p));
    }
  std::set<std::string> asked{space.canonical(space.default_candidate())};
  EvaluateParts evaluate = [&](const std::vector<Candidate>& whole, int round) {
    std::vector<Candidate> within;
    for (const auto& c : whole)
      if (asked.count(space.canonical(c)) || int(asked.size()) < o.search.budget) {
        asked.insert(space.canonical(c));
        within.push_back(c);
      }
    evaluator.evaluate_batch(within, round);
    std::vector<std::vector<Evaluation>> out;
    for (const auto& c : whole) {
      const EvalRecord* r = evaluator.find(space.canonical(c));
      std::vector<Evaluation> mine(parts.size());
      for (std::size_t p = 0; p < parts.size(); ++p) {
        Evaluation& e = mine[p];
        if (!r) {
          e.reason = "the run's budget of program runs is spent";
          continue;
        }
        auto it = r->kernel_samples.find(parts[p].kernel);
        if (!r->evaluation.valid) e.reason = r->evaluation.reason;
        else if (it == r->kernel_samples.end() || it->second.empty()) e.reason = "the kernel did not run";
        else e = Evaluation{true, {median(it->second)}, ""};
      }
      out.push_back(std::move(mine));
    }
    return out;
  };
  std::fprintf(stderr, "ciq-tuner: one search per kernel (%zu), their i-th candidates measured in the same program run\n",
               parts.size());
  lockstep_search(space, dims, o.search, evaluate, o.random_search);
  return int(asked.size());
}

// Every finished evaluation: journalled (unless replayed from the journal,
// or ended by an interrupt: "killed by signal 9" would be read for ever;
// the resumed run measures it) and shown with the default and the best so
// far (the best as the summary will call it: preferred_point).
void watch_records(const TuneOptions& o, Evaluator& evaluator, Progress& progress, const std::string& default_key) {
  evaluator.on_record = [&o, &evaluator, &progress, default_key](const EvalRecord& r, bool from_journal) {
    if (!from_journal && interrupt_arrived()) return;
    const auto& all = evaluator.records();
    const EvalRecord* baseline = nullptr;
    std::vector<const Evaluation*> points;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].candidate == default_key) baseline = &all[i];
      points.push_back(&all[i].evaluation);
    }
    std::size_t best = preferred_point(points, baseline ? &baseline->evaluation : nullptr, o.prefer);
    if (!from_journal) record_evaluation(o, r);
    progress.record(r, from_journal, baseline, best == SIZE_MAX ? nullptr : &all[best]);
  };
}

// A composition of parts as a record: its candidate, the summed objective
// `value` (as the search compares it) and the verification's directory
// (its trace: the keys to ship under).
std::shared_ptr<EvalRecord> composed_record(const TuneOptions& o, const SearchSpace& space, const Candidate& c, double value) {
  auto r = std::make_shared<EvalRecord>();
  r->candidate = space.canonical(c);
  r->status = EvalStatus::ok;
  r->evaluation.valid = true;
  r->evaluation.objectives = {o.setup.objectives[0].maximize ? -value : value};
  r->workdir = join_path(join_path(o.out_dir, "verify"), "best");
  return r;
}

// --separately: each kernel's best part from its own times, their
// composition verified against the default with each kernel judged by its
// own samples; the parts that win make the winner (the others stay at the
// default). No pruning: a part is judged whole, by its kernel's time.
void compose_and_verify(const TuneOptions& o, const SearchSpace& space, Evaluator& evaluator, Found& found) {
  found.parts = kernel_parts(space, o.setup.own_kernels);
  find_best_parts(space, evaluator.records(), found.parts);
  std::vector<std::string> judged;
  for (const auto& p : found.parts) {
    std::string best = part_text(space, p, p.best);
    std::fprintf(stderr, "ciq-tuner: %s: default %s ms, best %s ms%s with %s (%d distinct settings measured)\n",
                 printable(p.kernel).c_str(), format_number(p.default_ms).c_str(), format_number(p.best_ms).c_str(),
                 percent(p.default_ms, p.best_ms).c_str(), printable(best).c_str(), p.parts);
    if (best != k_default_candidate) judged.push_back(p.kernel);
  }
  Candidate all = compose_parts(space, found.parts);
  found.verdict.reason = "the default was the best candidate found for every kernel";
  found.verdict.default_values = found.verdict.best_values = {shown(o, *found.def, 0)};
  std::vector<PartVerdict> verdicts;
  if (!judged.empty()) {
    std::fprintf(stderr, "ciq-tuner: verifying %s (each kernel's best) against the default\n", space.canonical(all).c_str());
    found.verdict = verify_parts(evaluator, space, *found.def, all, judged, o, verdicts);
  }
  found.kept.assign(found.parts.size(), false);
  double baseline = found.verdict.default_values[0], gain = 0;
  for (std::size_t i = 0; i < found.parts.size(); ++i) {
    PartVerdict mine;
    mine.kernel = found.parts[i].kernel;
    mine.reason = "the default was the best candidate found";
    for (const auto& v : verdicts)
      if (v.kernel == mine.kernel) mine = v;
    found.kept[i] = mine.better;
    if (mine.better) gain += mine.default_ms - mine.best_ms;
    found.part_verdicts.push_back(std::move(mine));
  }
  // Unverified (its runs failed), the composition's value is the search's
  // estimate: the default's less every judged kernel's gain.
  double all_value = found.verdict.best_values[0];
  if (!found.verdict.measured) {
    all_value = shown(o, *found.def, 0);
    for (const auto& p : found.parts) all_value -= p.default_ms - p.best_ms;
  }
  found.composed.push_back(composed_record(o, space, all, all_value));
  found.front = {found.composed.back().get()};
  if (std::find(found.kept.begin(), found.kept.end(), true) != found.kept.end()) {
    // What ships: the winning parts; the summed objective less their gains.
    found.composed.push_back(composed_record(o, space, compose_parts(space, found.parts, &found.kept), baseline - gain));
    found.winner = found.composed.back().get();
  }
}

// The default first (if it fails there is nothing to compare against: the
// error), then the search, pruning, the front and its verification.
Result<Found> search_and_verify(TuneOptions& o, const SearchSpace& space, Evaluator& evaluator, const std::vector<EvalRecord>& journal) {
  Progress progress(o, o.search.budget);
  std::string default_key = space.canonical(space.default_candidate());
  watch_records(o, evaluator, progress, default_key);
  evaluator.preload(journal);
  auto first = evaluator.evaluate_batch({space.default_candidate()}, 0);
  if (!first[0].valid) {
    progress.finish();
    const EvalRecord* failed = evaluator.find(default_key);
    std::string detail = failed && !failed->detail.empty() ? "\n" + failed->detail : "";
    return make_error("tuner", "the default candidate fails, so nothing can be compared with it: " + first[0].reason + detail);
  }
  say_gpu_defaults(o, evaluator);
  EvaluateBatch batch = [&](const std::vector<Candidate>& cs, int g) { return evaluator.evaluate_batch(cs, g); };
  Found found;
  if (!o.setup.own_kernels.empty()) {
    found.searched = run_part_searches(o, space, evaluator);
    progress.finish();
    found.def = evaluator.find(default_key);
    // A targeted kernel the default's runs never launched has no time to
    // judge by: said as the run of one kernel says it, nothing recorded.
    const auto& ran = found.def->kernel_samples;
    for (const auto& kernel : o.setup.own_kernels)
      if (auto it = ran.find(kernel); it == ran.end() || it->second.empty()) {
        evaluator.on_record = nullptr;
        return make_error(ciq::errc::no_timing, "the default candidate fails, so nothing can be compared with it: no kernel matching '" +
                                           kernel + "' ran (--separately times each targeted kernel on its own)");
      }
    compose_and_verify(o, space, evaluator, found);
    evaluator.on_record = nullptr;
    return found;
  }
  SearchResult result = run_search(o, space, batch, journal);
  progress.finish();
  found.searched = int(std::min(result.evaluated.size(), evaluator.records().size()));
  if (o.prune) prune_winner(o, space, evaluator, batch, progress, result);
  found.def = evaluator.find(default_key);
  found.front = pareto_front(o, space, evaluator, result, *found.def);
  found.verdict = verify_front(o, evaluator, space, *found.def, found.front, &found.winner);
  evaluator.on_record = nullptr; // `progress` ends here
  return found;
}

// summary.json's results: the preferred objective's baseline and best, the
// counts, the verdict; with several objectives every objective's values and
// the front; per-GPU baselines when there were several GPUs.
SummaryResults summary_results(const TuneOptions& o, const SearchSpace& space, const Evaluator& evaluator, const Found& found,
                               int invalid, bool shipped) {
  SummaryResults s;
  s.shipped = shipped;
  const Verdict& verdict = found.verdict;
  std::size_t k = o.prefer;
  s.objective = o.setup.objectives[k].name;
  s.baseline = verdict.default_values[k];
  s.best = verdict.best_values[k];
  s.evaluations = int(evaluator.records().size());
  s.invalid = invalid;
  s.searched = found.searched;
  s.pruning = s.evaluations - found.searched;
  if (verdict.method == VerifyMethod::welch) s.p_value = verdict.p_value;
  s.controls = found.winner ? found.winner->candidate : "default";
  s.verdict = verdict.reason;
  if (o.setup.objectives.size() > 1) {
    s.baseline_values = verdict.default_values;
    s.best_values = verdict.best_values;
    for (const EvalRecord* r : found.front) {
      SummaryPoint p{r->candidate, {}};
      for (std::size_t j = 0; j < o.setup.objectives.size(); ++j) p.values.push_back(shown(o, *r, j));
      s.front.push_back(std::move(p));
    }
  }
  if (!verdict.measured) {
    // No verification to tell: the search's values, and no test.
    const EvalRecord* top = found.front.empty() ? found.def : found.front.front();
    s.baseline = shown(o, *found.def, k);
    s.best = shown(o, *top, k);
    s.p_value.reset();
    if (o.setup.objectives.size() > 1)
      for (std::size_t j = 0; j < o.setup.objectives.size(); ++j) {
        s.baseline_values[j] = shown(o, *found.def, j);
        s.best_values[j] = shown(o, *top, j);
      }
  }
  s.prefer = int(o.prefer) + 1;
  if (!found.parts.empty() && found.winner) s.best = shown(o, *found.winner, 0);
  for (std::size_t i = 0; i < found.parts.size(); ++i) {
    const KernelPart& part = found.parts[i];
    const PartVerdict& v = found.part_verdicts[i];
    SummaryKernel k;
    k.kernel = part.kernel;
    // The verification's medians where it judged the kernel, else the search's.
    bool judged = std::isfinite(v.default_ms);
    k.baseline = judged ? v.default_ms : part.default_ms;
    k.best = judged ? v.best_ms : part.best_ms;
    k.p_value = v.p_value;
    k.controls = found.kept[i] ? part_text(space, part, part.best) : "default";
    k.shipped = found.kept[i] && s.shipped;
    k.parts = part.parts;
    k.verdict = v.reason;
    s.kernels.push_back(std::move(k));
  }
  for (const auto& d : evaluator.gpu_defaults()) s.gpu_defaults.push_back(SummaryGpuDefault{d.gpu, d.runs, d.values});
  return s;
}

// To the cache: the winner (or the default as "tuned, no gain"); with
// --separately each kernel on its own, with its own verdict and times in
// the provenance: its winning part, or the default as no gain.
Result<std::vector<Hash128>> ship_found(const TuneOptions& o, const SearchSpace& space, const std::vector<EvalRecord>& records,
                                        const Found& found, const std::vector<TracedModule>& discovery) {
  if (found.parts.empty()) return ship_result(o, space, records, *found.def, found.winner, found.verdict, discovery);
  std::vector<Hash128> keys;
  for (std::size_t i = 0; i < found.parts.size(); ++i) {
    const PartVerdict& pv = found.part_verdicts[i];
    Verdict v = found.verdict;
    v.better = found.kept[i];
    v.reason = pv.reason;
    if (pv.p_value) v.p_value = *pv.p_value;
    else v.method = VerifyMethod::none;
    v.default_values = {std::isfinite(pv.default_ms) ? pv.default_ms : found.parts[i].default_ms};
    v.best_values = {std::isfinite(pv.best_ms) ? pv.best_ms : found.parts[i].best_ms};
    std::vector<bool> only(found.parts.size(), false);
    only[i] = true;
    auto part = composed_record(o, space, compose_parts(space, found.parts, &only), v.best_values[0]);
    std::set<std::string> kernel{found.parts[i].kernel};
    auto written = ship_result(o, space, records, *found.def, found.kept[i] ? part.get() : nullptr, v, discovery, &kernel);
    if (!written) return written.error();
    keys.insert(keys.end(), written->begin(), written->end());
  }
  return keys;
}

// What the run found, said and kept: the results on stderr, best.controls,
// the cache (unless the GPU's conditions spoilt the comparison: then
// nothing, not even "tuned, no gain"), the team tier, summary.json and the
// last stdout line (the summary with --json, else the winner).
int conclude(const TuneOptions& o, const SearchSpace& space, const Evaluator& evaluator, const Found& found,
             const std::vector<TracedModule>& discovery) {
  const auto& records = evaluator.records();
  // The best: what ships, else the preferred point of the front (first).
  const EvalRecord* best = found.winner ? found.winner : (found.front.empty() ? nullptr : found.front.front());
  int invalid = say_results(o, records, *found.def, best, found.verdict.reason, found.searched);
  write_best_controls(o, space, best ? best->candidate : "default");

  std::vector<Hash128> shipped_keys; // the keys written to the cache
  bool shipped = false;
  // The verification could not measure the preferred point (its runs
  // failed): the run has no verdict, so nothing is kept, not even "tuned,
  // no gain", and it fails (a campaign then tunes the kernel another way or
  // again when resumed).
  bool unmeasured = !found.winner && !found.verdict.measured;
  if (o.ship && o.setup.compiler && unmeasured)
    std::fprintf(stderr, "ciq-tuner: nothing written to the cache: the verification could not measure the best candidate\n");
  else if (o.ship && o.setup.compiler && !found.winner && !found.verdict.conditions.empty())
    std::fprintf(stderr, "ciq-tuner: nothing written to the cache: the verification ran under different GPU conditions\n");
  else if (o.ship && o.setup.compiler) {
    auto written = ship_found(o, space, records, found, discovery);
    if (!written) return fail_recorded(o, "cannot write to the cache: " + written.error().message);
    shipped_keys = std::move(*written);
    shipped = found.winner != nullptr;
  }
  std::string publish_error = o.publish.empty() || shipped_keys.empty() ? "" : publish_shipped(o, shipped_keys);

  RunSummary summary{o.out_dir, summary_results(o, space, evaluator, found, invalid, shipped), RunOutcome::finished, ""};
  summary.results->entries = int(shipped_keys.size());
  if (unmeasured) {
    summary.outcome = RunOutcome::failed;
    summary.reason = found.verdict.reason + "; nothing was kept (--resume " + o.out_dir + " verifies again)";
  } else if (!publish_error.empty()) {
    summary.outcome = RunOutcome::failed;
    summary.reason = "shipped to the local cache, but publishing to " + redact_secrets(o.publish) + " failed: " + publish_error +
                     " (retry with: ciq-cache push " + redact_secrets(o.publish) + ", the password in place of ***)";
  }
  auto summary_written = write_summary(o.out_dir, summary);
  if (o.json) print_summary(summary);
  else std::cout << (found.winner ? found.winner->candidate : "default") << "\n";
  if (unmeasured || !publish_error.empty()) return fail(summary.reason);
  if (!summary_written) return fail("the run finished, but its summary could not be saved: " + summary_written.error().message);
  return 0;
}

} // namespace

int run_tuning(TuneOptions o) {
  struct Unlock { // the directory start_run() claims is held until the run ends
    ~Unlock() { release_run_directory(); }
  } unlock;
  RunStart start = start_run(o);
  if (start.exit_status) return start.exit_status;
  const std::vector<TracedModule>& discovery = start.discovery;
  if (o.separately) {
    auto targets = targeted_kernels(discovery, o.setup.kernels);
    if (targets.size() > 1) {
      o.setup.own_kernels = targets;
      std::fprintf(stderr, "ciq-tuner: --separately: %zu kernels, each timed on its own in every program run\n", targets.size());
    } else {
      std::fprintf(stderr, "ciq-tuner: --separately: %s targeted kernel, tuned as without it\n", targets.empty() ? "no" : "one");
    }
  }
  if (o.setup.own_kernels.empty()) o.setup.module_mates = module_mates(discovery, o.setup.objectives);
  auto space = build_run_space(o, discovery);
  if (!space) return fail_recorded(o, space.error().message);
  auto evaluator = make_evaluator(o.setup, *space);
  auto found = search_and_verify(o, *space, *evaluator, start.journal);
  if (!found) return fail_recorded(o, found.error().message);
  return conclude(o, *space, *evaluator, *found, discovery);
}

} // namespace ciq::tuner
