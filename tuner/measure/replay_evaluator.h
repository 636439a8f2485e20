// The evaluator of a replay (replay.h): the recorded ground truth answers
// every benchmark run with one of the candidate's samples, drawn at random;
// nothing is built or run, so nothing compiles and no trace appears.
// make_evaluator() (evaluator.h) picks it when the setup has samples.
#pragma once

#include "tuner/measure/evaluator.h"
#include "tuner/measure/replay.h"

#include <memory>
#include <mutex>
#include <random>

namespace ciq::tuner {

class ReplayEvaluator final : public Evaluator {
public:
  /// `setup.replay` must hold the recorded samples; draws are seeded from
  /// setup.replay_seed, so a replay run repeats.
  ReplayEvaluator(const TuningSetup& setup, const SearchSpace& space);

  /// Nothing to build: an empty trace.
  Result<std::vector<TracedModule>> build(const ResolvedCandidate& c, const std::string& workdir) override;
  /// One recorded sample of `c`; an error when it was never recorded.
  Result<std::vector<double>> bench_once(const ResolvedCandidate& c, const std::string& workdir, BenchRun& run) override;

protected:
  bool compiles_when_benchmarked() const override { return false; }

private:
  std::shared_ptr<const ReplayData> data_;
  std::mutex mutex_; // guards rng_: evaluations draw from several threads (--jobs)
  std::mt19937_64 rng_;
};

} // namespace ciq::tuner
