// The measuring room's one entry point: evaluating candidates the way the
// user would. For each candidate: write its control set, run their build
// with CIQ_CONTROLS/CIQ_TRACE set (so ciq-ptxas applies it and reports what
// it compiled), check it was compiled as asked, reuse the result of an
// earlier candidate that compiled to the same code, else run their
// benchmark and check and score it. Any failure makes the candidate invalid
// with a reason; it never stops the search. Batches run `jobs` candidates
// at a time. The pieces behind it, which nothing outside measure/ names:
//   step.h           a step's placeholders and environment, run through the executor
//   gpu_pool.h       the benchmark slots, held one run at a time
//   bench_run.h      one benchmark run: NVML, kernel-time folders, the values
//   gpu_baselines.h  per-GPU defaults and the scale they give
//   honoured.h       "was it compiled as asked": trace problems, added warnings
//   code_identity.h  the code digest and same-code reuse
//   scoring.h        samples and the values the search compares
//   replay_evaluator.h  the evaluator of a replay (make_evaluator())
#pragma once

#include "tuner/measure/bench_run.h"
#include "tuner/measure/executor.h"
#include "tuner/measure/gpu_baselines.h"
#include "tuner/measure/gpu_pool.h"
#include "tuner/measure/honoured.h"
#include "tuner/measure/setup.h"
#include "tuner/measure/step.h"
#include "tuner/rundir/journal.h"
#include "tuner/objectives/objectives.h"
#include "tuner/search/candidate.h"
#include "tuner/search/search.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

/// Runs the user's build, benchmark and check commands for each candidate
/// (through the setup's executor: executor.h) and keeps the journal's records; make_evaluator()
/// gives a replay one instead when the setup has recorded samples.
class Evaluator {
public:
  Evaluator(TuningSetup setup, const SearchSpace& space);
  virtual ~Evaluator() = default;

  /// Past evaluations (from a journal) answered without running anything.
  void preload(const std::vector<EvalRecord>& records);
  /// Called (under a lock) for every finished evaluation, new or preloaded.
  std::function<void(const EvalRecord&, bool from_journal)> on_record;

  /// The search's entry point: evaluates new candidates, `jobs` at a time.
  std::vector<Evaluation> evaluate_batch(const std::vector<Candidate>& batch, int generation);

  /// Builds `c` in `workdir` and returns what ciq-ptxas traced, or why not.
  virtual Result<std::vector<TracedModule>> build(const ResolvedCandidate& c, const std::string& workdir);
  /// One benchmark run of what was built in `workdir`, on `run.gpu` (or the
  /// first free GPU): the value of every benchmark objective, as printed
  /// (not negated, not scaled to a baseline). bench_run.h.
  virtual Result<std::vector<double>> bench_once(const ResolvedCandidate& c, const std::string& workdir, BenchRun& run);
  Result<std::vector<double>> bench_once(const ResolvedCandidate& c, const std::string& workdir) {
    BenchRun run;
    return bench_once(c, workdir, run);
  }

  /// Per-GPU baselines (gpu_baselines.h): on with several GPUs and a
  /// benchmark, unless setup.gpu_baselines = false.
  bool per_gpu_baselines() const;
  /// The default on each GPU, once measured (or read from the journal).
  const std::vector<GpuDefault>& gpu_defaults() const { return gpu_defaults_; }
  /// Where the verification runs both sides: one GPU, the first slot.
  std::string verification_gpu() const { return gpus_.slots().empty() ? "" : gpus_.slots().front(); }

  const std::vector<EvalRecord>& records() const { return records_; }
  /// The record of a candidate (by canonical text), or null; call between batches.
  const EvalRecord* find(const std::string& canonical) const {
    auto it = by_candidate_.find(canonical);
    return it == by_candidate_.end() ? nullptr : &records_[it->second];
  }
  const TuningSetup& setup() const { return setup_; }

protected:
  /// Whether the benchmark compiles (a JIT: no --build), so the trace
  /// appears only after it ran.
  virtual bool compiles_when_benchmarked() const { return setup_.build.empty(); }

private:
  /// Every step reads `c` as resolved once (ResolvedCandidate).
  EvalRecord evaluate(const ResolvedCandidate& c, int generation, int number);
  /// The benchmark runs (a JIT build's trace read after them) and the
  /// check; why the candidate is invalid, or "".
  std::string measure(const ResolvedCandidate& c, EvalRecord& r, std::vector<TracedModule>& trace,
                      std::vector<std::vector<double>>& bench_values);
  /// The default's benchmark runs with per-GPU baselines, --repeats on every GPU at once.
  std::string measure_on_every_gpu(const ResolvedCandidate& c, EvalRecord& r, std::vector<std::vector<double>>& bench_values);
  /// --check on a free GPU; why the candidate is invalid, or "".
  std::string check(const ResolvedCandidate& c, EvalRecord& r);
  /// Takes the result of a measured candidate with r.digest; false if none.
  bool reuse_same_code(EvalRecord& r);
  void score(EvalRecord& r, const std::vector<TracedModule>& trace, const std::vector<std::vector<double>>& bench_values);
  /// Sets gpu_defaults_ from the default's record (its samples and
  /// run_gpus), or says why not on stderr.
  void learn_gpu_defaults(const EvalRecord& def);
  bool is_default(const std::string& canonical) const;
  bool benchmarks() const;
  /// The next evaluation number: a free one a killed run left first.
  int take_number();

  TuningSetup setup_;
  const SearchSpace& space_;
  std::string default_key_; // the default candidate's canonical text
  std::shared_ptr<Executor> executor_;
  GpuPool gpus_;
  StepRunner steps_;
  HonouredCheck honoured_;
  std::mutex mutex_; // guards what follows: the records and their indexes
  std::vector<GpuDefault> gpu_defaults_;
  std::vector<EvalRecord> records_;
  std::map<std::string, std::size_t> by_candidate_, by_digest_;
  int next_number_ = 0;
  // Numbers below next_number_ that no journal line holds: evaluations that
  // were in flight when a parallel run was killed while later ones finished.
  // A resumed run hands them out first, so the journal stays 0..N-1.
  std::set<int> free_numbers_;
};

/// The evaluator for `setup`: replay (setup.replay: every benchmark run
/// draws a recorded sample, nothing is built or run; replay_evaluator.h),
/// else commands.
std::unique_ptr<Evaluator> make_evaluator(TuningSetup setup, const SearchSpace& space);

} // namespace ciq::tuner
