#include "tuner/measure/executor.h"

#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

Step echo_step(const std::string& workdir, const std::string& command) {
  Step step;
  step.kind = StepKind::bench;
  step.command = command;
  step.placeholders = {{"workdir", workdir}, {"gpu", "3"}};
  step.env = {{"CIQ_TEST_VALUE", "from-env"}};
  step.workdir = workdir;
  step.log_name = "bench.log";
  step.gpu = "3";
  return step;
}

} // namespace

// make_executor() is the one place that chooses; the choice shows in the
// slots each one offers.
TEST(Executor, make_executor_chooses_from_the_setup) {
  TuningSetup local;
  local.gpus = {"0", "1"};
  EXPECT_EQ(make_executor(local)->slots(), (std::vector<std::string>{"0", "1"}));
  EXPECT_FALSE(make_executor(local)->schedules_gpus());
  EXPECT_EQ(make_executor(TuningSetup{})->slots(), (std::vector<std::string>{""}));

  TuningSetup slurm;
  slurm.slurm = SlurmConfig{};
  slurm.jobs = 3;
  EXPECT_EQ(make_executor(slurm)->slots(), (std::vector<std::string>(3, "")));
  EXPECT_TRUE(make_executor(slurm)->schedules_gpus());

  TuningSetup server = local;
  server.bench_server = "server {gpu}";
  EXPECT_EQ(make_executor(server)->slots(), (std::vector<std::string>{"0", "1"}));
}

// A local step: the environment and the slot reach the process, and the
// log shows the argv, the output and how it ended.
TEST(Executor, local_step_runs_with_its_environment_and_logs_it) {
  auto dir = ScratchDir::create("ciq-executor-test").value();
  auto executor = make_executor(TuningSetup{});
  auto done = executor->run_step(echo_step(dir.path(), "sh -c 'echo $CIQ_TEST_VALUE gpu=$CUDA_VISIBLE_DEVICES {workdir}'"));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(done->run.succeeded());
  EXPECT_EQ(done->run.out, "from-env gpu=3 " + dir.path() + "\n");
  EXPECT_EQ(done->log, join_path(dir.path(), "bench.log"));
  auto log = read_file(done->log).value();
  EXPECT_EQ(log.rfind("$ sh -c ", 0), 0u) << log;
  EXPECT_NE(log.find("from-env gpu=3"), std::string::npos) << log;
  EXPECT_NE(log.find("[exit status 0]"), std::string::npos) << log;
}

// A command that does not parse never runs: an error, not a result.
TEST(Executor, unparsable_command_is_an_error) {
  auto dir = ScratchDir::create("ciq-executor-test").value();
  auto done = make_executor(TuningSetup{})->run_step(echo_step(dir.path(), "echo 'unterminated"));
  EXPECT_FALSE(done);
}

// Each executor checks the options that concern it, with the messages the
// user has always seen.
TEST(Executor, check_options_refuse_what_the_executor_cannot_do) {
  TuningSetup slurm;
  slurm.slurm = SlurmConfig{};
  slurm.gpus = {"0"};
  auto refused = make_executor(slurm)->check_options(slurm);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "--gpus is for --executor local: under Slurm the scheduler picks the GPU (--slurm-gres)");

  TuningSetup server;
  server.bench_server = "server";
  refused = make_executor(server)->check_options(server);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--bench-server needs --bench"), std::string::npos);
  server.bench = "--cubin {workdir}/k.cubin";
  refused = make_executor(server)->check_options(server);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--bench-server needs --build"), std::string::npos);
  server.compiler = false; // parameters only: nothing to build
  EXPECT_TRUE(make_executor(server)->check_options(server));

  TuningSetup local;
  EXPECT_TRUE(make_executor(local)->check_options(local));
}
