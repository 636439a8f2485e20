// Where and how the user's commands run: one interface for every executor,
// chosen from the options by make_executor() and named nowhere else. An
// evaluation is a few steps (its build, its benchmark runs, its check); the
// Evaluator says what each step runs, with which environment and where its
// log goes, and the executor runs it:
//   local         a child process here, in its own process group
//                 (local_executor.h)
//   Slurm         a one-task job through srun, which passes its output and
//                 status back (--executor slurm; slurm_executor.h)
//   bench server  builds as local processes; benchmarks and checks as
//                 requests to a resident benchmark, one per GPU
//                 (--bench-server; bench_server.h)
// A replay (replay.h) runs nothing and needs no executor.
//
// Per-step records of what the process did (kernel timing, issue 23) hook
// in here once for every executor: the Evaluator adds the record's
// directory (under Step::workdir) to Step::env, as it adds CIQ_TRACE today,
// and reads it after run_step() returned. A process started for the step
// gets Step::env: locally, and under Slurm on a node that sees the run
// directory (start() checks that it does). A resident benchmark was started
// before the step with an environment of its own, so for it the executor
// must pass the directory with the request (or cut its records per
// request); that is the one place to extend.
#pragma once

#include "tuner/measure/setup.h"
#include "utils/process.h"
#include "utils/result.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ciq::tuner {

enum class StepKind { build, bench, check };

/// One step of one evaluation.
struct Step {
  StepKind kind = StepKind::build;
  std::string command;                             // the user's --build, --bench or --check, placeholders not filled in
  std::map<std::string, std::string> placeholders; // {controls}, {workdir}, {gpu}, {param:NAME} (command.h)
  std::vector<std::pair<std::string, std::string>> env; // added to the process' environment (CIQ_CONTROLS, CIQ_TRACE, ...)
  std::string workdir;                             // the evaluation's directory
  std::string log_name;                            // its log in workdir ("build.log", ...), appended to
  std::string gpu;  // a benchmark or check: the slot (slots()) the caller holds; a build: the first --gpus, or ""
  double timeout = 0;                              // seconds; 0 = none
};

/// How a step that ran ended.
struct StepResult {
  RunResult run;   // exit status or timeout, the output kept (command.h), seconds
  std::string log; // the log's path, <workdir>/<log_name>
  bool started_server = false; // a resident benchmark was started for this step: its start-up is in it
};

class Executor {
public:
  virtual ~Executor() = default;

  /// Checks, before anything runs, the options that concern this executor
  /// and completes its settings from them (Slurm's time limit, its clients'
  /// paths). Fails with the message for the user.
  virtual Result<void> check_options(const TuningSetup& setup);
  /// The run the steps belong to: its directory (absolute; under Slurm it
  /// names the run's jobs). Given before the first step.
  virtual void use_run_directory(const std::string& run_dir);
  /// Readies the executor for a run, once, after use_run_directory() and
  /// before the first evaluation (a campaign's discovery build goes
  /// without): hooks what an interrupt must stop beyond the tuner's own
  /// children, cancels what an interrupted run (`resume`) left running, and
  /// checks that the run's steps can run at all. Fails with the reason.
  virtual Result<void> start(bool resume);

  /// The benchmark slots: benchmarks and checks run one per slot at a time,
  /// each while its caller holds that slot (Step::gpu). Locally one per GPU
  /// (a CUDA_VISIBLE_DEVICES value; "" = the default device).
  virtual std::vector<std::string> slots() const = 0;
  /// Whether something else (a scheduler) places benchmarks on GPUs, so
  /// that runs side by side need not share out --gpus.
  virtual bool schedules_gpus() const;

  /// Runs one step and appends what it did to its log. An error when it
  /// could not run (a command that does not parse, an executor failure);
  /// a step that ran and failed is a result. Called from several threads
  /// at once; the steps on one slot only by that slot's holder.
  virtual Result<StepResult> run_step(const Step& step) = 0;
};

/// The executor the setup asks for: Slurm's (setup.slurm), else a resident
/// benchmark's (setup.bench_server) over the local one, else the local one.
std::shared_ptr<Executor> make_executor(const TuningSetup& setup);

} // namespace ciq::tuner
