#include "tuner/run/remeasure.h"

#include "tuner/measure/evaluator.h"
#include "tuner/run/discovery.h"
#include "tuner/run/progress.h"
#include "tuner/run/run_directory.h"
#include "tuner/run/run_start.h"
#include "tuner/run/space_setup.h"
#include "tuner/run/verify.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/summary.h"
#include "utils/text.h"

#include <cstdio>
#include <iostream>

namespace ciq::tuner {

namespace {

// What the verification found, as summary.json's results say it.
SummaryResults remeasured(const TuneOptions& o, const Evaluator& evaluator, const EvalRecord& set, const Verdict& v) {
  SummaryResults s;
  s.objective = o.setup.objectives[o.prefer].name;
  s.baseline = v.default_values[o.prefer];
  s.best = v.best_values[o.prefer];
  s.evaluations = int(evaluator.records().size());
  s.searched = s.evaluations;
  if (v.method == VerifyMethod::welch) s.p_value = v.p_value;
  s.controls = v.better ? set.candidate : "default";
  s.verdict = v.reason;
  s.prefer = int(o.prefer) + 1;
  return s;
}

} // namespace

int run_remeasure(TuneOptions o) {
  o.ship = false;
  o.occupancy_probes = false; // the set alone is measured
  struct Unlock { // the directory start_run() claims is held until the verification ends
    ~Unlock() { release_run_directory(); }
  } unlock;
  // Not `run --resume` (open_run's advice): a verification measures afresh.
  static const char* interrupted = "\nciq-tuner: interrupted; a verification is not resumed: measure again with a new --out "
                                   "(ciq-tuner reverify does)\n";
  RunStart start = start_run(o, interrupted);
  if (start.exit_status) return start.exit_status;
  o.setup.module_mates = module_mates(start.discovery, o.setup.objectives);
  auto space = build_run_space(o, start.discovery);
  if (!space) return fail_recorded(o, space.error().message);
  if (o.search.seeds.empty()) return fail_recorded(o, "--verify-controls gave no control set to measure");
  Candidate set = o.search.seeds.front();
  std::string default_key = space->canonical(space->default_candidate()), set_key = space->canonical(set);
  if (set_key == default_key) return fail_recorded(o, "the control set is the default's in this run's space: nothing to compare");

  auto evaluator = make_evaluator(o.setup, *space);
  evaluator->on_record = [&o](const EvalRecord& r, bool from_journal) {
    if (!from_journal) record_evaluation(o, r);
  };
  std::fprintf(stderr, "ciq-tuner: measuring the default, then %s\n", printable(set_key).c_str());
  for (const Candidate& c : {space->default_candidate(), set}) {
    auto done = evaluator->evaluate_batch({c}, 0);
    if (!done[0].valid) {
      const EvalRecord* failed = evaluator->find(space->canonical(c));
      std::string detail = failed && !failed->detail.empty() ? "\n" + failed->detail : "";
      return fail_recorded(o, std::string(c == set ? "the control set" : "the default") + " fails here: " + done[0].reason + detail);
    }
  }
  const EvalRecord* def = evaluator->find(default_key);
  const EvalRecord* measured = evaluator->find(set_key);
  if (!def || !measured) return fail_recorded(o, "the measurements of the default and the set were not kept");
  std::fprintf(stderr, "ciq-tuner: verifying %s against the default\n", printable(set_key).c_str());
  Verdict v = verify(*evaluator, *space, *def, *measured, o);
  evaluator->on_record = nullptr;
  if (!v.measured) return fail_recorded(o, "could not re-measure: " + v.reason);
  if (!v.conditions.empty())
    return fail_recorded(o, "the default and the set ran under different GPU conditions (" + v.conditions +
                                "), so the comparison says nothing: measure again when the GPU is steady");
  std::fprintf(stderr, "ciq-tuner: verdict: %s\n", printable(v.reason).c_str());

  RunSummary summary{o.out_dir, remeasured(o, *evaluator, *measured, v), RunOutcome::finished, ""};
  auto written = write_summary(o.out_dir, summary);
  if (o.json) std::cout << summary.to_json() << std::endl;
  else std::cout << summary.results->controls << "\n";
  if (!written) return fail("the verification finished, but its summary could not be saved: " + written.error().message);
  return 0;
}

} // namespace ciq::tuner
