#include "tuner/search/search.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace ciq::tuner {

namespace {

class Memo {
public:
  Memo(const SearchSpace& space, SearchResult& result) : space_(space), result_(result) {}
  bool seen(const Candidate& c) const { return index_.count(space_.canonical(c)) > 0; }
  std::size_t index(const Candidate& c) const { return index_.at(space_.canonical(c)); }
  // Evaluates the new ones of `batch` (distinct, at most `room`).
  void evaluate(std::vector<Candidate> batch, int generation, int room, const EvaluateBatch& evaluate) {
    std::vector<Candidate> fresh;
    std::set<std::string> keys;
    for (auto& c : batch)
      if (!seen(c) && keys.insert(space_.canonical(c)).second && int(fresh.size()) < room) fresh.push_back(std::move(c));
    if (fresh.empty()) return;
    auto results = evaluate(fresh, generation);
    for (std::size_t i = 0; i < fresh.size(); ++i) {
      index_[space_.canonical(fresh[i])] = result_.evaluated.size();
      result_.evaluated.push_back(Evaluated{fresh[i], i < results.size() ? results[i] : Evaluation{}, generation});
    }
  }
  int count() const { return int(result_.evaluated.size()); }

private:
  const SearchSpace& space_;
  SearchResult& result_;
  std::map<std::string, std::size_t> index_;
};

Candidate mutate(const SearchSpace& space, Candidate c, double rate, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coin(0, 1);
  for (std::size_t i = 0; i < space.dimensions.size(); ++i) {
    if (coin(rng) >= rate) continue;
    const auto& d = space.dimensions[i];
    int n = int(d.values.size());
    if (d.knockable && coin(rng) < d.knockout * 0.5) {
      c.genes[i].reset();
    } else if (c.genes[i] && n > 2 && coin(rng) < 0.5) { // creep to a neighbouring value
      std::uniform_int_distribution<int> step(1, 2);
      int s = step(rng) * (coin(rng) < 0.5 ? -1 : 1);
      c.genes[i] = std::clamp(*c.genes[i] + s, 0, n - 1);
    } else {
      std::uniform_int_distribution<int> pick(0, n - 1);
      c.genes[i] = pick(rng);
    }
  }
  return c;
}

// One local step from `leader`: one knob moved to a neighbouring value (or
// changed, when it has no order), preferring knobs it sets. Knob effects
// are mostly smooth (register caps, levels), so this climbs where
// crossover alone would wander.
Candidate local_step(const SearchSpace& space, const Candidate& leader, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<std::size_t> set;
  for (std::size_t i = 0; i < leader.genes.size(); ++i)
    if (leader.genes[i]) set.push_back(i);
  Candidate child = leader;
  std::size_t i;
  if (!set.empty() && coin(rng) < 0.7) {
    i = set[std::uniform_int_distribution<std::size_t>(0, set.size() - 1)(rng)];
  } else {
    i = std::uniform_int_distribution<std::size_t>(0, space.dimensions.size() - 1)(rng);
  }
  int n = int(space.dimensions[i].values.size());
  if (child.genes[i] && n > 2) {
    int step = coin(rng) < 0.5 ? -1 : 1;
    if (coin(rng) < 0.3) step *= 2;
    child.genes[i] = std::clamp(*child.genes[i] + step, 0, n - 1);
  } else if (child.genes[i] && space.dimensions[i].knockable && coin(rng) < 0.3) {
    child.genes[i].reset();
  } else {
    child.genes[i] = std::uniform_int_distribution<int>(0, n - 1)(rng);
  }
  space.repair(child);
  return child;
}

// A parent by tournament from `ranked` (fittest first).
const Candidate& tournament_pick(const SearchResult& result, const std::vector<std::size_t>& ranked, int size,
                                 std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, ranked.size() - 1);
  std::size_t best = pick(rng);
  for (int t = 1; t < size; ++t) best = std::min(best, pick(rng)); // lower position = fitter
  return result.evaluated[ranked[best]].candidate;
}

// Uniform crossover of `a` and `b`, then mutation (harder when `shake`).
Candidate crossover(const SearchSpace& space, const Candidate& a, const Candidate& b, double rate, bool shake,
                    std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coin(0, 1);
  Candidate child = a;
  for (std::size_t i = 0; i < child.genes.size(); ++i)
    if (coin(rng) < 0.5) child.genes[i] = b.genes[i];
  child = mutate(space, std::move(child), rate, rng);
  if (shake) child = mutate(space, std::move(child), 0.5, rng);
  space.repair(child);
  return child;
}

// The default, the seeds, then distinct random candidates up to `pool`.
std::vector<Candidate> first_population(const SearchSpace& space, const SearchConfig& cfg, int pool, std::mt19937_64& rng) {
  std::vector<Candidate> population{space.default_candidate()};
  for (const auto& s : cfg.seeds) population.push_back(s);
  for (int tries = 0; int(population.size()) < pool && tries < pool * 100; ++tries) {
    Candidate c = space.random_candidate(rng);
    bool dup = false;
    for (const auto& p : population) dup = dup || space.canonical(p) == space.canonical(c);
    if (!dup) population.push_back(std::move(c));
  }
  return population;
}

// This generation's parents, best first: the members of `population`
// and the best `pool`/2 ever seen, ranked (NSGA-II's order), the worst
// `cull` of them dropped (at least two kept).
std::vector<std::size_t> parents(const SearchResult& result, const Memo& memo, const std::vector<Candidate>& population, int pool,
                                 double cull) {
  std::vector<std::size_t> members;
  for (const auto& c : population)
    if (memo.seen(c)) members.push_back(memo.index(c));
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  // Parents come from the best of this population and the best ever seen.
  std::vector<std::size_t> everything(result.evaluated.size());
  for (std::size_t i = 0; i < everything.size(); ++i) everything[i] = i;
  auto ranked_all = nsga_order(result.evaluated, everything);
  for (std::size_t i = 0; i < ranked_all.size() && i < std::size_t(pool / 2); ++i) members.push_back(ranked_all[i]);
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  auto ranked = nsga_order(result.evaluated, members);
  std::size_t keep = std::max<std::size_t>(2, std::size_t(std::ceil(double(ranked.size()) * (1 - cull))));
  ranked.resize(std::min(ranked.size(), keep));
  return ranked;
}

} // namespace

SearchResult genetic_search(const SearchSpace& space, const SearchConfig& cfg, const EvaluateBatch& evaluate) {
  SearchResult result;
  Memo memo(space, result);
  std::mt19937_64 rng(cfg.seed);
  int pool = std::max(cfg.pool, 2);

  std::vector<Candidate> population = first_population(space, cfg, pool, rng);

  for (int generation = 0; memo.count() < cfg.budget; ++generation) {
    memo.evaluate(population, generation, cfg.budget - memo.count(), evaluate);
    if (cfg.generations > 0 && generation + 1 >= cfg.generations) break;
    if (memo.count() >= cfg.budget) break;

    std::vector<std::size_t> ranked = parents(result, memo, population, pool, cfg.cull);

    std::vector<Candidate> next;
    std::set<std::string> in_next;
    for (int e = 0; e < cfg.elite && e < int(ranked.size()); ++e) {
      next.push_back(result.evaluated[ranked[std::size_t(e)]].candidate);
      in_next.insert(space.canonical(next.back()));
    }
    int fresh = 0;
    const Candidate& leader = result.evaluated[ranked.front()].candidate;
    int local_quota = std::max(1, pool / 3);
    for (int attempts = 0; local_quota > 0 && attempts < pool * 20; ++attempts) {
      Candidate child = local_step(space, leader, rng);
      std::string key = space.canonical(child);
      if (memo.seen(child) || in_next.count(key)) continue;
      in_next.insert(key);
      next.push_back(std::move(child));
      ++fresh;
      --local_quota;
    }
    for (int attempts = 0; int(next.size()) < pool && attempts < pool * 60; ++attempts) {
      const Candidate& a = tournament_pick(result, ranked, cfg.tournament, rng);
      const Candidate& b = tournament_pick(result, ranked, cfg.tournament, rng);
      Candidate child = crossover(space, a, b, cfg.mutate_rate, attempts > pool * 30, rng); // stuck: shake harder
      std::string key = space.canonical(child);
      if (memo.seen(child) || in_next.count(key)) continue;
      in_next.insert(key);
      next.push_back(std::move(child));
      ++fresh;
    }
    if (fresh == 0) break; // the space is exhausted around the population
    population = std::move(next);
  }
  result.best = best_of(result.evaluated);
  return result;
}

// A child bred from everything measured so far, not yet `known`: the best
// `pool` of it (after the cull) are the parents; a third of the children
// are local steps around the leader, the rest crossovers (a random
// candidate while fewer than two are measured). std::nullopt when none is
// new after pool * 60 tries.
template <class Known>
std::optional<Candidate> bred_child(const SearchSpace& space, const SearchConfig& cfg, const SearchResult& result, int pool,
                                    std::mt19937_64& rng, const Known& known) {
  std::vector<std::size_t> everything(result.evaluated.size());
  for (std::size_t i = 0; i < everything.size(); ++i) everything[i] = i;
  auto ranked = nsga_order(result.evaluated, everything);
  ranked.resize(std::min<std::size_t>(ranked.size(), std::size_t(pool)));
  std::size_t keep = std::max<std::size_t>(2, std::size_t(std::ceil(double(ranked.size()) * (1 - cfg.cull))));
  ranked.resize(std::min(ranked.size(), keep));
  std::uniform_real_distribution<double> coin(0, 1);
  for (int attempts = 0; attempts < pool * 60; ++attempts) {
    Candidate child;
    if (ranked.size() < 2) child = space.random_candidate(rng); // too little measured to breed from
    else if (coin(rng) < 1.0 / 3) child = local_step(space, result.evaluated[ranked.front()].candidate, rng);
    else
      child = crossover(space, tournament_pick(result, ranked, cfg.tournament, rng),
                        tournament_pick(result, ranked, cfg.tournament, rng), cfg.mutate_rate, attempts > pool * 30, rng);
    if (!known(space.canonical(child))) return child;
  }
  return std::nullopt;
}

SearchResult steady_state_search(const SearchSpace& space, const SearchConfig& cfg, const EvaluateBatch& evaluate,
                                 int jobs) {
  SearchResult result;
  std::mt19937_64 rng(cfg.seed);
  int pool = std::max(cfg.pool, 2);
  int budget = cfg.generations > 0 ? std::min(cfg.budget, cfg.generations * pool) : cfg.budget;

  std::mutex mutex;
  std::condition_variable finished; // an evaluation came back
  std::set<std::string> done; // canonical forms evaluated
  std::set<std::string> in_flight;
  std::vector<Candidate> queue = cfg.resumed;
  for (auto& c : first_population(space, cfg, pool, rng)) queue.push_back(std::move(c));
  std::reverse(queue.begin(), queue.end()); // popped from the back: in order
  int started = 0;
  bool exhausted = false;
  auto known = [&](const std::string& key) { return done.count(key) || in_flight.count(key); };

  // The next candidate: the queue's (resumed, first population), then one
  // bred from everything measured so far (bred_child). Under the lock.
  auto propose = [&]() -> std::optional<Candidate> {
    while (!queue.empty()) {
      Candidate c = std::move(queue.back());
      queue.pop_back();
      if (!known(space.canonical(c))) return c;
    }
    return bred_child(space, cfg, result, pool, rng, known);
  };

  auto worker = [&] {
    std::unique_lock lock(mutex);
    while (true) {
      std::optional<Candidate> next;
      while (!exhausted && started < budget && !(next = propose())) {
        if (in_flight.empty()) {
          exhausted = true; // nothing new around what is known, and nothing pending that could change that
          finished.notify_all();
        } else {
          finished.wait(lock);
        }
      }
      if (!next) return;
      std::string key = space.canonical(*next);
      int generation = started++ / pool; // the pool-sized cohort it was born in
      in_flight.insert(key);
      lock.unlock();
      std::vector<Evaluation> e = evaluate({*next}, generation);
      lock.lock();
      in_flight.erase(key);
      done.insert(key);
      result.evaluated.push_back(Evaluated{std::move(*next), e.empty() ? Evaluation{} : e.front(), generation});
      finished.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  result.best = best_of(result.evaluated);
  return result;
}

Candidate prune(const SearchSpace& space, const Candidate& winner, const Evaluation& score, const EvaluateBatch& evaluate,
                int generation, double tolerance, const SameCode& same_code) {
  // Against the original winner's score, so that small losses within the
  // tolerance cannot add up over several removals.
  auto earns_nothing = [&](const Candidate& trial, const Candidate& from, const Evaluation& e) {
    if (!e.valid) return false;
    bool no_worse = true;
    for (std::size_t k = 0; k < e.objectives.size(); ++k)
      no_worse &= e.objectives[k] <= score.objectives[k] + tolerance * std::fabs(score.objectives[k]);
    return no_worse || (same_code && same_code(trial, from));
  };
  Candidate best = winner;
  while (true) {
    // Every single knock-out of the current best, as one batch (in
    // parallel under --jobs).
    std::vector<std::size_t> genes;
    std::vector<Candidate> trials;
    for (std::size_t i = 0; i < best.genes.size(); ++i) {
      if (!best.genes[i] || !space.dimensions[i].knockable) continue;
      genes.push_back(i);
      trials.push_back(best);
      trials.back().genes[i].reset();
      space.repair(trials.back()); // without a block size, what needed it goes too
    }
    if (trials.empty()) break;
    std::vector<Evaluation> scores = evaluate(trials, generation);
    std::vector<std::size_t> removable;
    for (std::size_t j = 0; j < trials.size(); ++j)
      if (earns_nothing(trials[j], best, scores[j])) removable.push_back(genes[j]);
    if (removable.empty()) break;
    if (removable.size() > 1) {
      // Usually they all go together; when they do not (knobs that only
      // act in combination), one at a time.
      Candidate without = best;
      for (auto g : removable) without.genes[g].reset();
      space.repair(without);
      if (earns_nothing(without, best, evaluate({without}, generation).front())) {
        best = std::move(without);
        continue;
      }
    }
    best.genes[removable.front()].reset();
    space.repair(best);
  }
  return best;
}

SearchResult random_search(const SearchSpace& space, const SearchConfig& cfg, const EvaluateBatch& evaluate) {
  SearchResult result;
  Memo memo(space, result);
  std::mt19937_64 rng(cfg.seed);
  memo.evaluate({space.default_candidate()}, 0, cfg.budget, evaluate);
  for (int tries = 0; memo.count() < cfg.budget && tries < cfg.budget * 100; ++tries) {
    Candidate c = space.random_candidate(rng);
    if (!memo.seen(c)) memo.evaluate({c}, 0, cfg.budget - memo.count(), evaluate);
  }
  result.best = best_of(result.evaluated);
  return result;
}

} // namespace ciq::tuner
