#include "tuner/measure/slurm.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

RunResult ended(int code, std::string err) {
  RunResult r;
  r.exit_code = code;
  r.err = std::move(err);
  return r;
}

} // namespace

TEST(Slurm, JobArgvAsksForTheResourcesOfEachKind) {
  SlurmConfig c;
  c.srun = "/usr/bin/srun";
  c.job_name = "ciq-0123456789ab";
  c.partition = "gpu";
  c.account = "lab";
  c.time_limit = "10";
  c.build_cpus = 4;
  c.extra = {"--qos=high"};
  auto build = job_argv(c, {"make", "-j4"}, false, "0003:build.log");
  std::vector<std::string> want{"/usr/bin/srun", "--job-name=ciq-0123456789ab", "--comment=0003:build.log", "--nodes=1",
                                "--ntasks=1", "--export=ALL", "--kill-on-bad-exit=1", "--partition=gpu", "--account=lab",
                                "--time=10", "--cpus-per-task=4", "--qos=high", "--", "make", "-j4"};
  EXPECT_EQ(build, want);
  auto bench = job_argv(c, {"./bench"}, true, "0003:bench.log");
  EXPECT_NE(std::find(bench.begin(), bench.end(), "--gres=gpu:1"), bench.end());
  EXPECT_EQ(std::find(bench.begin(), bench.end(), "--cpus-per-task=4"), bench.end());
  c.gres = "none";
  bench = job_argv(c, {"./bench"}, true, "x");
  for (const auto& a : bench) EXPECT_NE(a.rfind("--gres", 0), 0u) << a;
}

TEST(Slurm, JobEndReadsWhySlurmEndedIt) {
  // What slurmstepd and srun print (Slurm 22.05).
  auto e = job_end(ended(143, "slurmstepd-n1: error: *** STEP 33.0 ON n1 CANCELLED AT 2026-12-03T14:35:28 ***\n"
                              "srun: error: n1: task 0: Terminated\n"));
  EXPECT_TRUE(e.by_scheduler);
  EXPECT_FALSE(e.retry);
  EXPECT_EQ(e.reason, "Slurm cancelled the job (scancel)");
  e = job_end(ended(143, "slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-12-03T01:00:00 DUE TO TIME LIMIT ***\n"));
  EXPECT_EQ(e.reason, "Slurm cancelled the job (time limit)");
  EXPECT_FALSE(e.retry);
  e = job_end(ended(143, "slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-12-03T01:00:00 DUE TO PREEMPTION ***\n"));
  EXPECT_TRUE(e.retry);
  e = job_end(ended(1, "srun: error: Unable to allocate resources: Invalid partition name specified\n"));
  EXPECT_TRUE(e.by_scheduler);
  EXPECT_EQ(e.reason, "Slurm did not run the job: Invalid partition name specified");
  // srun ended before slurmstepd's line arrived: its own words still say
  // Slurm ended the step (seen on the test cluster).
  e = job_end(ended(143, "srun: launch/slurm: _step_signal: Terminating StepId=19.0\n"));
  EXPECT_TRUE(e.by_scheduler);
  EXPECT_EQ(e.reason, "Slurm cancelled the job");
  EXPECT_TRUE(job_end(ended(143, "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n")).by_scheduler);
  // The program's own failure, even one that prints stars, is not Slurm's.
  EXPECT_FALSE(job_end(ended(1, "*** test failed ***\nsrun: error: n1: task 0: Exited with exit code 1\n")).by_scheduler);
  EXPECT_FALSE(job_end(ended(0, "")).by_scheduler);
}

TEST(Slurm, ValidateRefusesWhatSlurmWould) {
  SlurmConfig c;
  EXPECT_TRUE(validate(c));
  for (const char* t : {"10", "1:30:00", "2-12", "1-00:30:00"}) {
    c.time_limit = t;
    EXPECT_TRUE(validate(c)) << t;
  }
  for (const char* t : {"ten", "1:2:3:4", ":5", "1--2", "1::2", "1-:30"}) {
    c.time_limit = t;
    EXPECT_FALSE(validate(c)) << t;
  }
  c.time_limit.clear();
  c.extra = {"qos=high"};
  EXPECT_FALSE(validate(c));
  c.extra = {"--"};
  EXPECT_FALSE(validate(c));
  c.extra.clear();
  c.gres = "gpu:1 --x";
  EXPECT_FALSE(validate(c));
}

TEST(Slurm, TimesInSlurmsSyntaxAreSeconds) {
  EXPECT_EQ(time_seconds("10"), 600.0);
  EXPECT_EQ(time_seconds("10:30"), 630.0);
  EXPECT_EQ(time_seconds("1:30:00"), 5400.0);
  EXPECT_EQ(time_seconds("2-12"), 2 * 86400.0 + 12 * 3600);
  EXPECT_EQ(time_seconds("1-00:30"), 86400.0 + 1800);
  EXPECT_EQ(time_seconds("1-00:30:15"), 86400.0 + 1815);
  EXPECT_FALSE(time_seconds("ten"));
  EXPECT_FALSE(time_seconds("1:2:3:4"));
  EXPECT_FALSE(time_seconds(""));
  EXPECT_FALSE(time_seconds("1::2"));
  EXPECT_FALSE(time_seconds("1-:30"));
}

TEST(Slurm, JobNamesFollowTheRunDirectory) {
  EXPECT_EQ(job_name_for("/shared/runs/a"), job_name_for("/shared/runs/a"));
  EXPECT_NE(job_name_for("/shared/runs/a"), job_name_for("/shared/runs/b"));
  EXPECT_EQ(job_name_for("/x").size(), 16u);
}
