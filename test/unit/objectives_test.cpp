// Tests of tuner/objectives: statistics (median, Welch's t-test), objectives
// and the metric read from a benchmark's output, and the ptxas trace as the
// tuner reads it (written by wrapper/trace.h).
#include "tuner/objectives/objectives.h"
#include "tuner/objectives/statistics.h"
#include "utils/files.h"
#include "wrapper/trace.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

TEST(Statistics, median_and_variance) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(variance({1, 2, 3, 4}), 5.0 / 3);
}

TEST(Statistics, student_t_cdf_matches_tables) {
  EXPECT_NEAR(student_t_cdf(0, 5), 0.5, 1e-12);
  EXPECT_NEAR(student_t_cdf(2.015, 5), 0.95, 1e-3);   // t(0.95, 5)
  EXPECT_NEAR(student_t_cdf(-2.228, 10), 0.025, 1e-3); // t(0.025, 10)
  EXPECT_NEAR(student_t_cdf(1.96, 1e6), 0.975, 1e-3);  // the normal limit
}

TEST(Statistics, welch_detects_a_real_difference_only) {
  std::vector<double> a{1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.00};
  std::vector<double> b{0.95, 0.96, 0.94, 0.95, 0.97, 0.93, 0.96, 0.94, 0.95, 0.95};
  WelchResult w = welch_t_test(b, a);
  EXPECT_LT(w.p_less, 1e-6);
  EXPECT_LT(w.t, 0);
  WelchResult same = welch_t_test(a, a);
  EXPECT_NEAR(same.p_less, 0.5, 1e-9);
  // Overlapping noisy samples: no significance.
  std::vector<double> c{1.00, 1.02, 0.98, 1.01, 0.99};
  std::vector<double> d{0.99, 1.01, 1.00, 0.98, 1.02};
  EXPECT_GT(welch_t_test(c, d).p_less, 0.05);
  // Known value: t = -3.03 / sqrt(2 * 9.1667 / 10) = -2.2378 with 18 degrees
  // of freedom; a t table gives a one-sided p of 0.0191.
  std::vector<double> e{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, f{3.03, 4.03, 5.03, 6.03, 7.03, 8.03, 9.03, 10.03, 11.03, 12.03};
  WelchResult k = welch_t_test(e, f);
  EXPECT_NEAR(k.t, -2.2378, 1e-3);
  EXPECT_NEAR(k.dof, 18, 1e-9);
  EXPECT_NEAR(k.p_less, 0.0191, 5e-4);
}

TEST(Objectives, metric_extraction) {
  auto o = metric_objective("time_ms: ([0-9.]+)");
  ASSERT_TRUE(o.ok());
  EXPECT_DOUBLE_EQ(*extract_metric(*o, "warmup\ntime_ms: 1.5\ntime_ms: 1.25\n"), 1.25);
  EXPECT_FALSE(extract_metric(*o, "no number here").ok());
  EXPECT_FALSE(metric_objective("time_ms: [0-9.]+").ok()); // no capture group
  EXPECT_FALSE(metric_objective("(").ok());
  EXPECT_FALSE(builtin_objective("ptxas:speed").ok());
  EXPECT_TRUE(builtin_objective("ptxas:spill-stores")->deterministic());
}

TEST(Objectives, hostile_output_is_matched_in_linear_time_and_overflow_refused) {
  auto o = metric_objective("f=([0-9]+)");
  ASSERT_TRUE(o.ok());
  // std::regex recursed per character here (exit 139); as a double it is inf.
  auto huge = extract_metric(*o, "f=" + std::string(40000, '1') + "\n");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("is not a finite number"), std::string::npos) << huge.error().message;
  EXPECT_FALSE(extract_metric(*o, "f=" + std::string(20000, '9')).ok());
  auto backtracking = metric_objective("(?:x+x+)+y=([0-9]+)");
  ASSERT_TRUE(backtracking.ok());
  EXPECT_DOUBLE_EQ(*extract_metric(*backtracking, std::string(100000, 'x') + "z\nxxy=7\n"), 7);
  auto empty_group = metric_objective("a*(b*)");
  ASSERT_TRUE(empty_group.ok());
  EXPECT_FALSE(extract_metric(*empty_group, "zzz").ok()); // only empty matches: no number, and no endless loop
  EXPECT_FALSE(metric_objective("(a)\\1").ok());          // a backreference: RE2 refuses it
}

// The trace has one schema: what ciq-ptxas writes is what the tuner reads,
// field for field; a record in another format is an error, not zeros.
TEST(Trace, written_by_the_wrapper_read_by_the_tuner) {
  auto dir = ciq::ScratchDir::create("ciq-trace-test").value();
  ciq::wrapper::TraceRecord w;
  w.input = "k.ptx";
  w.output = "k.cubin";
  w.target = "sm_90a";
  w.ptxas_version = "13.0.88";
  w.flags = "-O3";
  w.accepts_controls_file = true;
  w.module_key = "00112233445566778899aabbccddeeff";
  w.controls = "maxrregcount=64";
  w.controls_applied = true;
  w.controls_error = "";
  w.code_digest = "abcdef";
  w.exit_status = 0;
  w.seconds = 0.25;
  ciq::wrapper::TraceKernel k;
  k.name = "_Z5heavyPf \"quoted\"";
  k.key = "ffeeddccbbaa99887766554433221100";
  k.block_threads = 256;
  k.resources.registers = 64;
  k.resources.spill_stores = 12;
  k.resources.spill_loads = 8;
  k.resources.stack = 16;
  k.resources.shared = 4096;
  w.kernels.push_back(k);
  ciq::wrapper::write_trace(dir.path(), w);

  auto read = read_trace(dir.path());
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 1u);
  const TracedModule& m = read->front();
  EXPECT_EQ(m.input, w.input);
  EXPECT_EQ(m.output, w.output);
  EXPECT_EQ(m.target, w.target);
  EXPECT_EQ(m.ptxas_version, w.ptxas_version);
  EXPECT_EQ(m.flags, w.flags);
  EXPECT_EQ(m.module_key, w.module_key);
  EXPECT_EQ(m.controls, w.controls);
  EXPECT_TRUE(m.controls_applied);
  EXPECT_TRUE(m.accepts_controls_file);
  EXPECT_EQ(m.code_digest, w.code_digest);
  EXPECT_DOUBLE_EQ(m.seconds, 0.25);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].name, k.name);
  EXPECT_EQ(m.kernels[0].key, k.key);
  EXPECT_EQ(m.kernels[0].block_threads, 256);
  EXPECT_EQ(m.kernels[0].registers, 64);
  EXPECT_EQ(m.kernels[0].spill_stores, 12);
  EXPECT_EQ(m.kernels[0].spill_loads, 8);
  EXPECT_EQ(m.kernels[0].stack, 16);
  EXPECT_EQ(m.kernels[0].shared, 4096);

  ASSERT_TRUE(ciq::write_file_atomic(ciq::join_path(dir.path(), "old.json"), "{\"format\":\"ciq-trace/0\"}").ok());
  auto refused = read_trace(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("not ciq-trace/1"), std::string::npos) << refused.error().message;
}

// A unit record likewise: ciq-cicc writes it under units/, the tuner reads
// it back member for member; a module record there is refused.
TEST(Trace, unit_records_written_by_the_wrapper_read_by_the_tuner) {
  auto dir = ciq::ScratchDir::create("ciq-unit-trace-test").value();
  ciq::wrapper::UnitTraceRecord w;
  w.unit = "a.cu";
  w.target = "compute_90a";
  w.key = "8069f59c996baf875bd23a8716ce54cd";
  w.nvcc_version = "13.0.88";
  w.kernels = {"rows", "maths"};
  w.controls_error = "fmad: not in space nvcc-13";
  w.warnings = {"cicc warning: something"};
  ciq::wrapper::write_unit_trace(dir.path(), w);
  auto read = read_unit_trace(dir.path());
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 1u);
  const TracedUnit& u = read->front();
  EXPECT_EQ(u.unit, w.unit);
  EXPECT_EQ(u.target, w.target);
  EXPECT_EQ(u.key, w.key);
  EXPECT_EQ(u.nvcc_version, w.nvcc_version);
  EXPECT_EQ(u.kernels, w.kernels);
  EXPECT_EQ(u.controls_error, w.controls_error);
  EXPECT_EQ(u.warnings, w.warnings);

  ciq::wrapper::TraceRecord module;
  module.input = "k.ptx";
  ciq::wrapper::write_trace(ciq::join_path(dir.path(), "units"), module);  // no "kind": "unit"
  auto refused = read_unit_trace(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("unit record"), std::string::npos) << refused.error().message;
}

namespace {

// One timed process; `step` launched `launches` times at one size, each
// taking `ns`, and `tiny` twice at 10 ns.
formats::KernelTrace trace_with(std::uint64_t launches, double ns) {
  formats::KernelTrace t;
  formats::TraceProcess p;
  p.status = "ok";
  t.processes.push_back(p);
  formats::KernelSummary step;
  step.kernel = "_Z4stepPf";
  step.stats.launches = launches;
  step.stats.total_ns = std::uint64_t(ns * double(launches));
  step.stats.median_ns = ns;
  formats::ConfigSummary config;
  config.stats = step.stats;
  step.configs.push_back(config);
  formats::KernelSummary tiny;
  tiny.kernel = "_Z4tinyv";
  tiny.stats.launches = 2;
  tiny.stats.total_ns = 20;
  tiny.stats.median_ns = 10;
  t.kernels = {step, tiny};
  return t;
}

} // namespace

// An autotuner in the program launched the kernel more often in this run
// (Inductor, on an H100: 207 launches instead of 56 once ptxas gave the
// kernel more registers): scored at the default's launches, at this run's
// median, so a faster kernel is not counted slower for its extra launches.
TEST(Objectives, kernel_time_scores_extra_launches_at_the_default_s_count) {
  auto objective = builtin_objective("kernel-time:_Z4step*");
  ASSERT_TRUE(objective);
  auto reference = launch_counts(*objective, trace_with(56, 397000));
  EXPECT_EQ(reference, (LaunchCounts{{"_Z4stepPf", 56}})); // only the timed kernels
  std::vector<ScaledKernel> scaled;
  auto tuned = kernel_time_ms(*objective, trace_with(207, 355000), &reference, &scaled);
  ASSERT_TRUE(tuned);
  EXPECT_NEAR(*tuned, 56 * 0.355, 1e-9);
  ASSERT_EQ(scaled.size(), 1u);
  EXPECT_EQ(scaled[0].kernel, "_Z4stepPf");
  EXPECT_EQ(scaled[0].text(), "_Z4stepPf ran 207 times, 56 in the default's first run");
  // Without the reference, or with as many launches: the run's total.
  EXPECT_NEAR(*kernel_time_ms(*objective, trace_with(207, 355000)), 207 * 0.355, 1e-9);
  scaled.clear();
  EXPECT_NEAR(*kernel_time_ms(*objective, trace_with(56, 355000), &reference, &scaled), 56 * 0.355, 1e-9);
  EXPECT_TRUE(scaled.empty());
}
