#include "tuner/measure/slurm_executor.h"

#include "utils/files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ciq::tuner {

SlurmExecutor::SlurmExecutor(const TuningSetup& setup)
    : LocalExecutor(setup), config_(setup.slurm.value_or(SlurmConfig{})), timeout_(setup.timeout), jobs_(setup.jobs),
      run_dir_(setup.run_dir) {}

Result<void> SlurmExecutor::check_options(const TuningSetup& setup) {
  if (setup.replay) return make_error("tuner", "--replay runs nothing: it needs no --executor slurm");
  if (!setup.bench_server.empty())
    return make_error("tuner", "--bench-server is not supported with --executor slurm yet: every benchmark is its own job");
  if (!setup.gpus.empty()) return make_error("tuner", "--gpus is for --executor local: under Slurm the scheduler picks the GPU (--slurm-gres)");
  if (auto v = validate(config_); !v) return v.error();
  // Every job has a limit, Slurm's and (as a backstop, launch()) the
  // tuner's: a job whose step died with its daemons is still "running" to
  // Slurm, and its srun waits until the limit. --timeout gives Slurm its
  // limit in whole minutes, rounded up.
  if (config_.time_limit.empty() && setup.timeout > 0) config_.time_limit = std::to_string(int(std::ceil(setup.timeout / 60)));
  if (config_.time_limit.empty()) {
    config_.time_limit = std::to_string(int(k_default_job_seconds / 60));
    std::fprintf(stderr, "ciq-tuner: Slurm: no --timeout or --slurm-time given; every job may run %s minutes\n",
                 config_.time_limit.c_str());
  }
  return resolve_tools(config_);
}

void SlurmExecutor::use_run_directory(const std::string& run_dir) {
  run_dir_ = run_dir;
  config_.job_name = job_name_for(run_dir);
}

Result<void> SlurmExecutor::start(bool resume) {
  run_on_interrupt(cancel_all_argv(config_));
  if (resume)
    if (int left = cancel_all(config_))
      std::fprintf(stderr, "ciq-tuner: cancelled %d Slurm job(s) of the interrupted run (%s)\n", left, config_.job_name.c_str());
  if (!config_.check) return {};
  std::fprintf(stderr, "ciq-tuner: Slurm: submitting a test build job and a test benchmark job (%s)\n", config_.job_name.c_str());
  double wait = timeout_ > 0 ? timeout_ + 120 : 600;
  if (auto checked = check_cluster(config_, run_dir_, wait); !checked)
    return make_error("tuner", checked.error().message + " (skip this check with --slurm-check=false)");
  return {};
}

std::vector<std::string> SlurmExecutor::slots() const {
  return std::vector<std::string>(std::size_t(std::max(1, jobs_)), "");
}

Result<RunResult> SlurmExecutor::launch(RunOptions options, const Step& step, std::string* log) {
  std::string comment = base_name(step.workdir) + ":" + step.log_name;
  options.argv = job_argv(config_, options.argv, step.kind != StepKind::build, comment);
  *log += argv_log_line(options.argv);
  // Slurm enforces the limit (--time, always set); the tuner's own deadline
  // is a backstop for a job stuck in the queue or lost with its node's
  // daemons, and then the job is cancelled too.
  if (options.timeout_seconds <= 0) options.timeout_seconds = time_seconds(config_.time_limit).value_or(0);
  if (options.timeout_seconds > 0) options.timeout_seconds += 120;
  for (int attempt = 0;; ++attempt) {
    auto run = run_process(options);
    if (!run) return run;
    if (run->timed_out) cancel_job(config_, comment);
    JobEnd end = job_end(*run);
    if (!end.by_scheduler) return run;
    if (end.retry && attempt < config_.retries) {
      *log += run->err + "[" + end.reason + ": submitted again]\n";
      continue;
    }
    *log += run->out + run->err;
    return make_error("slurm", end.reason + (end.retry ? " (after " + std::to_string(attempt + 1) + " tries)" : ""));
  }
}

} // namespace ciq::tuner
