// Scoring (tuner/measure/scoring.h): samples as measured, values as the
// search compares them.
#include "tuner/measure/scoring.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ciq::tuner;

TEST(Scoring, benchmark_objectives_take_every_run_and_ptxas_ones_the_trace) {
  std::vector<Objective> objectives = {*metric_objective("a=([0-9]+)"), *builtin_objective("ptxas:registers"),
                                       *metric_objective("b=([0-9]+)")};
  TracedModule m;
  m.kernels.push_back({});
  m.kernels.back().name = "k";
  m.kernels.back().registers = 40;
  std::vector<std::vector<double>> samples;
  record_samples(objectives, "", {m}, {{1, 10}, {2, 20}, {3, 30}}, samples);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0], (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(samples[1], (std::vector<double>{40}));
  EXPECT_EQ(samples[2], (std::vector<double>{10, 20, 30}));
}

TEST(Scoring, the_value_is_the_median_of_the_scaled_runs_negated_when_maximised) {
  Objective time = *metric_objective("t=([0-9.]+)");
  Objective rate = *metric_objective("r=([0-9.]+)");
  rate.maximize = true;
  Objective regs = *builtin_objective("ptxas:registers");
  std::vector<std::vector<double>> samples = {{10, 40, 12}, {5, 7, 6}, {32}};
  auto plain = objective_values({time, rate, regs}, samples, {}, {});
  EXPECT_EQ(plain, (std::vector<double>{12, -6, 32}));
  // Run 2 ran on a GPU whose default is twice as slow: it counts as 20.
  std::vector<GpuDefault> defaults = {{"0", {10, 10, NAN}, 1}, {"1", {20, 20, NAN}, 1}};
  auto scaled = objective_values({time, rate, regs}, samples, {"0", "1", "0"}, defaults);
  EXPECT_DOUBLE_EQ(scaled[0], 12);
  EXPECT_DOUBLE_EQ(scaled[1], -5); // 5, 3.5, 6
  auto none = objective_values({time}, {{}}, {}, {});
  EXPECT_TRUE(std::isnan(none[0]));
}
