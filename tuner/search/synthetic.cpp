#include "tuner/search/synthetic.h"

#include "tuner/objectives/statistics.h"
#include "utils/hash.h"

#include <cmath>

namespace ciq::tuner {

namespace {

Dimension dim(const std::string& name, int values, double knockout = 0.7) {
  Dimension d;
  d.kind = DimensionKind::option;
  d.knob = name;
  for (int v = 0; v < values; ++v) d.values.push_back(std::to_string(v));
  d.knockout = knockout;
  return d;
}

int value(const Candidate& c, std::size_t i, int fallback) { return c.genes[i] ? *c.genes[i] : fallback; }

// About `rate` of all candidates fail, decided by a hash so it is stable.
bool hashed_failure(const SearchSpace& space, const Candidate& c, double rate) {
  if (c == space.default_candidate()) return false;
  auto h = xxh128(space.canonical(c));
  return double(h[0]) / 256.0 < rate;
}

} // namespace

std::vector<SyntheticProblem> synthetic_problems() {
  std::vector<SyntheticProblem> out;
  {
    // A register cap (32 values, default = uncapped = index 31) with a sweet
    // spot, among 8 knobs that change nothing; 10 % of candidates fail.
    SyntheticProblem p;
    p.name = "register-cap";
    p.space.dimensions.push_back(dim("cap", 32));
    for (int i = 0; i < 8; ++i) p.space.dimensions.push_back(dim("inert" + std::to_string(i), 5));
    p.cost = [](const Candidate& c) {
      double v = value(c, 0, 31);
      return 1.0 - 0.25 * std::exp(-std::pow((v - 14) / 4.0, 2));
    };
    p.optimum = 0.75;
    out.push_back(std::move(p));
  }
  {
    // Four knobs that each matter a little (separable), six that do not.
    SyntheticProblem p;
    p.name = "separable";
    int targets[4] = {7, 2, 9, 4};
    for (int i = 0; i < 4; ++i) p.space.dimensions.push_back(dim("k" + std::to_string(i), 11));
    for (int i = 0; i < 6; ++i) p.space.dimensions.push_back(dim("inert" + std::to_string(i), 4));
    p.cost = [targets](const Candidate& c) {
      double f = 1.0;
      for (int i = 0; i < 4; ++i) {
        double v = value(c, std::size_t(i), 0);
        f += 0.004 * (v - targets[i]) * (v - targets[i]);
      }
      return f;
    };
    p.optimum = 1.0;
    out.push_back(std::move(p));
  }
  {
    // Two knobs that only help together (an interaction), five inert.
    SyntheticProblem p;
    p.name = "interaction";
    p.space.dimensions.push_back(dim("a", 12));
    p.space.dimensions.push_back(dim("b", 12));
    for (int i = 0; i < 5; ++i) p.space.dimensions.push_back(dim("inert" + std::to_string(i), 6));
    p.cost = [](const Candidate& c) {
      double a = value(c, 0, 0), b = value(c, 1, 0);
      return 1.0 - 0.2 * std::exp(-((a - 8) * (a - 8) + (b - 3) * (b - 3)) / 6.0);
    };
    p.optimum = 0.8;
    out.push_back(std::move(p));
  }
  for (auto& p : out) {
    const SearchSpace space = p.space;
    p.fails = [space](const Candidate& c) { return hashed_failure(space, c, 0.1); };
  }
  return out;
}

QualityResult measure_search_quality(const SyntheticProblem& problem, int seeds, int budget, double noise,
                                     SearchConfig config) {
  QualityResult q;
  double start = problem.cost(problem.space.default_candidate());
  double target = start - 0.95 * (start - problem.optimum);
  std::vector<double> ga, rnd;
  for (int s = 0; s < seeds; ++s) {
    for (int algo = 0; algo < 2; ++algo) {
      std::mt19937_64 noise_rng(std::uint64_t(s) * 7919 + std::uint64_t(algo));
      std::normal_distribution<double> gauss(0, noise);
      int evals = 0, reached = budget + 1;
      double best_measured = INFINITY, best_true = start;
      EvaluateBatch evaluate = [&](const std::vector<Candidate>& batch, int) {
        std::vector<Evaluation> out;
        for (const auto& c : batch) {
          ++evals;
          Evaluation e;
          if (problem.fails(c)) {
            e.reason = "injected failure";
          } else {
            double truth = problem.cost(c);
            double measured = truth * (1 + gauss(noise_rng));
            e.valid = true;
            e.objectives = {measured};
            if (measured < best_measured) {
              best_measured = measured;
              best_true = truth;
            }
          }
          if (best_true <= target && reached > budget) reached = evals;
          out.push_back(e);
        }
        return out;
      };
      SearchConfig cfg = config;
      cfg.budget = budget;
      cfg.seed = std::uint64_t(s) + 1;
      if (algo == 0) genetic_search(problem.space, cfg, evaluate);
      else random_search(problem.space, cfg, evaluate);
      (algo == 0 ? ga : rnd).push_back(reached);
    }
  }
  q.median_evals_ga = median(ga);
  q.median_evals_random = median(rnd);
  for (double v : ga) q.reached_ga += v <= budget;
  for (double v : rnd) q.reached_random += v <= budget;
  q.reached_ga /= seeds;
  q.reached_random /= seeds;
  return q;
}

} // namespace ciq::tuner
