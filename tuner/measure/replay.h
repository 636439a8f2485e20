// Replay: evaluations answered from recorded benchmark samples instead of
// builds and runs (`ciq-tuner run --replay FILE`). The file is the ground
// truth of bench/ground_truth.py: a CSV with at least the columns `controls`
// (`knob=value;KERNEL:knob=value;...`, empty for the default) and `ms`, one
// row per sample. The search space is the recorded grid: one dimension per
// knob, with the values recorded; a candidate that was not recorded is
// invalid. Each benchmark run of a candidate draws one of its samples at
// random, so the search and its verification see the real noise.
#pragma once

#include "tuner/search/candidate.h"
#include "utils/result.h"

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace ciq::tuner {

class ReplayData {
public:
  static Result<std::shared_ptr<ReplayData>> load(const std::string& path);

  /// The recorded grid as a search space (compiler_space "replay").
  const SearchSpace& space() const { return space_; }
  /// One recorded sample of the candidate (of space()), or an error if it
  /// was never recorded.
  Result<double> draw(const ResolvedCandidate& c, std::mt19937_64& rng) const;
  std::size_t sets() const { return samples_.size(); }

private:
  SearchSpace space_;
  std::map<std::string, std::vector<double>> samples_; // canonical control-set text -> ms
};

} // namespace ciq::tuner
