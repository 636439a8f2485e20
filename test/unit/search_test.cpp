// Tests of tuner/search: parameters and candidates, the genetic, steady-state
// and NSGA searches, pruning, exclusions, occupancy-guided seeds, and the
// search space built from a knob space and the PTX (nothing ptxas refuses
// or ignores is proposed).
#include "spaces/space.h"
#include "tuner/objectives/objectives.h"
#include "tuner/search/candidate.h"
#include "tuner/search/occupancy.h"
#include "tuner/search/search.h"
#include "tuner/search/space_builder.h"
#include "tuner/search/synthetic.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <gtest/gtest.h>
#include <map>
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

TEST(Candidates, resolved_once_as_every_step_reads_it) {
  SearchSpace s;
  s.compiler_space = "ptxas-13";
  Dimension opt{DimensionKind::option, "maxrregcount", "", {"64", "128"}, true, 0.5, 0};
  Dimension dir{DimensionKind::directive, "maxnreg", "k", {"32", "96"}, true, 0.5, 0};
  s.dimensions = {opt, *parse_param("tile=choice:16,32"), dir, *parse_param("unroll=choice:1,2,4"),
                  *parse_param("vec=choice:2,4,knockout=1")};
  Candidate c = s.default_candidate();
  c.genes[0] = 1;
  c.genes[3] = 2;
  c.genes[4].reset(); // a parameter left out, with no ,default=V: ""
  ResolvedCandidate r = s.resolve(c);
  EXPECT_EQ(r.candidate, c);
  EXPECT_EQ(r.canonical, "maxrregcount=128;param:tile=16;param:unroll=4");
  EXPECT_EQ(r.canonical, s.canonical(c));
  EXPECT_EQ(r.controls.options, (std::map<std::string, std::string>{{"maxrregcount", "128"}}));
  EXPECT_TRUE(r.controls.kernels.empty());
  EXPECT_EQ(r.controls.space, "ptxas-13");
  EXPECT_EQ(r.controls_text, spaces::format_control_set(s.controls(c)));
  EXPECT_NE(r.controls_text.find("maxrregcount = 128"), std::string::npos) << r.controls_text;
  // The parameters in the dimensions' order, as {param:NAME} and the code
  // identity take them.
  EXPECT_EQ(r.params, (std::vector<std::pair<std::string, std::string>>{{"tile", "16"}, {"unroll", "4"}, {"vec", ""}}));
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

// What ptxas 13.0 refuses or ignores, measured on sm_90a (ptxas-13.space's
// conflicts, floor, needs and unit), in a space shaped like it.
namespace {
const char* k_ptxas_like = R"(
[space]
name = test-13
tool = ptxas
versions = 13.0..13.9

[option.opt-level]
render = --opt-level={}
range = 0..3
safety = exact

[option.register-usage-level]
render = --register-usage-level={}
range = 0..10
safety = exact

[option.maxrregcount]
render = --maxrregcount={}
range = 16..255
floor = 24
overridden_by = maxntid, reqntid
safety = exact

[option.minnctapersm]
render = --minnctapersm={}
range = 1..32
needs = maxntid, reqntid
unit = blocks-per-sm
safety = exact

[option.maxntid]
render = --maxntid={}
dims = 1..1024
safety = unsafe

[directive.maxnreg]
render = .maxnreg {}
range = 16..255
floor = 24
safety = exact

[directive.minnctapersm]
render = .minnctapersm {}
range = 1..32
needs = maxntid, reqntid
unit = blocks-per-sm
safety = exact

[conflict.o0]
when = opt-level: 0
excludes = register-usage-level: *
effect = ignored

[conflict.regs]
when = maxrregcount: *
excludes = minnctapersm: *
effect = ignored

[conflict.regs-ntid]
when = maxrregcount: *
excludes = maxntid: *
effect = ignored
)";

spaces::Space ptxas_like() {
  auto s = spaces::parse_space(k_ptxas_like, "test.space");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return *s;
}

// A module for sm_90a: `bounded` declares 256 threads, `plain` nothing.
std::vector<TracedModule> two_kernel_trace(bool with_bounded = true) {
  TracedModule m;
  m.target = "sm_90a";
  if (with_bounded) m.kernels.push_back(traced("bounded", 40, 256));
  m.kernels.push_back(traced("plain", 40, 0));
  return {m};
}

// Why ptxas 13.0 (sm_90a: 32 blocks, 2048 threads per SM) would refuse or
// ignore part of `c`, written from the measured warnings rather than from
// the space; "" when it takes all of it.
std::string refused_by_ptxas(const SearchSpace& s, const Candidate& c, long bounded_threads) {
  std::map<std::string, std::string> set;
  for (std::size_t i = 0; i < s.dimensions.size(); ++i)
    if (c.genes[i]) set[s.dimensions[i].label()] = s.dimensions[i].values[std::size_t(*c.genes[i])];
  auto has = [&](const char* k) { return set.count(k) > 0; };
  auto num = [&](const char* k) { return std::atol(set.at(k).c_str()); };
  if (has("opt-level") && set["opt-level"] == "0" && has("register-usage-level")) return "-O0 with --register-usage-level";
  if (has("maxrregcount") && has("minnctapersm")) return "-maxrregcount with -minnctapersm";
  if (has("maxrregcount") && has("maxntid")) return "-maxrregcount with -maxntid";
  if (has("maxrregcount") && num("maxrregcount") < 24) return "register count raised to 24";
  for (const char* k : {"bounded:maxnreg", "plain:maxnreg"})
    if (has(k) && num(k) < 24) return "register count raised to 24";
  if (has("plain:minnctapersm")) return ".minnctapersm without .maxntid/.reqntid";
  if (has("bounded:minnctapersm") && num("bounded:minnctapersm") * bounded_threads > 2048) return "threads per SM";
  if (has("minnctapersm")) {
    long n = num("minnctapersm");
    if (bounded_threads == 0 && !has("maxntid")) return "minnctapersm with no block size anywhere";
    if (n * bounded_threads > 2048) return "threads per SM (bounded)";
    if (has("maxntid") && n * num("maxntid") > 2048) return "threads per SM (maxntid)";
  }
  return "";
}
} // namespace

TEST(SpaceBuilder, offers_only_what_the_ptx_lets_ptxas_honour) {
  SpaceRequest request;
  SearchSpace s;
  add_compiler_knobs(s, ptxas_like(), request, two_kernel_trace());
  std::vector<std::string> labels;
  for (const auto& d : s.dimensions) labels.push_back(d.label());
  // plain declares no block size and nothing here sets one: no minnctapersm for it.
  EXPECT_EQ(labels, (std::vector<std::string>{"opt-level", "register-usage-level", "maxrregcount", "minnctapersm",
                                              "bounded:maxnreg", "bounded:minnctapersm", "plain:maxnreg"}));
  const auto& bounded = s.dimensions[s.find(DimensionKind::directive, "minnctapersm", "bounded")];
  EXPECT_EQ(bounded.values, (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"})); // 8 x 256 = 2048
  EXPECT_EQ(s.dimensions[s.find(DimensionKind::option, "minnctapersm")].values.back(), "8");
  EXPECT_EQ(s.dimensions[s.find(DimensionKind::option, "maxrregcount")].values.front(), "24"); // 16..23 become 24
  EXPECT_EQ(s.dimensions[s.find(DimensionKind::directive, "maxnreg", "plain")].values.front(), "24");

  // Without a trace nothing is known of the PTX: every knob, every value.
  SearchSpace blind;
  add_compiler_knobs(blind, ptxas_like(), request, {});
  EXPECT_EQ(blind.dimensions[blind.find(DimensionKind::option, "minnctapersm")].values.size(), 32u);

  // No kernel declares a block size: the option has nothing to act on.
  SearchSpace none;
  add_compiler_knobs(none, ptxas_like(), request, two_kernel_trace(false));
  EXPECT_EQ(none.find(DimensionKind::option, "minnctapersm"), none.dimensions.size());
}

// ptxas replaces -maxrregcount by a limit of its own for a kernel that
// declares its block size ("Overriding global maxrregcount 24 with
// entry-specific value 32 computed using thread count"): where every kernel
// does (a Triton module), the option is not searched, and said so; where
// one kernel declares none, it still acts there and is searched.
TEST(SpaceBuilder, leaves_out_an_option_ptxas_overrides_for_every_kernel) {
  SpaceRequest request;
  TracedModule bounded_only;
  bounded_only.target = "sm_90a";
  bounded_only.kernels.push_back(traced("bounded", 40, 256));
  SearchSpace s;
  add_compiler_knobs(s, ptxas_like(), request, {bounded_only});
  EXPECT_EQ(s.find(DimensionKind::option, "maxrregcount"), s.dimensions.size());
  EXPECT_EQ(s.overridden_left_out, (std::vector<std::string>{"maxrregcount"}));
  EXPECT_TRUE(s.left_out.empty());  // not the "a block size is needed" kind
  EXPECT_NE(s.find(DimensionKind::directive, "maxnreg", "bounded"), s.dimensions.size()); // the directive acts

  SearchSpace mixed;
  add_compiler_knobs(mixed, ptxas_like(), request, two_kernel_trace());
  EXPECT_NE(mixed.find(DimensionKind::option, "maxrregcount"), mixed.dimensions.size());
  EXPECT_TRUE(mixed.overridden_left_out.empty());
}

TEST(SpaceBuilder, no_candidate_ptxas_refuses_or_ignores_is_ever_proposed) {
  SpaceRequest request;
  request.allow_unsafe = true; // maxntid too
  for (bool with_bounded : {true, false}) {
    SearchSpace s;
    add_compiler_knobs(s, ptxas_like(), request, two_kernel_trace(with_bounded));
    long threads = with_bounded ? 256 : 0;
    // Without bounded, minnctapersm is offered only alongside maxntid.
    ASSERT_NE(s.find(DimensionKind::option, "minnctapersm"), s.dimensions.size());
    std::mt19937_64 rng(11);
    std::map<std::string, int> seen; // how often each knob is proposed: valid ones still are
    std::set<std::string> pairs;
    auto note = [&](const Candidate& c) {
      std::string why = refused_by_ptxas(s, c, threads);
      EXPECT_EQ(why, "") << s.canonical(c);
      for (std::size_t i = 0; i < c.genes.size(); ++i)
        if (c.genes[i]) ++seen[s.dimensions[i].label()];
      auto at = [&](const char* label, DimensionKind kind) { return c.genes[s.find(kind, label)]; };
      if (at("opt-level", DimensionKind::option) && at("register-usage-level", DimensionKind::option))
        pairs.insert("opt-level+register-usage-level");
      if (at("maxntid", DimensionKind::option) && at("minnctapersm", DimensionKind::option)) pairs.insert("maxntid+minnctapersm");
    };
    for (int i = 0; i < 3000; ++i) note(s.random_candidate(rng));
    // The genetic and steady-state searches (crossover, mutation, local
    // steps) over many seeds: every candidate evaluated is one ptxas takes.
    EvaluateBatch evaluate = [&](const std::vector<Candidate>& batch, int) {
      std::vector<Evaluation> out;
      for (const auto& c : batch) {
        note(c);
        out.push_back(Evaluation{true, {double(std::hash<std::string>{}(s.canonical(c)) % 1000)}, ""});
      }
      return out;
    };
    SearchConfig cfg;
    cfg.budget = 40;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      cfg.seed = seed;
      genetic_search(s, cfg, evaluate);
      steady_state_search(s, cfg, evaluate, 1);
    }
    for (const auto& d : s.dimensions) EXPECT_GT(seen[d.label()], 0) << d.label() << " is never proposed";
    EXPECT_TRUE(pairs.count("opt-level+register-usage-level")); // opt-level 1..3 take it
    EXPECT_TRUE(pairs.count("maxntid+minnctapersm"));            // at sizes that fit
  }
}

TEST(SpaceBuilder, repair_drops_what_ptxas_would_ignore_and_keeps_the_rest) {
  SpaceRequest request;
  request.allow_unsafe = true;
  SearchSpace s;
  add_compiler_knobs(s, ptxas_like(), request, two_kernel_trace(false));
  auto c = s.parse("opt-level=0;register-usage-level=5;maxrregcount=64;minnctapersm=4;maxntid=256");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(s.repair(*c));
  // -O0 ignores the level, -maxrregcount both launch bounds; without
  // maxntid, minnctapersm has no block size to act on.
  EXPECT_EQ(s.canonical(*c), "opt-level=0;maxrregcount=64");
  auto fits = s.parse("minnctapersm=8;maxntid=256");
  ASSERT_TRUE(fits.ok());
  EXPECT_FALSE(s.repair(*fits));
  auto too_many = s.parse("minnctapersm=3;maxntid=1024"); // 3072 threads per SM
  ASSERT_TRUE(too_many.ok());
  EXPECT_TRUE(s.repair(*too_many));
  EXPECT_EQ(s.canonical(*too_many), "maxntid=1024");
}

TEST(Search, prune_knocks_out_what_needed_the_knob_it_drops) {
  SpaceRequest request;
  request.allow_unsafe = true;
  SearchSpace s;
  add_compiler_knobs(s, ptxas_like(), request, two_kernel_trace(false));
  auto winner = s.parse("minnctapersm=4;maxntid=256");
  ASSERT_TRUE(winner.ok());
  std::vector<std::string> tried;
  EvaluateBatch evaluate = [&](const std::vector<Candidate>& batch, int) {
    std::vector<Evaluation> out;
    for (const auto& c : batch) {
      tried.push_back(s.canonical(c));
      out.push_back(Evaluation{true, {1.0}, ""}); // nothing earns its place
    }
    return out;
  };
  Candidate pruned = prune(s, *winner, Evaluation{true, {1.0}, ""}, evaluate, 0);
  EXPECT_EQ(s.canonical(pruned), "default");
  for (const auto& t : tried) EXPECT_NE(t, "minnctapersm=4") << "minnctapersm without a block size was evaluated";
}
