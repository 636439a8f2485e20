// Search over a SearchSpace: a genetic algorithm (elitism, tournament
// selection, uniform crossover, per-gene mutation with knock-out, seeding
// with the default and given candidates) that becomes NSGA-II
// (non-dominated sorting, crowding distance) with two or more objectives;
// and plain random search, the baseline it must beat. Every candidate is
// evaluated at most once (memoised by its canonical form).
#pragma once

#include "tuner/search/candidate.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ciq::tuner {

/// What one evaluation found. Objectives are in minimisation form (the
/// caller negates objectives to maximise).
struct Evaluation {
  bool valid = false;
  std::vector<double> objectives;
  std::string reason; // why it is invalid
};

/// Evaluates a batch of new, distinct candidates (possibly in parallel).
using EvaluateBatch = std::function<std::vector<Evaluation>(const std::vector<Candidate>&, int generation)>;

struct SearchConfig {
  int budget = 32;        // unique evaluations, the default's included
  int pool = 8;           // population size
  int generations = 0;    // 0: as many as the budget allows
  double cull = 0.5;      // worst fraction removed before parents are chosen
  double mutate_rate = 0.25;
  int tournament = 3;
  int elite = 2;
  std::uint64_t seed = 1;
  std::vector<Candidate> seeds; // evaluated in the first generation
  // steady_state_search only: evaluated before anything else (a resumed
  // run's journal, answered without running: what comes next depends on
  // them, not on the order they once finished in).
  std::vector<Candidate> resumed;
};

struct Evaluated {
  Candidate candidate;
  Evaluation evaluation;
  int generation = 0;
};

struct SearchResult {
  std::vector<Evaluated> evaluated; // in evaluation order
  std::vector<std::size_t> best;    // single objective: the best valid one; several: the Pareto front
};

SearchResult genetic_search(const SearchSpace& space, const SearchConfig& config, const EvaluateBatch& evaluate);
/// The same operators without generations: `jobs` evaluations are kept in
/// flight, and each time one finishes the next candidate is bred from
/// everything measured so far (parents: the best `pool` of it), so no
/// evaluation waits for the slowest of a generation. `evaluate` is called
/// with one candidate at a time from `jobs` threads at once. With jobs > 1
/// the order in which evaluations finish, and so what is proposed, varies
/// from run to run.
SearchResult steady_state_search(const SearchSpace& space, const SearchConfig& config, const EvaluateBatch& evaluate,
                                 int jobs);
SearchResult random_search(const SearchSpace& space, const SearchConfig& config, const EvaluateBatch& evaluate);

/// NSGA-II order of `items` (indices into `all`): valid before invalid,
/// lower non-domination rank first, then larger crowding distance.
std::vector<std::size_t> nsga_order(const std::vector<Evaluated>& all, std::vector<std::size_t> items);

/// Knocks out knobs of `winner` (scored `score`) while no objective gets
/// worse than the winner's by more than `tolerance` (relative; 0 for
/// deterministic objectives): each round evaluates every single knock-out
/// of the current set as one batch, then drops all that passed together if
/// that passes too, else the first. The shipped control set then holds
/// only knobs that earn their place. Each trial is repaired first: a knob
/// that needed the one knocked out (a block size) goes with it.
/// A knob whose removal leaves the compiled code as it was (`same_code`,
/// when given, says so after the trial's evaluation) is dropped whatever
/// the timings say: measured noise must not keep a knob that did nothing.
using SameCode = std::function<bool(const Candidate& a, const Candidate& b)>;
Candidate prune(const SearchSpace& space, const Candidate& winner, const Evaluation& score, const EvaluateBatch& evaluate,
                int generation, double tolerance = 0, const SameCode& same_code = {});

/// The best evaluation(s) of `all` (see SearchResult::best); among equal
/// objectives, the candidate that sets the fewest knobs.
std::vector<std::size_t> best_of(const std::vector<Evaluated>& all);

/// What "the best" is, for the log, summary.json, the report and the
/// order in which the front is verified. One objective: the lowest. Several:
/// the point with the lowest first objective among those no worse than
/// `reference` (the default) on every other objective, ties going to the
/// next objectives in order: the trade-off that improves the first
/// objective without giving up any other, verified first and shipped when
/// it holds. It lies on the Pareto front (whatever dominates it qualifies
/// too and would be chosen). Without a reference, the lowest first
/// objective. The index in `points` (invalid ones skipped); SIZE_MAX if
/// none is valid. `primary` (--prefer) names the objective that plays the
/// first's part (the others keep their order).
std::size_t preferred_point(const std::vector<const Evaluation*>& points, const Evaluation* reference, std::size_t primary = 0);

} // namespace ciq::tuner
