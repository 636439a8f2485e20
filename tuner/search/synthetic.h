// Synthetic tuning problems with known optima, for measuring the search
// itself (ciq-tuner search-quality, and the unit tests): spaces shaped like
// ptxas' (a few knobs that matter among many that do nothing), with
// multiplicative measurement noise and candidates that fail.
#pragma once

#include "tuner/search/search.h"

#include <string>
#include <vector>

namespace ciq::tuner {

struct SyntheticProblem {
  std::string name;
  SearchSpace space;
  /// True (noise-free) cost of a candidate; lower is better.
  std::function<double(const Candidate&)> cost;
  /// Whether the candidate "fails" (a build error, a crash).
  std::function<bool(const Candidate&)> fails;
  double optimum = 0; // the best cost any valid candidate has
};

std::vector<SyntheticProblem> synthetic_problems();

struct QualityResult {
  double median_evals_ga = 0, median_evals_random = 0; // to reach 95 % of the possible improvement
  double reached_ga = 0, reached_random = 0;            // fraction of seeds that got there within the budget
};

/// Runs GA and random search over `seeds` seeds with `budget` evaluations,
/// measuring `noise` (relative standard deviation) and counting, per run,
/// the evaluations until the best measured candidate's true cost closes
/// 95 % of the gap between the default and the optimum (budget + 1 if never).
QualityResult measure_search_quality(const SyntheticProblem& problem, int seeds, int budget, double noise,
                                     SearchConfig config = {});

} // namespace ciq::tuner
