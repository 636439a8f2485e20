// search/lockstep.h: one search per part of a product space, their i-th
// candidates evaluated together as one whole candidate.
#include "tuner/search/lockstep.h"

#include <gtest/gtest.h>
#include <set>

using namespace ciq::tuner;

namespace {

// Parts a (dimensions 0, 1) and b (2, 3), values 0..4 each; part a is best
// at (3, 1), part b at (0, 4), each scored on its own genes alone.
SearchSpace four_dims() {
  SearchSpace s;
  for (const char* kernel : {"a", "a", "b", "b"})
    s.dimensions.push_back(Dimension{DimensionKind::directive, "k" + std::to_string(s.dimensions.size()), kernel,
                                     {"0", "1", "2", "3", "4"}, true, 0.3, 0});
  return s;
}

double cost(const Candidate& c, std::size_t first, int x, int y) {
  auto value = [&](std::size_t d) { return c.genes[d] ? *c.genes[d] : 0; };
  return (value(first) - x) * (value(first) - x) + (value(first + 1) - y) * (value(first + 1) - y) + 1;
}

} // namespace

TEST(Lockstep, each_part_finds_its_own_best_from_whole_evaluations) {
  SearchSpace s = four_dims();
  SearchConfig config;
  config.budget = 16;
  config.pool = 6;
  std::vector<Candidate> evaluated;
  std::set<std::string> distinct;
  EvaluateParts evaluate = [&](const std::vector<Candidate>& whole, int) {
    std::vector<std::vector<Evaluation>> out;
    for (const auto& c : whole) {
      evaluated.push_back(c);
      distinct.insert(s.canonical(c));
      out.push_back({Evaluation{true, {cost(c, 0, 3, 1)}, ""}, Evaluation{true, {cost(c, 2, 0, 4)}, ""}});
    }
    return out;
  };
  auto results = lockstep_search(s, {{0, 1}, {2, 3}}, config, evaluate);
  ASSERT_EQ(results.size(), 2u);
  // Each search measured its budget; together they cost about one budget of
  // whole evaluations, not two, and never the same whole candidate twice.
  EXPECT_EQ(results[0].evaluated.size(), 16u);
  EXPECT_EQ(results[1].evaluated.size(), 16u);
  EXPECT_LE(evaluated.size(), 18u);
  EXPECT_EQ(distinct.size(), evaluated.size());
  // The first whole candidate is both parts' default.
  EXPECT_EQ(s.canonical(evaluated.front()), "default");
  // Each result is in its part's own space (two dimensions).
  const auto& a = results[0].evaluated[results[0].best.front()];
  const auto& b = results[1].evaluated[results[1].best.front()];
  EXPECT_EQ(a.candidate.genes.size(), 2u);
  EXPECT_LE(a.evaluation.objectives[0], 2);
  EXPECT_LE(b.evaluation.objectives[0], 2);
}

TEST(Lockstep, a_part_space_keeps_its_own_exclusions) {
  SearchSpace s = four_dims();
  s.exclusions.push_back(Exclusion{0, 1, {true, false, false, false, false}, {false, true, false, false, false}});
  s.exclusions.push_back(Exclusion{1, 2, {true, false, false, false, false}, {true, false, false, false, false}});
  SearchSpace a = part_space(s, {0, 1});
  ASSERT_EQ(a.exclusions.size(), 1u); // the one across parts is not a's
  EXPECT_EQ(a.exclusions[0].when, 0u);
  EXPECT_EQ(a.exclusions[0].drop, 1u);
  SearchSpace b = part_space(s, {2, 3});
  EXPECT_TRUE(b.exclusions.empty());
  EXPECT_EQ(b.dimensions[0].knob, "k2");
}
