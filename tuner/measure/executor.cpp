#include "tuner/measure/executor.h"

#include "tuner/measure/bench_server.h"
#include "tuner/measure/local_executor.h"
#include "tuner/measure/slurm_executor.h"

namespace ciq::tuner {

Result<void> Executor::check_options(const TuningSetup&) { return {}; }

void Executor::use_run_directory(const std::string&) {}

Result<void> Executor::start(bool) { return {}; }

bool Executor::schedules_gpus() const { return false; }

std::shared_ptr<Executor> make_executor(const TuningSetup& setup) {
  if (setup.slurm) return std::make_shared<SlurmExecutor>(setup);
  auto local = std::make_shared<LocalExecutor>(setup);
  if (!setup.bench_server.empty()) return std::make_shared<BenchServerExecutor>(setup, std::move(local));
  return local;
}

} // namespace ciq::tuner
