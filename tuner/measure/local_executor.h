// The local executor: every step is a child process of the tuner, in its
// own process group (so that a timeout or an interrupt reaches what it
// started), its input empty, its output kept (command.h) and logged with
// its argv. Benchmarks and checks run one per GPU of --gpus at a time.
#pragma once

#include "tuner/measure/executor.h"

#include <string>
#include <vector>

namespace ciq::tuner {

class LocalExecutor : public Executor {
public:
  explicit LocalExecutor(const TuningSetup& setup);

  std::vector<std::string> slots() const override;
  Result<StepResult> run_step(const Step& step) override;

protected:
  /// Runs the step's process and logs its argv ("$ ..." in `*log`) first.
  /// Slurm's executor runs it as a job instead (slurm_executor.h).
  virtual Result<RunResult> launch(RunOptions options, const Step& step, std::string* log);

private:
  bool shell_;
  std::vector<std::string> gpus_;
};

/// `$ argv...` and a newline: how a log shows the command it ran.
std::string argv_log_line(const std::vector<std::string>& argv);

} // namespace ciq::tuner
