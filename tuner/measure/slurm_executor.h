// The Slurm executor (`--executor slurm`): the local one whose processes
// are srun's, so each step is a one-task job (slurm.h) that Slurm places
// and srun waits for; the rest of the tuner sees an ordinary child process.
// A job Slurm preempted or lost with its node is submitted again; one it
// ended otherwise (cancelled, out of time, never started) fails the step
// with Slurm's reason. The run's jobs share one name, so that an interrupt
// (and the resume after a killed tuner) cancels what is left at once.
#pragma once

#include "tuner/measure/local_executor.h"
#include "tuner/measure/slurm.h"

#include <string>
#include <vector>

namespace ciq::tuner {

class SlurmExecutor final : public LocalExecutor {
public:
  explicit SlurmExecutor(const TuningSetup& setup);

  /// Refuses what Slurm does not go with (--replay, --bench-server,
  /// --gpus) and bad --slurm-* settings; gives every job a time limit and
  /// finds Slurm's clients.
  Result<void> check_options(const TuningSetup& setup) override;
  /// The run's job name (job_name_for).
  void use_run_directory(const std::string& run_dir) override;
  /// An interrupt cancels the run's jobs; a resume cancels those the
  /// interrupted run left; then (unless --slurm-check=false) a test build
  /// job and benchmark job must see the run directory.
  Result<void> start(bool resume) override;

  /// --jobs slots: the scheduler picks the GPU of each.
  std::vector<std::string> slots() const override;
  bool schedules_gpus() const override { return true; }

protected:
  Result<RunResult> launch(RunOptions options, const Step& step, std::string* log) override;

private:
  SlurmConfig config_;
  double timeout_;
  int jobs_;
  std::string run_dir_;
};

} // namespace ciq::tuner
