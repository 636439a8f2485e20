// One benchmark run (tuner/measure/bench_run.h): the values it gives, and
// the slot it holds, with a scripted executor in place of real commands.
#include "tuner/measure/bench_run.h"

#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

// Answers every step with `output`; with `as_new_server`, as a resident
// benchmark that started for the step. `on_step` runs first.
class ScriptedExecutor : public Executor {
public:
  std::string output = "t=3\n";
  bool as_new_server = false;
  std::function<void(const Step&)> on_step;
  std::vector<Step> steps;

  std::vector<std::string> slots() const override { return {"0"}; }
  Result<StepResult> run_step(const Step& step) override {
    steps.push_back(step);
    if (on_step) on_step(step);
    StepResult r;
    r.run.exit_code = 0;
    r.run.out = output;
    r.log = join_path(step.workdir, step.log_name);
    r.started_server = as_new_server;
    return r;
  }
};

GpuState energy_state(double joules, double seconds) {
  GpuState s;
  s.read = true;
  s.energy_j = joules;
  s.seconds = seconds;
  return s;
}

} // namespace

TEST(BenchRun, a_metric_comes_from_the_output_and_energy_and_power_from_the_counter) {
  std::vector<Objective> objectives = {*metric_objective("t=([0-9.]+)"), *builtin_objective("ptxas:registers"),
                                       *builtin_objective("energy"), *builtin_objective("power")};
  auto v = benchmark_values(objectives, "t=2.5\n", "L", energy_state(300, 3), nullptr, "", "0");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, (std::vector<double>{2.5, 300, 100}));
}

TEST(BenchRun, an_energy_counter_that_did_not_move_is_no_value) {
  std::vector<Objective> energy = {*builtin_objective("energy")};
  auto unread = benchmark_values(energy, "", "L", GpuState{}, nullptr, "", "0");
  ASSERT_FALSE(unread.ok());
  EXPECT_EQ(unread.error().code, "no-energy");
  EXPECT_NE(unread.error().message.find("NVML: not available"), std::string::npos);
  auto idle = benchmark_values(energy, "", "L", energy_state(0, 3), nullptr, "", "2");
  ASSERT_FALSE(idle.ok());
  EXPECT_NE(idle.error().message.find("not to have used GPU '2'"), std::string::npos) << idle.error().message;
  auto short_run = benchmark_values(energy, "", "L", energy_state(0, 0.05), nullptr, "", "2");
  ASSERT_FALSE(short_run.ok());
  EXPECT_NE(short_run.error().message.find("too short for NVML's counter"), std::string::npos) << short_run.error().message;
  EXPECT_DOUBLE_EQ(energy_uncertainty_percent(1), 10);
  EXPECT_DOUBLE_EQ(energy_uncertainty_percent(0.5), 20);
}

TEST(BenchRun, a_missing_metric_names_the_log) {
  auto v = benchmark_values({*metric_objective("t=([0-9.]+)")}, "nothing here\n", "/w/bench.log", GpuState{}, nullptr, "", "0");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("/w/bench.log"), std::string::npos) << v.error().message;
}

TEST(BenchRun, a_run_takes_a_slot_gives_it_back_and_reports_its_values) {
  ScratchDir dir = *ScratchDir::create("bench-run");
  TuningSetup setup;
  setup.bench = "bench {gpu}";
  setup.objectives = {*metric_objective("t=([0-9.]+)")};
  SearchSpace space;
  ScriptedExecutor executor;
  StepRunner steps(setup, space, executor);
  GpuPool gpus(executor.slots());
  BenchRun run;
  auto v = run_benchmark(steps, gpus, space.resolve(space.default_candidate()), dir.path(), run);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, (std::vector<double>{3}));
  EXPECT_EQ(run.gpu, "0");
  EXPECT_EQ(gpus.free_slots(), 1u);
  ASSERT_EQ(executor.steps.size(), 1u);
  EXPECT_EQ(executor.steps[0].kind, StepKind::bench);
  EXPECT_EQ(executor.steps[0].log_name, "bench.log");
}

// A fresh resident benchmark is asked again for kernel-time; when the
// second run's kernel folder cannot be made, the run fails, and its GPU
// slot must be free again (it stayed held, so the next run on that GPU
// waited for ever).
TEST(BenchRun, a_failed_second_kernel_folder_gives_the_slot_back) {
  ScratchDir dir = *ScratchDir::create("bench-run-kernels");
  TuningSetup setup;
  setup.bench = "bench";
  setup.inject_library = "/nowhere/libciq-inject.so";
  setup.objectives = {*builtin_objective("kernel-time")};
  SearchSpace space;
  ScriptedExecutor executor;
  executor.as_new_server = true;
  std::string kernels = join_path(dir.path(), "kernels");
  executor.on_step = [&](const Step&) { // kernels/ becomes a file: no run folder fits under it
    remove_tree(kernels);
    ASSERT_TRUE(write_file_atomic(kernels, "in the way").ok());
  };
  StepRunner steps(setup, space, executor);
  GpuPool gpus(executor.slots());
  BenchRun run;
  auto v = run_benchmark(steps, gpus, space.resolve(space.default_candidate()), dir.path(), run);
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(gpus.free_slots(), 1u);
}
