// Evaluating one candidate the way the user would: write its control set,
// run their build with CIQ_CONTROLS/CIQ_TRACE set (so ciq-ptxas applies it
// and reports what it compiled), score it from the trace and/or their
// benchmark, and run their correctness check. Any failure makes the
// candidate invalid with a reason; it never stops the search. Candidates
// whose compiled code is byte-identical to one already measured (with the
// same parameters) reuse that measurement instead of being benchmarked.
#pragma once

#include "tuner/measure/executor.h"
#include "tuner/measure/gpu_monitor.h"
#include "tuner/measure/setup.h"
#include "tuner/rundir/journal.h"
#include "tuner/objectives/objectives.h"
#include "tuner/search/candidate.h"
#include "tuner/search/search.h"

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

/// One benchmark run's placement and what the GPU did meanwhile.
struct BenchRun {
  std::string gpu;      // in: the slot to run on ("" = the first free one); out: the slot it ran on
  GpuState state;       // out: what the GPU ran under (gpu_monitor.h; unread without NVML)
  double gpu_wait = 0;  // out: seconds spent waiting for the slot
};

/// The default as measured on one GPU (per-GPU baselines).
struct GpuDefault {
  std::string gpu;
  std::vector<double> values; // per objective, the median of its runs there; NaN for compile-time objectives
  int runs = 0;
};

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
  virtual Result<std::vector<TracedModule>> build(const Candidate& c, const std::string& workdir);
  /// One benchmark run of what was built in `workdir`, on `run.gpu` (or the
  /// first free GPU): the value of every benchmark objective, as printed
  /// (not negated, not scaled to a baseline).
  virtual Result<std::vector<double>> bench_once(const Candidate& c, const std::string& workdir, BenchRun& run);
  Result<std::vector<double>> bench_once(const Candidate& c, const std::string& workdir) {
    BenchRun run;
    return bench_once(c, workdir, run);
  }

  /// Per-GPU baselines: with several GPUs and a benchmark, the default runs
  /// --repeats times on each, and every later run's value is scaled by
  /// (the default on the first GPU) / (the default on the GPU it ran on),
  /// so that a candidate is compared with the default of the GPU it ran on,
  /// not with a GPU that happens to be faster. Off with
  /// setup.gpu_baselines = false.
  bool per_gpu_baselines() const;
  /// The default on each GPU, once measured (or read from the journal).
  const std::vector<GpuDefault>& gpu_defaults() const { return gpu_defaults_; }
  /// Where the verification runs both sides: one GPU, the first slot.
  std::string verification_gpu() const { return slots_.empty() ? "" : slots_.front(); }

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
  EvalRecord evaluate(const Candidate& c, int generation, int number);
  bool reuse_same_code(EvalRecord& r);
  std::string measure(const Candidate& c, EvalRecord& r, std::vector<TracedModule>& trace,
                      std::vector<std::vector<double>>& bench_values);
  void score(EvalRecord& r, const std::vector<TracedModule>& trace, const std::vector<std::vector<double>>& bench_values);
  /// The default's benchmark runs, --repeats on every GPU at once.
  std::string measure_on_every_gpu(const Candidate& c, EvalRecord& r, std::vector<std::vector<double>>& bench_values);
  /// Sets gpu_defaults_ from the default's record (its samples and run_gpus).
  void learn_gpu_defaults(const EvalRecord& def);
  /// What a run's value on `gpu` of objective `k` is on the first GPU's scale.
  double scale(double value, const std::string& gpu, std::size_t k) const;
  bool is_default(const Candidate& c) const;
  /// The digest that identifies what a candidate compiled to (every module's
  /// code plus the parameters); "" when a module has none.
  std::string code_digest(const std::vector<TracedModule>& trace, const Candidate& c) const;
  /// The first warning of the compilers in the trace in `dir` that the
  /// default build did not give ("" if none): the candidate asked for
  /// something the compiler does not honour.
  std::string added_warning(const Candidate& c, const std::vector<TracedModule>& trace, const std::string& dir);
  std::map<std::string, std::string> placeholders(const Candidate& c, const std::string& workdir,
                                                  const std::string& gpu) const;
  /// Runs one step of `c` (a build, or --bench or --check on `gpu`, held
  /// by the caller) with the candidate's environment, through the executor.
  Result<StepResult> run_step(StepKind kind, const std::string& command, const Candidate& c, const std::string& workdir,
                              const std::string& gpu, const std::string& log_name,
                              const std::vector<std::pair<std::string, std::string>>& extra_env = {});
  /// A free GPU, waiting for one; adds the wait to `*waited` when given.
  std::string acquire_gpu(double* waited = nullptr, const std::string& wanted = "");
  void release_gpu(const std::string& gpu);

  TuningSetup setup_;
  const SearchSpace& space_;
  std::shared_ptr<Executor> executor_;
  std::mutex mutex_;
  std::condition_variable gpu_free_;
  std::vector<std::string> idle_gpus_, slots_;
  std::vector<GpuDefault> gpu_defaults_;
  std::vector<EvalRecord> records_;
  std::map<std::string, std::size_t> by_candidate_, by_digest_;
  int next_number_ = 0;
  // Numbers below next_number_ that no journal line holds: evaluations that
  // were in flight when a parallel run was killed while later ones finished.
  // A resumed run hands them out first, so the journal stays 0..N-1.
  std::set<int> free_numbers_;
  // cicc's warnings per NVVM-stage control set: a build whose cicc step
  // the memo answered writes no unit trace, so they are remembered here.
  std::map<std::string, std::vector<std::string>> nvvm_warnings_;
};

/// The evaluator for `setup`: replay (setup.replay: every benchmark run
/// draws a recorded sample, nothing is built or run), else commands.
std::unique_ptr<Evaluator> make_evaluator(TuningSetup setup, const SearchSpace& space);

} // namespace ciq::tuner
