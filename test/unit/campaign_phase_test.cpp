// commands/campaign_phase.h: a kernel moves through its campaign only by
// advance(), from what its run's summary says (never its stderr), and a
// resumed campaign starts it where its directories say (start_phase()).
#include "tuner/commands/campaign_phase.h"
#include "tuner/commands/campaign_runs.h"
#include "tuner/rundir/command_line.h"

#include "tuner/rundir/summary.h"
#include "utils/files.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

struct CampaignPhase : ::testing::Test {
  ScratchDir dir = ScratchDir::create("ciq-phase-test").value();
  CampaignOptions c;
  KernelResult r;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  void SetUp() override {
    c.tune.out_dir = dir.path();
    r.kernel = "_Z4stepPf";
    r.run_dir = join_path(dir.path(), "000-step");
    r.replay_dir = r.run_dir + ".replay";
  }

  // A run that exited 0 after writing `summary` to `where`.
  Result<RunResult> finished_with(const std::string& where, const RunSummary& summary) {
    EXPECT_TRUE(make_dirs(where));
    EXPECT_TRUE(write_summary(where, summary));
    RunResult ran;
    ran.exit_code = 0;
    return ran;
  }

  static RunSummary found(const std::string& controls, bool shipped) {
    RunSummary s;
    s.results.emplace();
    s.results->objective = "kernel-time";
    s.results->baseline = 10;
    s.results->best = controls == "default" ? 10 : 8;
    s.results->controls = controls;
    s.results->shipped = shipped;
    s.results->entries = shipped ? 1 : 0;
    s.results->verdict = shipped ? "better than the default" : "the default was the best candidate found";
    return s;
  }
};

} // namespace

TEST_F(CampaignPhase, a_replay_that_cannot_serve_sends_the_kernel_to_program_runs) {
  r.phase = KernelPhase::replay;
  RunResult died;
  died.signal = 9;
  advance(c, r, died, started, 0, 1);
  EXPECT_EQ(r.phase, KernelPhase::tune);
  EXPECT_TRUE(r.replay_dir.empty());
  EXPECT_NE(r.replay_note.find("replay could not tune it"), std::string::npos) << r.replay_note;
  EXPECT_NE(r.replay_note.find("left no summary"), std::string::npos) << r.replay_note;
}

TEST_F(CampaignPhase, a_replay_whose_default_won_is_the_kernels_result) {
  r.phase = KernelPhase::replay;
  advance(c, r, finished_with(r.replay_dir, found("default", false)), started, 0, 1);
  EXPECT_EQ(r.phase, KernelPhase::done);
  EXPECT_EQ(r.verdict, "the default was the best candidate found");
  EXPECT_TRUE(r.to_confirm.empty());
}

TEST_F(CampaignPhase, a_replay_winner_goes_to_the_program_to_be_confirmed) {
  r.phase = KernelPhase::replay;
  advance(c, r, finished_with(r.replay_dir, found("_Z4stepPf:maxnreg=64", false)), started, 0, 1);
  EXPECT_EQ(r.phase, KernelPhase::confirm);
  EXPECT_EQ(r.replay_controls, "_Z4stepPf:maxnreg=64");
  EXPECT_EQ(r.to_confirm, join_path(r.replay_dir, "best.controls"));
  EXPECT_NEAR(r.replay_change, -0.2, 1e-9);
  // What the phase runs next: the program's confirmation, in run_dir.
  auto run = phase_run(c, {r}, r, "", "", {}, 0);
  ASSERT_TRUE(run);
  EXPECT_NE(std::find(run->argv.begin(), run->argv.end(), "--seed-controls"), run->argv.end());
  EXPECT_NE(std::find(run->argv.begin(), run->argv.end(), r.run_dir), run->argv.end());
}

TEST_F(CampaignPhase, the_programs_confirmation_ends_the_kernel) {
  r.phase = KernelPhase::confirm;
  r.to_confirm = join_path(r.replay_dir, "best.controls");
  advance(c, r, finished_with(r.run_dir, found("_Z4stepPf:maxnreg=64", true)), started, 0, 1);
  EXPECT_EQ(r.phase, KernelPhase::done);
  EXPECT_TRUE(r.shipped);
  EXPECT_TRUE(r.to_confirm.empty());
  EXPECT_FALSE(phase_run(c, {r}, r, "", "", {}, 0)); // nothing more to run
}

TEST_F(CampaignPhase, a_run_that_fails_says_why_from_its_summary) {
  r.phase = KernelPhase::tune;
  r.replay_dir.clear();
  RunSummary failed;
  failed.outcome = RunOutcome::failed;
  failed.reason = "the discovery build failed: exit 2\nmore";
  auto ran = finished_with(r.run_dir, failed);
  ran->exit_code = 1;
  advance(c, r, ran, started, 0, 1);
  EXPECT_EQ(r.phase, KernelPhase::failed);
  EXPECT_EQ(r.error, "ciq-tuner: error: the discovery build failed: exit 2");
}

TEST_F(CampaignPhase, a_resumed_campaign_starts_where_its_directories_say) {
  KernelResult fresh = r;
  start_phase(c, fresh);
  EXPECT_EQ(fresh.phase, KernelPhase::replay); // a capture: replayed first

  KernelResult program = r;
  program.replay_dir.clear();
  start_phase(c, program);
  EXPECT_EQ(program.phase, KernelPhase::tune);

  // Its confirmation finished before the interrupt: done, nothing runs again.
  ASSERT_TRUE(finished_with(r.run_dir, found("_Z4stepPf:maxnreg=64", true)));
  KernelResult confirmed = r;
  start_phase(c, confirmed);
  EXPECT_EQ(confirmed.phase, KernelPhase::done);
  EXPECT_TRUE(confirmed.shipped);
}

// The moves the campaign may make are the table in campaign_table.h: a
// finished kernel stays finished unless the directive fallback reopens a
// done confirmation, and nothing comes back from failed.
TEST(CampaignMoves, only_the_listed_moves_are_allowed) {
  using P = KernelPhase;
  const P all[] = {P::tune, P::replay, P::confirm, P::confirm_directives, P::confirm_jointly, P::done, P::failed};
  int allowed = 0;
  for (P from : all)
    for (P to : all) allowed += allowed_move(from, to);
  EXPECT_EQ(allowed, 14);
  EXPECT_TRUE(allowed_move(P::replay, P::tune));
  EXPECT_TRUE(allowed_move(P::done, P::confirm_directives));
  EXPECT_FALSE(allowed_move(P::replay, P::failed)); // a replay that fails hands the kernel to program runs
  EXPECT_FALSE(allowed_move(P::tune, P::confirm));
  EXPECT_FALSE(allowed_move(P::done, P::tune));
  for (P to : all) EXPECT_FALSE(allowed_move(P::failed, to)) << phase_name(to);
  EXPECT_STREQ(phase_name(P::confirm_jointly), "confirm_jointly");
}

// A confirmation measures the default and the replay's winner only: the
// campaign's own --seed-controls and --budget give way to its own (before,
// the user's seed was the second candidate of a budget of 2).
TEST_F(CampaignPhase, a_confirmation_replaces_the_campaigns_seeds_and_budget) {
  set_option_grammar([](std::string_view, std::string_view name) {
    return OptionFacts{true, name == "seed-controls" || name == "budget" || name == "bench" || name == "kernels", group_none};
  });
  c.run_args = {"--seed-controls", "mine.controls", "--budget", "8", "--bench", "b"};
  RunOptions run = confirm_run(c, r, "winner.controls", "", "");
  set_option_grammar(nullptr);
  const auto& a = run.argv;
  EXPECT_EQ(std::count(a.begin(), a.end(), "--seed-controls"), 1);
  EXPECT_EQ(std::count(a.begin(), a.end(), "mine.controls"), 0);
  EXPECT_EQ(std::count(a.begin(), a.end(), "winner.controls"), 1);
  EXPECT_EQ(std::count(a.begin(), a.end(), "8"), 0);
  EXPECT_EQ(std::count(a.begin(), a.end(), "--bench"), 1);
}
