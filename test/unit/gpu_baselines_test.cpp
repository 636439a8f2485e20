// Per-GPU baselines (tuner/measure/gpu_baselines.h): the default's median
// per GPU, and runs scaled to the first GPU by them.
#include "tuner/measure/gpu_baselines.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ciq::tuner;

namespace {

std::vector<Objective> time_and_registers() {
  return {*metric_objective("t=([0-9.]+)"), *builtin_objective("ptxas:registers")};
}

EvalRecord default_record(std::vector<double> times, std::vector<std::string> gpus) {
  EvalRecord def;
  def.candidate = "default";
  def.status = EvalStatus::ok;
  def.samples = {std::move(times), {32}};
  def.run_gpus = std::move(gpus);
  return def;
}

} // namespace

TEST(GpuBaselines, each_gpu_gets_the_median_of_the_default_runs_it_ran) {
  auto learnt = learn_gpu_defaults(time_and_registers(), {"0", "1"},
                                   default_record({10, 20, 12, 22, 11, 30}, {"0", "1", "0", "1", "0", "1"}));
  ASSERT_EQ(learnt.warning, "");
  ASSERT_EQ(learnt.defaults.size(), 2u);
  EXPECT_EQ(learnt.defaults[0].gpu, "0");
  EXPECT_DOUBLE_EQ(learnt.defaults[0].values[0], 11);
  EXPECT_DOUBLE_EQ(learnt.defaults[1].values[0], 22);
  EXPECT_EQ(learnt.defaults[1].runs, 3);
  EXPECT_TRUE(std::isnan(learnt.defaults[0].values[1])); // compile-time: nothing to scale
}

TEST(GpuBaselines, a_gpu_without_runs_or_a_default_of_zero_gives_no_baselines_and_says_why) {
  auto other_gpus = learn_gpu_defaults(time_and_registers(), {"0", "2"}, default_record({10, 20}, {"0", "1"}));
  EXPECT_TRUE(other_gpus.defaults.empty());
  EXPECT_NE(other_gpus.warning.find("not measured on GPU '2'"), std::string::npos) << other_gpus.warning;
  auto zero = learn_gpu_defaults(time_and_registers(), {"0", "1"}, default_record({10, 0}, {"0", "1"}));
  EXPECT_TRUE(zero.defaults.empty());
  EXPECT_NE(zero.warning.find("on GPU '1' is 0, which cannot scale"), std::string::npos) << zero.warning;
  // A record with fewer sample lists than objectives (an edited journal): no runs, no crash.
  EvalRecord bare = default_record({}, {"0", "1"});
  bare.samples.clear();
  EXPECT_FALSE(learn_gpu_defaults(time_and_registers(), {"0", "1"}, bare).warning.empty());
}

TEST(GpuBaselines, a_run_is_scaled_by_the_first_gpus_default_over_its_own) {
  std::vector<GpuDefault> defaults = {{"0", {10}, 3}, {"1", {20}, 3}};
  EXPECT_DOUBLE_EQ(scale_to_first_gpu(defaults, 30, "1", 0), 15);
  EXPECT_DOUBLE_EQ(scale_to_first_gpu(defaults, 30, "0", 0), 30);
  EXPECT_DOUBLE_EQ(scale_to_first_gpu(defaults, 30, "7", 0), 30); // no default there
  EXPECT_DOUBLE_EQ(scale_to_first_gpu({defaults[1]}, 30, "1", 0), 30); // one GPU: nothing to compare
  std::vector<GpuDefault> zero = {{"0", {10}, 3}, {"1", {0}, 3}};
  EXPECT_DOUBLE_EQ(scale_to_first_gpu(zero, 30, "1", 0), 30);
}

TEST(GpuBaselines, apply_with_several_slots_placed_here_and_a_benchmark_objective) {
  TuningSetup setup;
  setup.objectives = time_and_registers();
  EXPECT_TRUE(per_gpu_baselines_apply(setup, 2, false));
  EXPECT_FALSE(per_gpu_baselines_apply(setup, 1, false));
  EXPECT_FALSE(per_gpu_baselines_apply(setup, 2, true)); // a scheduler places the runs
  setup.gpu_baselines = false;
  EXPECT_FALSE(per_gpu_baselines_apply(setup, 2, false));
  setup.gpu_baselines = true;
  setup.objectives = {*builtin_objective("ptxas:registers")};
  EXPECT_FALSE(per_gpu_baselines_apply(setup, 2, false));
}
