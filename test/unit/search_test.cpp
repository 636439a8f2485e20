// Tests of tuner/search: parameters and candidates, the genetic, steady-state
// and NSGA searches, pruning, exclusions, and occupancy-guided seeds.
#include "tuner/objectives/objectives.h"
#include "tuner/search/candidate.h"
#include "tuner/search/occupancy.h"
#include "tuner/search/search.h"
#include "tuner/search/synthetic.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>

using namespace ciq;
using namespace ciq::tuner;

TEST(Params, kinds_defaults_and_errors) {
  auto r = parse_param("x=range:1:20:0.5");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->values.size(), 39u);
  EXPECT_EQ(r->values.front(), "1");
  EXPECT_EQ(r->values.back(), "20");
  EXPECT_FALSE(r->knockable);
  auto c = parse_param("mode=choice:a,b,c,default=b");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->default_index, 1);
  // ,default=V with ,knockout=P (either order): knocked out, and so the
  // baseline, is V, not an empty value.
  for (const char* spec : {"n=range:1:5:1,default=3,knockout=0.5", "n=range:1:5:1,knockout=0.5,default=3"}) {
    auto both = parse_param(spec);
    ASSERT_TRUE(both.ok()) << spec;
    EXPECT_TRUE(both->knockable) << spec;
    SearchSpace s;
    s.dimensions = {*both};
    EXPECT_EQ(s.param(s.default_candidate(), "n"), "3") << spec;
  }
  auto l = parse_param("z=literal:on,knockout=0.5");
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->knockable);
  EXPECT_DOUBLE_EQ(l->knockout, 0.5);
  EXPECT_FALSE(parse_param("x=range:5:1:1").ok());
  EXPECT_FALSE(parse_param("x=range:1:5").ok());
  EXPECT_FALSE(parse_param("x=sometimes:1").ok());
  EXPECT_FALSE(parse_param("x=choice:a,b,default=c").ok());
  EXPECT_FALSE(parse_param("z=literal:on,knockout=2").ok());
  EXPECT_FALSE(parse_param("=choice:a").ok());
}

TEST(Candidates, canonical_round_trip_and_controls) {
  SearchSpace s;
  s.compiler_space = "ptxas-13";
  Dimension opt{DimensionKind::option, "maxrregcount", "", {"64", "128"}, true, 0.5, 0};
  Dimension dir{DimensionKind::directive, "maxnreg", "k", {"32", "96"}, true, 0.5, 0};
  s.dimensions = {opt, dir, *parse_param("x=choice:1,2")};
  Candidate c = s.default_candidate();
  EXPECT_EQ(s.canonical(c), "param:x=1");
  c.genes[0] = 1;
  c.genes[1] = 0;
  std::string key = s.canonical(c);
  EXPECT_EQ(key, "maxrregcount=128;k:maxnreg=32;param:x=1");
  auto back = s.parse(key);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, c);
  auto set = s.controls(c);
  EXPECT_EQ(set.options.at("maxrregcount"), "128");
  EXPECT_EQ(set.kernels.at("k").at("maxnreg"), "32");
  EXPECT_EQ(s.param(c, "x"), "1");
  EXPECT_FALSE(s.parse("maxrregcount=7").ok());
  EXPECT_FALSE(s.parse("nope=1").ok());
}

namespace {
// A noise-free separable function over a params-only space.
SearchSpace xy_space() {
  SearchSpace s;
  s.dimensions = {*parse_param("x=range:1:20:0.5,default=10"), *parse_param("y=choice:1,2,3,default=2")};
  return s;
}
EvaluateBatch xy_eval(const SearchSpace& s, int* calls, bool fail_some = false) {
  return [&s, calls, fail_some](const std::vector<Candidate>& batch, int) {
    std::vector<Evaluation> out;
    for (const auto& c : batch) {
      ++*calls;
      double x = std::stod(s.param(c, "x")), y = std::stod(s.param(c, "y"));
      Evaluation e;
      if (fail_some && y == 3 && x > 15) {
        e.reason = "crashed";
      } else {
        e.valid = true;
        e.objectives = {x * x + y};
      }
      out.push_back(e);
    }
    return out;
  };
}
} // namespace

TEST(Search, ga_minimises_x_squared_plus_y) {
  SearchSpace s = xy_space();
  int calls = 0;
  SearchConfig cfg;
  cfg.budget = 60;
  auto r = genetic_search(s, cfg, xy_eval(s, &calls, true));
  ASSERT_EQ(r.best.size(), 1u);
  EXPECT_EQ(s.canonical(r.evaluated[r.best[0]].candidate), "param:x=1;param:y=1");
  EXPECT_EQ(calls, int(r.evaluated.size())); // never paid twice
  EXPECT_LE(calls, 60);
  EXPECT_EQ(s.canonical(r.evaluated[0].candidate), "param:x=10;param:y=2"); // the default first
}

// Steady state: `jobs` evaluations really are in flight at once (a slow
// evaluation does not hold back the others), each candidate is evaluated
// once, the budget holds, and the search still finds the optimum.
TEST(Search, steady_state_keeps_jobs_in_flight_and_finds_the_optimum) {
  SearchSpace s = xy_space();
  std::mutex m;
  int calls = 0, now = 0, most = 0;
  std::set<std::string> seen;
  std::vector<std::string> started;
  std::condition_variable all_in;
  bool duplicate = false;
  SearchConfig cfg;
  cfg.budget = 60;
  EvaluateBatch inner = xy_eval(s, &calls, true);
  auto r = steady_state_search(s, cfg, [&](const std::vector<Candidate>& batch, int g) {
    EXPECT_EQ(batch.size(), 1u);
    {
      std::unique_lock lock(m);
      started.push_back(s.canonical(batch[0]));
      duplicate |= !seen.insert(s.canonical(batch[0])).second;
      most = std::max(most, ++now);
      // The first four wait (up to 5 s) until all four are in flight.
      all_in.notify_all();
      if (started.size() <= 4) all_in.wait_for(lock, std::chrono::seconds(5), [&] { return now >= 4; });
    }
    // x = 1.5 is slow; the rest go on around it.
    std::this_thread::sleep_for(std::chrono::milliseconds(s.param(batch[0], "x") == "1.5" ? 100 : 2));
    std::lock_guard lock(m);
    --now;
    return inner(batch, g);
  }, 4);
  EXPECT_EQ(most, 4);
  EXPECT_FALSE(duplicate);
  EXPECT_EQ(int(r.evaluated.size()), 60);
  EXPECT_EQ(calls, 60);
  // The default is proposed first; four threads race to start it and the next three.
  EXPECT_NE(std::find(started.begin(), started.begin() + 4, "param:x=10;param:y=2"), started.begin() + 4);
  ASSERT_EQ(r.best.size(), 1u);
  EXPECT_EQ(s.canonical(r.evaluated[r.best[0]].candidate), "param:x=1;param:y=1");
}

// A resumed steady-state run starts from what its journal holds, then
// breeds from it; a small space ends when nothing new is left.
TEST(Search, steady_state_starts_from_resumed_candidates_and_stops_when_exhausted) {
  SearchSpace s;
  s.dimensions = {*parse_param("y=choice:1,2,3,default=2")};
  SearchConfig cfg;
  cfg.budget = 50;
  cfg.resumed = {*s.parse("param:y=3")};
  std::vector<std::string> order;
  auto r = steady_state_search(s, cfg, [&](const std::vector<Candidate>& batch, int) {
    order.push_back(s.canonical(batch[0]));
    Evaluation e;
    e.valid = true;
    e.objectives = {std::stod(s.param(batch[0], "y"))};
    return std::vector<Evaluation>{e};
  }, 1);
  ASSERT_GE(order.size(), 1u);
  EXPECT_EQ(order[0], "param:y=3");
  EXPECT_EQ(r.evaluated.size(), 3u) << "three candidates exist";
}

TEST(Search, invalid_candidates_never_stop_the_search) {
  SearchSpace s = xy_space();
  int calls = 0;
  SearchConfig cfg;
  cfg.budget = 40;
  auto r = genetic_search(s, cfg, [&](const std::vector<Candidate>& batch, int) {
    std::vector<Evaluation> out;
    for (const auto& c : batch) {
      ++calls;
      Evaluation e;
      e.valid = s.param(c, "y") != "2" || s.canonical(c) == "param:x=10;param:y=2";
      if (e.valid) e.objectives = {std::stod(s.param(c, "x"))};
      else e.reason = "wrong answer";
      out.push_back(e);
    }
    return out;
  });
  EXPECT_EQ(int(r.evaluated.size()), 40);
  ASSERT_EQ(r.best.size(), 1u);
  EXPECT_TRUE(r.evaluated[r.best[0]].evaluation.valid);
}

TEST(Search, nsga_front_is_the_non_dominated_set) {
  std::vector<Evaluated> all(5);
  std::vector<std::vector<double>> objectives{{1, 5}, {2, 2}, {5, 1}, {3, 3}, {6, 6}};
  for (std::size_t i = 0; i < all.size(); ++i) all[i].evaluation = Evaluation{true, objectives[i], ""};
  auto front = best_of(all);
  EXPECT_EQ(front, (std::vector<std::size_t>{0, 1, 2}));
  auto order = nsga_order(all, {0, 1, 2, 3, 4});
  EXPECT_EQ(order[3], 3u);
  EXPECT_EQ(order[4], 4u);
  // Extremes of the front come first (infinite crowding distance).
  EXPECT_EQ(order[2], 1u);
}

TEST(Search, preferred_point_gives_up_no_other_objective) {
  Evaluation def{true, {10, 5}, ""};
  std::vector<Evaluation> points{{true, {2, 9}, ""}, {true, {6, 5}, ""}, {true, {6, 4}, ""}, {false, {}, "x"}, def};
  std::vector<const Evaluation*> p;
  for (const auto& e : points) p.push_back(&e);
  // (2, 9) has the lowest first objective but more of the second than the
  // default; of the rest, (6, 4) beats (6, 5) on the tie.
  EXPECT_EQ(preferred_point(p, &def), 2u);
  EXPECT_EQ(preferred_point(p, nullptr), 0u);
  std::vector<const Evaluation*> only_worse{&points[0], &points[4]};
  EXPECT_EQ(preferred_point(only_worse, &def), 1u); // the default itself
  std::vector<const Evaluation*> none{&points[3]};
  EXPECT_EQ(preferred_point(none, &def), SIZE_MAX);
  Evaluation def1{true, {10}, ""}, one{true, {3}, ""};
  std::vector<const Evaluation*> single{&def1, &one};
  EXPECT_EQ(preferred_point(single, &def1), 1u);
}

TEST(Search, ga_beats_random_search_on_synthetic_problems) {
  // The median over seeds of evaluations needed to reach 95 % of the
  // possible improvement, with 0.5 % noise and 10 % failing candidates.
  for (const auto& p : synthetic_problems()) {
    auto q = measure_search_quality(p, 30, 64, 0.005);
    EXPECT_LT(q.median_evals_ga, q.median_evals_random) << p.name;
    EXPECT_GT(q.reached_ga, q.reached_random + 0.2) << p.name;
  }
}

TEST(Search, prune_drops_knobs_that_do_not_earn_their_place) {
  SearchSpace s;
  for (const char* name : {"useful", "inert", "harmless"}) {
    Dimension d{DimensionKind::option, name, "", {"0", "1", "2"}, true, 0.5, 0};
    s.dimensions.push_back(d);
  }
  // `useful` = 2 helps by 10 %; `harmless` = 1 by 0.1 %, which is within a
  // 0.25 % noise tolerance (dropped) but not within an exact one (kept);
  // `inert` does nothing (dropped either way).
  auto cost = [](const Candidate& c) {
    double f = 1.0;
    if (c.genes[0] && *c.genes[0] == 2) f -= 0.1;
    if (c.genes[2] && *c.genes[2] == 1) f -= 0.001;
    return f;
  };
  EvaluateBatch evaluate = [&](const std::vector<Candidate>& batch, int) {
    std::vector<Evaluation> out;
    for (const auto& c : batch) out.push_back(Evaluation{true, {cost(c)}, ""});
    return out;
  };
  Candidate winner;
  winner.genes = {2, 1, 1};
  Evaluation score{true, {cost(winner)}, ""};
  EXPECT_EQ(s.canonical(prune(s, winner, score, evaluate, 0, 0.0)), "useful=2;harmless=1");
  EXPECT_EQ(s.canonical(prune(s, winner, score, evaluate, 0, 0.0025)), "useful=2");
  // The timing says `harmless` helps (0.1 %, beyond an exact tolerance),
  // but without it the code is the same: noise, so it goes.
  SameCode harmless_does_nothing = [](const Candidate& a, const Candidate& b) {
    Candidate x = a, y = b;
    x.genes[2].reset();
    y.genes[2].reset();
    return x == y;
  };
  EXPECT_EQ(s.canonical(prune(s, winner, score, evaluate, 0, 0.0, harmless_does_nothing)), "useful=2");
  SameCode never = [](const Candidate&, const Candidate&) { return false; };
  EXPECT_EQ(s.canonical(prune(s, winner, score, evaluate, 0, 0.0, never)), "useful=2;harmless=1");
}

TEST(Search, prune_tries_knock_outs_as_one_batch_and_respects_combinations) {
  SearchSpace s;
  for (const char* name : {"a", "b", "c"}) s.dimensions.push_back(Dimension{DimensionKind::option, name, "", {"0", "1"}});
  // a and b each do nothing alone, but the gain needs one of them
  // (either will do); c does nothing at all.
  auto cost = [](const Candidate& c) { return (c.genes[0] || c.genes[1]) ? 0.9 : 1.0; };
  std::vector<std::size_t> batches;
  EvaluateBatch evaluate = [&](const std::vector<Candidate>& batch, int) {
    batches.push_back(batch.size());
    std::vector<Evaluation> out;
    for (const auto& c : batch) out.push_back(Evaluation{true, {cost(c)}, ""});
    return out;
  };
  Candidate winner;
  winner.genes = {1, 1, 1};
  Candidate pruned = prune(s, winner, Evaluation{true, {0.9}, ""}, evaluate, 0, 0.0);
  // Round 1: the three knock-outs in one batch (all pass), then all three
  // together (fails: no gain left), so only `a` goes; round 2: `b` is now
  // needed, `c` goes.
  EXPECT_EQ(s.canonical(pruned), "b=1");
  ASSERT_GE(batches.size(), 2u);
  EXPECT_EQ(batches[0], 3u);
  EXPECT_EQ(batches[1], 1u);
}

TEST(Occupancy, register_limits_per_blocks_per_sm) {
  SmLimits h200 = sm_limits("sm_90a");
  EXPECT_EQ(register_limit(h200, 8, 1), 255); // 256 threads: one block may use them all
  EXPECT_EQ(register_limit(h200, 8, 2), 128);
  EXPECT_EQ(register_limit(h200, 8, 3), 80);  // 85 rounded down to the allocation unit of 8
  EXPECT_EQ(register_limit(h200, 8, 8), 32);
  EXPECT_EQ(register_limit(h200, 8, 9), 0);   // 72 warps do not fit
  EXPECT_EQ(register_limit(h200, 1, 32), 64);
  EXPECT_EQ(register_limit(h200, 1, 33), 0);  // 32 blocks at most
  EXPECT_EQ(register_limit(sm_limits("sm_89"), 8, 6), 40);
  EXPECT_EQ(register_limit(sm_limits("sm_89"), 8, 7), 0); // 48 warps there
}

namespace {
TracedKernel traced(const char* name, double registers, long threads) {
  TracedKernel k;
  k.name = name;
  k.registers = registers;
  k.block_threads = threads;
  return k;
}
std::vector<int> limits(const std::vector<OccupancyProbe>& probes) {
  std::vector<int> v;
  for (const auto& p : probes) v.push_back(p.maxnreg);
  return v;
}
} // namespace

TEST(Occupancy, probes_one_more_block_and_twice_the_registers) {
  SmLimits h200 = sm_limits("sm_90a");
  // The Triton attention kernel of bench/: 142 registers, 256 threads, one
  // block per SM; 128 fits two (measured 1.38x on the H200).
  auto attention = kernel_probes(traced("attn_fwd", 142, 256), h200);
  EXPECT_EQ(limits(attention), std::vector<int>{128});
  EXPECT_EQ(attention[0].why, "2 blocks of 256 threads per SM, now 1");
  // bench/'s stencil: 56 registers, 128 threads, nine blocks; 48 fits ten,
  // 128 gives four blocks the registers it wants (measured 2.5x at 160).
  EXPECT_EQ(limits(kernel_probes(traced("wave_step", 56, 128), h200)), (std::vector<int>{48, 128}));
  // Shared memory allows no second block: no probe below (80 KiB static
  // plus 1 KiB reserved, twice, fits 228 KiB; three times does not).
  TracedKernel smem = traced("smem", 142, 256);
  smem.shared = 120 * 1024;
  EXPECT_TRUE(kernel_probes(smem, h200).empty());
  smem.shared = 80 * 1024;
  EXPECT_EQ(limits(kernel_probes(smem, h200)), std::vector<int>{128});
  EXPECT_EQ(shared_memory_blocks(h200, 80 * 1024), 2);
  EXPECT_EQ(shared_memory_blocks(h200, 0), 32);
  // No declared block size: warp-level limits below and at about twice.
  EXPECT_EQ(limits(kernel_probes(traced("k", 100, 0), h200)), (std::vector<int>{96, 255}));
  EXPECT_EQ(limits(kernel_probes(traced("k", 40, 0), h200)), (std::vector<int>{32, 80}));
  // Nothing reported, nothing to probe; no block more fits 1024 threads of
  // 16 registers (two blocks already use the SM's 64 warps).
  EXPECT_TRUE(kernel_probes(traced("k", 0, 256), h200).empty());
  EXPECT_EQ(limits(kernel_probes(traced("k", 16, 1024), h200)), std::vector<int>{64});
}

TEST(Occupancy, seeds_only_kernels_with_a_maxnreg_dimension) {
  SearchSpace space;
  Dimension other{DimensionKind::option, "maxrregcount", "", {"32", "128"}};
  Dimension mine{DimensionKind::directive, "maxnreg", "hot", {}};
  for (int v = 16; v <= 255; ++v) mine.values.push_back(std::to_string(v));
  space.dimensions = {other, mine};
  TracedModule m;
  m.target = "sm_90a";
  m.kernels = {traced("cold", 200, 256), traced("hot", 142, 256)};
  auto seeds = occupancy_seeds({m}, space, 4);
  ASSERT_EQ(seeds.size(), 1u); // "cold" has no maxnreg dimension in this space
  EXPECT_EQ(space.canonical(seeds[0].candidate), "hot:maxnreg=128");
  EXPECT_TRUE(occupancy_seeds({m}, space, 0).empty());
  // On a grid without 128, the largest value below it.
  space.dimensions[1].values = {"16", "100", "120", "136", "255"};
  seeds = occupancy_seeds({m}, space, 4);
  ASSERT_EQ(seeds.size(), 1u);
  EXPECT_EQ(space.canonical(seeds[0].candidate), "hot:maxnreg=120");
  EXPECT_EQ(seeds[0].probe.maxnreg, 120);
}

TEST(Search, exclusions_keep_every_proposed_candidate_compilable) {
  SearchSpace s;
  s.dimensions.push_back(Dimension{DimensionKind::option, "fast", "", {"min", "max"}, true, 0.2, 0});
  s.dimensions.push_back(Dimension{DimensionKind::option, "level", "", {"0", "1", "2", "3"}, true, 0.2, 0});
  s.dimensions.push_back(Dimension{DimensionKind::option, "other", "", {"a", "b"}, true, 0.5, 0});
  // fast=min refuses level 0, 2, 3; fast=max refuses 1, 2, 3.
  s.exclusions.push_back(Exclusion{0, 1, {true, false}, {true, false, true, true}});
  s.exclusions.push_back(Exclusion{0, 1, {false, true}, {false, true, true, true}});
  auto refused = [](const Candidate& c) {
    if (!c.genes[0] || !c.genes[1]) return false;
    return *c.genes[0] == 0 ? *c.genes[1] != 1 : *c.genes[1] != 0;
  };
  Candidate c;
  c.genes = {0, 3, 1};
  EXPECT_TRUE(s.repair(c));
  EXPECT_EQ(s.canonical(c), "fast=min;other=b");
  EXPECT_FALSE(s.repair(c));
  c.genes = {0, 1, std::nullopt};
  EXPECT_FALSE(s.repair(c)); // min with level 1 compiles
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) EXPECT_FALSE(refused(s.random_candidate(rng)));
  // Nothing the genetic search evaluates is refused either.
  SearchConfig cfg;
  cfg.budget = 10; // the space has 3 x 5 x 3 = 45 points, 15 of them refused
  int evaluated_refused = 0;
  EvaluateBatch evaluate = [&](const std::vector<Candidate>& batch, int) {
    std::vector<Evaluation> out;
    for (const auto& x : batch) {
      evaluated_refused += refused(x);
      out.push_back(Evaluation{true, {double(s.canonical(x).size())}, ""});
    }
    return out;
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    cfg.seed = seed;
    genetic_search(s, cfg, evaluate);
  }
  EXPECT_EQ(evaluated_refused, 0);
}
