#include "tuner/orchestrate/run.h"

#include "tuner/measure/evaluator.h"
#include "tuner/orchestrate/discovery.h"
#include "tuner/orchestrate/progress.h"
#include "tuner/orchestrate/run_directory.h"
#include "tuner/orchestrate/ship.h"
#include "tuner/orchestrate/space_setup.h"
#include "tuner/orchestrate/verify.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/summary.h"
#include "utils/process.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <algorithm>
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
  SearchResult result = run_search(o, space, batch, journal);
  progress.finish();
  Found found;
  found.searched = int(std::min(result.evaluated.size(), evaluator.records().size()));
  prune_winner(o, space, evaluator, batch, progress, result);
  found.def = evaluator.find(default_key);
  found.front = pareto_front(o, space, evaluator, result, *found.def);
  found.verdict = verify_front(o, evaluator, space, *found.def, found.front, &found.winner);
  evaluator.on_record = nullptr; // `progress` ends here
  return found;
}

// summary.json's results: the preferred objective's baseline and best, the
// counts, the verdict; with several objectives every objective's values and
// the front; per-GPU baselines when there were several GPUs.
SummaryResults summary_results(const TuneOptions& o, const Evaluator& evaluator, const Found& found, int invalid) {
  SummaryResults s;
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
  s.prefer = int(o.prefer) + 1;
  for (const auto& d : evaluator.gpu_defaults()) s.gpu_defaults.push_back(SummaryGpuDefault{d.gpu, d.runs, d.values});
  return s;
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
  if (o.ship && o.setup.compiler && !found.winner && !found.verdict.conditions.empty())
    std::fprintf(stderr, "ciq-tuner: nothing written to the cache: the verification ran under different GPU conditions\n");
  else if (o.ship && o.setup.compiler) {
    auto written = ship_result(o, space, records, *found.def, found.winner, found.verdict, discovery);
    if (!written) return fail_recorded(o, "cannot write to the cache: " + written.error().message);
    shipped_keys = std::move(*written);
    shipped = found.winner != nullptr;
  }
  std::string publish_error = o.publish.empty() || shipped_keys.empty() ? "" : publish_shipped(o, shipped_keys);

  RunSummary summary{o.out_dir, summary_results(o, evaluator, found, invalid), RunOutcome::finished, ""};
  summary.results->shipped = shipped;
  summary.results->entries = int(shipped_keys.size());
  if (!publish_error.empty()) {
    summary.outcome = RunOutcome::failed;
    summary.reason = "shipped to the local cache, but publishing to " + redact_secrets(o.publish) + " failed: " + publish_error +
                     " (retry with: ciq-cache push " + redact_secrets(o.publish) + ", the password in place of ***)";
  }
  auto summary_written = write_summary(o.out_dir, summary);
  if (o.json) std::cout << summary.to_json() << std::endl;
  else std::cout << (found.winner ? found.winner->candidate : "default") << "\n";
  if (!publish_error.empty()) return fail(summary.reason);
  if (!summary_written) return fail("the run finished, but its summary could not be saved: " + summary_written.error().message);
  return 0;
}

} // namespace

int run_tuning(TuneOptions o) {
  if (auto prepared = prepare_run(o); !prepared) return fail(prepared.error());
  if (auto claimed = claim_run_directory(o); !claimed) return fail(claimed.error().message);
  struct Unlock {
    ~Unlock() { release_run_directory(); }
  } unlock;
  auto journal = open_run(o);
  if (!journal) return fail_recorded(o, journal.error().message);
  auto discovery = discover(o, o.units);
  if (!discovery) return fail_recorded(o, discovery.error().message);
  // A candidate that adds a warning the default build did not give is not
  // compiled as asked (measure/).
  for (const auto& m : *discovery) o.setup.baseline_warnings.insert(m.warnings.begin(), m.warnings.end());
  for (const auto& u : o.units) o.setup.baseline_warnings.insert(u.warnings.begin(), u.warnings.end());
  auto space = build_run_space(o, *discovery);
  if (!space) return fail_recorded(o, space.error().message);
  auto evaluator = make_evaluator(o.setup, *space);
  auto found = search_and_verify(o, *space, *evaluator, *journal);
  if (!found) return fail_recorded(o, found.error().message);
  return conclude(o, *space, *evaluator, *found, *discovery);
}

} // namespace ciq::tuner
