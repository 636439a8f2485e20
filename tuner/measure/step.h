// One step of a candidate's evaluation as the executor gets it: the user's
// command with the candidate's placeholders ({controls}, {workdir}, {gpu},
// {param:NAME}) and the environment through which the wrappers learn what
// to compile (CIQ_CONTROLS, CIQ_TRACE, CIQ_KERNELS, CIQ_UNITS, the ACF
// cache, the memo). StepRunner hands such steps to the run's executor
// (executor.h); the Evaluator and the benchmark runs (bench_run.h) use it.
#pragma once

#include "tuner/measure/executor.h"
#include "tuner/measure/setup.h"
#include "tuner/search/candidate.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ciq::tuner {

using StepEnv = std::vector<std::pair<std::string, std::string>>;

/// The control set file of the evaluation in `workdir` ({controls}, CIQ_CONTROLS).
std::string controls_path(const std::string& workdir);

/// The placeholders of `c`'s commands: {controls}, {workdir}, {gpu} and one
/// {param:NAME} per parameter dimension of its space.
std::map<std::string, std::string> step_placeholders(const ResolvedCandidate& c, const std::string& workdir, const std::string& gpu);

/// The environment of a step in `workdir`: CIQ_CONTROLS and CIQ_TRACE
/// always; CIQ_KERNELS with --kernels; CIQ_UNITS when NVVM-stage knobs
/// target some translation units; the ACF cache with ACF candidates; the
/// memo directory when the memo is on; then `extra`.
StepEnv step_environment(const TuningSetup& setup, const SearchSpace& space, const std::string& workdir,
                         const StepEnv& extra = {});

/// What ciq-nvcc's memoised builds reported in <trace_dir>/steps/: nvcc
/// steps run and reused, added up; 0 and 0 without such reports.
struct MemoSteps {
  int run = 0, reused = 0;
};
MemoSteps count_memo_steps(const std::string& trace_dir);

/// Runs a candidate's steps through the run's executor. Holds references:
/// it lives inside the Evaluator, next to what it refers to.
class StepRunner {
public:
  StepRunner(const TuningSetup& setup, const SearchSpace& space, Executor& executor)
      : setup_(setup), space_(space), executor_(executor) {}

  /// Runs `command` of `c` as a step of `kind` in `workdir` (a benchmark or
  /// check on `gpu`, which the caller holds), logging to `log_name`, with
  /// step_environment() plus `extra_env`. An error when it could not run;
  /// a step that ran and failed is a result (Executor::run_step).
  Result<StepResult> run(StepKind kind, const std::string& command, const ResolvedCandidate& c, const std::string& workdir,
                         const std::string& gpu, const std::string& log_name, const StepEnv& extra_env = {}) const;

  const TuningSetup& setup() const { return setup_; }

private:
  const TuningSetup& setup_;
  const SearchSpace& space_;
  Executor& executor_;
};

} // namespace ciq::tuner
