// run/options.h: what ciq-tuner's options must be, checked in one place.
#include "tuner/run/options.h"
#include "utils/files.h"

#include <gtest/gtest.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

GivenOptions spill_run() {
  GivenOptions g;
  g.build = "make";
  g.objectives = {"ptxas:spill-stores"};
  return g;
}

std::string error_of(const GivenOptions& g) {
  auto o = tune_options(g);
  return o ? "" : o.error().message;
}

} // namespace

TEST(Options, gpu_lists) {
  EXPECT_EQ(*parse_gpu_list(""), std::vector<std::string>{});
  EXPECT_EQ(*parse_gpu_list("0, 1,GPU-ab"), (std::vector<std::string>{"0", "1", "GPU-ab"}));
  EXPECT_NE(parse_gpu_list("0,,1").error().message.find("has an empty entry"), std::string::npos);
  EXPECT_NE(parse_gpu_list("0,1,0").error().message.find("names GPU '0' twice"), std::string::npos);
}

TEST(Options, cover_as_a_fraction) {
  EXPECT_DOUBLE_EQ(*parse_cover("90%"), 0.9);
  EXPECT_DOUBLE_EQ(*parse_cover("90"), 0.9);
  EXPECT_DOUBLE_EQ(*parse_cover("0.9"), 0.9);
  EXPECT_DOUBLE_EQ(*parse_cover("100%"), 1);
  EXPECT_NE(parse_cover("most").error().message.find("--cover takes a percentage"), std::string::npos);
  EXPECT_NE(parse_cover("").error().message.find("--cover takes a percentage"), std::string::npos);
  EXPECT_NE(parse_cover("150%").error().message.find("at most 100"), std::string::npos);
  EXPECT_NE(parse_cover("0").error().message.find("above 0"), std::string::npos);
}

// A masked --publish URL (as a run directory keeps it) takes its password
// from CIQ_PUBLISH, the same URL in full.
TEST(Options, publish_url_with_a_masked_password) {
  EXPECT_EQ(*publish_url("redis://:pw@host:6379/0", ""), "redis://:pw@host:6379/0");
  EXPECT_EQ(*publish_url("redis://:***@host:6379/0", "redis://:pw@host:6379/0"), "redis://:pw@host:6379/0");
  EXPECT_NE(publish_url("redis://:***@host:6379/0", "").error().message.find("without its password"), std::string::npos);
  EXPECT_NE(publish_url("redis://:***@host:6379/0", "redis://:pw@other:6379/0").error().message.find("not the URL of --publish"),
            std::string::npos);
  EXPECT_FALSE(publish_url("http://host", ""));
}

TEST(Options, values_carried_over) {
  GivenOptions g = spill_run();
  g.gpus = "0,1";
  g.min_effect_percent = 2;
  g.strategy = "generational";
  g.resume = "/runs/a";
  g.no_ship = true;
  auto o = tune_options(g);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->setup.gpus, (std::vector<std::string>{"0", "1"}));
  EXPECT_DOUBLE_EQ(o->min_effect, 0.02);
  EXPECT_TRUE(o->generational);
  EXPECT_FALSE(o->random_search);
  EXPECT_EQ(o->out_dir, "/runs/a");
  EXPECT_TRUE(o->resume);
  EXPECT_FALSE(o->ship);
  ASSERT_EQ(o->setup.objectives.size(), 1u);
  EXPECT_EQ(o->setup.objectives[0].name, "ptxas:spill-stores");
}

TEST(Options, each_wrong_option_named) {
  GivenOptions g = spill_run();
  g.directions = {"up"};
  EXPECT_EQ(error_of(g), "--direction must be min or max, not 'up'");
  g = spill_run();
  g.directions = {"min", "max"};
  EXPECT_EQ(error_of(g), "more --direction values than objectives");
  g = spill_run();
  g.objectives = {"ptxas:registers", "ptxas:registers"};
  EXPECT_EQ(error_of(g), "objective 'ptxas:registers' is given twice (--metric/--objective)");
  g = spill_run();
  g.prefer = "energy";
  EXPECT_EQ(error_of(g), "--prefer energy is none of the objectives (ptxas:spill-stores; or their number from 1)");
  g = spill_run();
  g.stages = "cicc";
  EXPECT_EQ(error_of(g), "--stages must be all, ptxas or nvcc, not 'cicc'");
  g = spill_run();
  g.strategy = "annealing";
  EXPECT_EQ(error_of(g), "--strategy must be genetic, generational or random, not 'annealing'");
  g = spill_run();
  g.executor = "kubernetes";
  EXPECT_EQ(error_of(g), "--executor must be local or slurm, not 'kubernetes'");
  g = spill_run();
  g.verify_runs = 1; // ciq-tuner reverify --runs says the same
  EXPECT_EQ(error_of(g), "--verify-runs 1: give 2 or more interleaved runs per side: the verification's Welch's t-test needs at least 2 pairs "
                         "to estimate the variance");
  g = spill_run();
  g.pool = 1;
  EXPECT_NE(error_of(g).find("need --budget >= 1, --pool >= 2"), std::string::npos);
  g = spill_run();
  g.timeout = -1;
  EXPECT_EQ(error_of(g), "need --timeout >= 0 and --server-start >= 0 (seconds)");
}

TEST(Options, prefer_by_name_or_number) {
  GivenOptions g = spill_run();
  g.objectives = {"ptxas:spill-stores", "ptxas:registers"};
  g.prefer = "ptxas:registers";
  EXPECT_EQ(tune_options(g)->prefer, 1u);
  g.prefer = "1";
  EXPECT_EQ(tune_options(g)->prefer, 0u);
}

TEST(Options, campaign_concurrency) {
  auto o = tune_options(spill_run());
  ASSERT_TRUE(o);
  EXPECT_EQ(check_campaign_options(*o, 0).error().message, "--concurrent must be at least 1");
  EXPECT_TRUE(check_campaign_options(*o, 1));
  // ptxas objectives need no GPU, but two searches would rebuild one tree.
  EXPECT_FALSE(campaign_needs_gpus(*o, 2));
  EXPECT_NE(check_campaign_options(*o, 2).error().message.find("every one would build the same tree ('make')"), std::string::npos);
  GivenOptions g = spill_run();
  g.build = "make -C {workdir}";
  EXPECT_TRUE(check_campaign_options(*tune_options(g), 2));
  g.bench = "./bench";
  g.objectives.clear();
  g.metrics = {"t=([0-9]+)"};
  auto timed = tune_options(g);
  ASSERT_TRUE(timed);
  EXPECT_TRUE(campaign_needs_gpus(*timed, 2));
  EXPECT_NE(check_campaign_options(*timed, 2).error().message.find("needs --gpus with at least 2 GPUs"), std::string::npos);
}

TEST(Options, profile_top) {
  EXPECT_TRUE(check_profile_top(0));
  EXPECT_EQ(check_profile_top(-1).error().message, "--top takes a number of kernels, 0 for all; not -1");
}

TEST(Options, output_directory_absolute_or_dated) {
  EXPECT_EQ(output_directory("/tmp/run", "ciq-tune").value().front(), '/');
  // Named here, in the current directory, by the second: runs started in
  // the same second each get their own (the name is taken by making it).
  char scratch[] = "/tmp/ciq-options-test-XXXXXX";
  ASSERT_NE(::mkdtemp(scratch), nullptr);
  char previous[4096];
  ASSERT_NE(::getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(::chdir(scratch), 0);
  std::set<std::string> names;
  for (int i = 0; i < 3; ++i) {
    std::string dated = output_directory("", "ciq-tune").value();
    EXPECT_NE(dated.find("/ciq-tune-"), std::string::npos) << dated;
    struct stat st;
    EXPECT_TRUE(::stat(dated.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) << dated;
    names.insert(dated);
  }
  EXPECT_EQ(names.size(), 3u);
  ASSERT_EQ(::chdir(previous), 0);
  ciq::remove_tree(scratch);
}
