// A candidate's step (tuner/measure/step.h): what its commands see.
#include "tuner/measure/step.h"
#include "cache/compile_trace.h"

#include "utils/config.h"
#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

SearchSpace space_with_param() {
  SearchSpace s;
  s.dimensions = {*parse_param("tile=choice:16,32")};
  return s;
}

} // namespace

TEST(Step, placeholders_name_the_controls_workdir_gpu_and_each_parameter) {
  SearchSpace s = space_with_param();
  Candidate c = s.default_candidate();
  c.genes[0] = 1;
  auto v = step_placeholders(s.resolve(c), "/r/evals/0003", "1");
  EXPECT_EQ(v["controls"], "/r/evals/0003/candidate.controls");
  EXPECT_EQ(v["workdir"], "/r/evals/0003");
  EXPECT_EQ(v["gpu"], "1");
  EXPECT_EQ(v["param:tile"], "32");
  EXPECT_EQ(v.size(), 4u);
}

TEST(Step, the_environment_carries_only_what_the_setup_asks_for_then_the_extra) {
  SearchSpace s;
  TuningSetup setup;
  setup.memo = false;
  auto plain = step_environment(setup, s, "/w");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0], (std::pair<std::string, std::string>{env_name(Env::controls), "/w/candidate.controls"}));
  EXPECT_EQ(plain[1], (std::pair<std::string, std::string>{env_name(Env::trace), "/w/trace"}));

  setup.kernels = "*gemm*";
  setup.memo = true;
  setup.memo_dir = "/r/memo";  // open_run's: the run's own memo
  setup.acf_cache_dir = "/c";
  s.units = {"a.cu", "b.cu"};
  auto full = step_environment(setup, s, "/w", {{"EXTRA", "1"}});
  std::vector<std::pair<std::string, std::string>> expected = {
      plain[0], plain[1], {env_name(Env::kernels), "*gemm*"}, {env_name(Env::units), "a.cu,b.cu"},
      {env_name(Env::cache_dir), "/c"}, {env_name(Env::memo_dir), "/r/memo"}, {"EXTRA", "1"}};
  EXPECT_EQ(full, expected);
}

TEST(Step, memo_reports_are_added_up_and_unreadable_ones_skipped) {
  ScratchDir dir = *ScratchDir::create("memo-steps");
  EXPECT_EQ(count_memo_steps(dir.path()).run, 0);
  std::string steps = join_path(dir.path(), "steps");
  ASSERT_TRUE(make_dirs(steps).ok());
  // The records as ciq-nvcc writes them (cache/compile_trace.h), and what
  // is skipped: not JSON, another format, another kind, one being written.
  ASSERT_TRUE(write_file_atomic(join_path(steps, "a.json"), cache::steps_record_text({3, 1, {"cicc"}})).ok());
  ASSERT_TRUE(write_file_atomic(join_path(steps, "b.json"), cache::steps_record_text({1, 4, {}})).ok());
  ASSERT_TRUE(write_file_atomic(join_path(steps, "c.json"), "not json").ok());
  ASSERT_TRUE(write_file_atomic(join_path(steps, "d.json"), R"({"steps_run":100,"steps_reused":100})").ok());
  ASSERT_TRUE(write_file_atomic(join_path(steps, "e.json"), R"({"format":"ciq-trace/1","kind":"unit","steps_run":100})").ok());
  ASSERT_TRUE(write_file_atomic(join_path(steps, "f.json.tmp.abc"), cache::steps_record_text({100, 100, {}})).ok());
  ASSERT_TRUE(write_file_atomic(join_path(steps, ".partial"), R"({"steps_run":100})").ok());
  MemoSteps memo = count_memo_steps(dir.path());
  EXPECT_EQ(memo.run, 4);
  EXPECT_EQ(memo.reused, 5);
}
