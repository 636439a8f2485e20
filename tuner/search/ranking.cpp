// NSGA-II's order of evaluated candidates (non-domination rank, then
// crowding distance), the best of them, and the preferred point of a
// front: what the searches (search.cpp, lockstep.cpp) and the run's
// verification read.
#include "tuner/search/search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ciq::tuner {

namespace {

int set_genes(const Candidate& c) {
  int n = 0;
  for (const auto& g : c.genes) n += g.has_value();
  return n;
}

bool dominates(const Evaluation& a, const Evaluation& b) {
  bool better = false;
  for (std::size_t i = 0; i < a.objectives.size(); ++i) {
    if (a.objectives[i] > b.objectives[i]) return false;
    if (a.objectives[i] < b.objectives[i]) better = true;
  }
  return better;
}

// Non-domination rank (0 = Pareto front) of each item.
std::vector<int> ranks_of(const std::vector<Evaluated>& all, const std::vector<std::size_t>& items) {
  std::size_t n = items.size();
  std::vector<int> rank(n, -1), dominated_by(n, 0);
  std::vector<std::vector<std::size_t>> dominating(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      if (dominates(all[items[i]].evaluation, all[items[j]].evaluation)) dominating[i].push_back(j);
      else if (dominates(all[items[j]].evaluation, all[items[i]].evaluation)) ++dominated_by[i];
    }
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < n; ++i)
    if (dominated_by[i] == 0) { rank[i] = 0; front.push_back(i); }
  for (int r = 0; !front.empty(); ++r) {
    std::vector<std::size_t> next;
    for (auto i : front)
      for (auto j : dominating[i])
        if (--dominated_by[j] == 0) { rank[j] = r + 1; next.push_back(j); }
    front = std::move(next);
  }
  return rank;
}

std::vector<double> crowding_of(const std::vector<Evaluated>& all, const std::vector<std::size_t>& items,
                                const std::vector<int>& rank) {
  std::size_t n = items.size();
  std::vector<double> crowd(n, 0);
  if (n == 0) return crowd;
  std::size_t m = all[items[0]].evaluation.objectives.size();
  std::map<int, std::vector<std::size_t>> fronts;
  for (std::size_t i = 0; i < n; ++i) fronts[rank[i]].push_back(i);
  for (auto& [r, members] : fronts) {
    for (std::size_t k = 0; k < m; ++k) {
      std::sort(members.begin(), members.end(), [&](auto a, auto b) {
        return all[items[a]].evaluation.objectives[k] < all[items[b]].evaluation.objectives[k];
      });
      double lo = all[items[members.front()]].evaluation.objectives[k];
      double hi = all[items[members.back()]].evaluation.objectives[k];
      crowd[members.front()] = crowd[members.back()] = std::numeric_limits<double>::infinity();
      if (hi <= lo) continue;
      for (std::size_t p = 1; p + 1 < members.size(); ++p)
        crowd[members[p]] += (all[items[members[p + 1]]].evaluation.objectives[k] -
                              all[items[members[p - 1]]].evaluation.objectives[k]) / (hi - lo);
    }
  }
  return crowd;
}

} // namespace

std::vector<std::size_t> nsga_order(const std::vector<Evaluated>& all, std::vector<std::size_t> items) {
  std::vector<std::size_t> valid, invalid;
  for (auto i : items) (all[i].evaluation.valid ? valid : invalid).push_back(i);
  auto rank = ranks_of(all, valid);
  auto crowd = crowding_of(all, valid, rank);
  std::vector<std::size_t> order(valid.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    if (rank[a] != rank[b]) return rank[a] < rank[b];
    const auto& oa = all[valid[a]].evaluation.objectives;
    const auto& ob = all[valid[b]].evaluation.objectives;
    if (oa == ob) return set_genes(all[valid[a]].candidate) < set_genes(all[valid[b]].candidate);
    if (crowd[a] != crowd[b]) return crowd[a] > crowd[b];
    return oa < ob;
  });
  std::vector<std::size_t> out;
  for (auto o : order) out.push_back(valid[o]);
  out.insert(out.end(), invalid.begin(), invalid.end());
  return out;
}

std::vector<std::size_t> best_of(const std::vector<Evaluated>& all) {
  std::vector<std::size_t> valid;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].evaluation.valid) valid.push_back(i);
  if (valid.empty()) return {};
  // Ties go to the candidate that sets fewer knobs: nothing it does not need.
  auto simpler = [&](std::size_t a, std::size_t b) { return set_genes(all[a].candidate) < set_genes(all[b].candidate); };
  if (all[valid[0]].evaluation.objectives.size() == 1) {
    auto best = *std::min_element(valid.begin(), valid.end(), [&](auto a, auto b) {
      if (all[a].evaluation.objectives[0] != all[b].evaluation.objectives[0])
        return all[a].evaluation.objectives[0] < all[b].evaluation.objectives[0];
      return simpler(a, b);
    });
    return {best};
  }
  auto rank = ranks_of(all, valid);
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (rank[i] != 0) continue;
    // Of candidates with identical objectives keep only the simplest.
    bool duplicate = false;
    for (auto& f : front)
      if (all[f].evaluation.objectives == all[valid[i]].evaluation.objectives) {
        if (simpler(valid[i], f)) f = valid[i];
        duplicate = true;
      }
    if (!duplicate) front.push_back(valid[i]);
  }
  return front;
}

std::size_t preferred_point(const std::vector<const Evaluation*>& points, const Evaluation* reference, std::size_t primary) {
  bool use_reference = reference && reference->valid;
  // The objectives in the order they decide: the primary, then the others.
  auto ordered = [primary](const std::vector<double>& v) {
    std::vector<double> out;
    if (primary < v.size()) out.push_back(v[primary]);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (k != primary) out.push_back(v[k]);
    return out;
  };
  std::size_t best = SIZE_MAX;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Evaluation& e = *points[i];
    if (!e.valid || e.objectives.empty()) continue;
    bool acceptable = true;
    if (use_reference)
      for (std::size_t k = 0; k < e.objectives.size() && k < reference->objectives.size(); ++k)
        if (k != primary) acceptable &= e.objectives[k] <= reference->objectives[k];
    if (!acceptable) continue;
    if (best == SIZE_MAX || ordered(e.objectives) < ordered(points[best]->objectives)) best = i;
  }
  return best;
}

} // namespace ciq::tuner
