#include "tuner/measure/replay_evaluator.h"

namespace ciq::tuner {

ReplayEvaluator::ReplayEvaluator(const TuningSetup& setup, const SearchSpace& space)
    : Evaluator(setup, space), data_(setup.replay), rng_(setup.replay_seed ^ 0x5eedf00dull) {}

Result<std::vector<TracedModule>> ReplayEvaluator::build(const ResolvedCandidate&, const std::string&) {
  return std::vector<TracedModule>{};
}

Result<std::vector<double>> ReplayEvaluator::bench_once(const ResolvedCandidate& c, const std::string&, BenchRun&) {
  std::lock_guard lock(mutex_);
  auto ms = data_->draw(c, rng_);
  if (!ms) return ms.error();
  return std::vector<double>{*ms};
}

} // namespace ciq::tuner
