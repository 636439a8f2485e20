// rundir/summary.h: summary.json written from its struct and read back; the
// other run and campaign files with one owner (best.controls, profile.json).
#include "tuner/commands/campaign_kernels.h"
#include "tuner/rundir/best_controls.h"
#include "tuner/rundir/campaign_file.h"
#include "tuner/rundir/summary.h"
#include "utils/files.h"
#include "utils/json.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

RunSummary finished_run() {
  SummaryResults r;
  r.objective = "ptxas:spill-stores";
  r.baseline = 1144;
  r.best = 0.25;
  r.shipped = true;
  r.entries = 1;
  r.evaluations = 10;
  r.invalid = 2;
  r.searched = 8;
  r.pruning = 2;
  r.controls = "maxrregcount=64";
  r.verdict = "better than the default";
  return RunSummary{"/runs/a", r, RunOutcome::finished, ""};
}

} // namespace

// The members and their order are what tests and users read (README, "The
// run directory"); whole numbers without a fraction.
TEST(Summary, writes_the_documented_members_in_order) {
  EXPECT_EQ(finished_run().to_json(),
            "{\"run_dir\":\"/runs/a\",\"objective\":\"ptxas:spill-stores\",\"baseline\":1144,\"best\":0.25,\"shipped\":true,"
            "\"entries\":1,\"evaluations\":10,\"invalid\":2,\"searched\":8,\"pruning\":2,\"p_value\":null,"
            "\"controls\":\"maxrregcount=64\",\"verdict\":\"better than the default\",\"prefer\":1}");
}

TEST(Summary, numbers_have_six_significant_digits_and_nan_is_null) {
  RunSummary s = finished_run();
  s.results->baseline = 1.23456789;
  s.results->best = NAN;
  s.results->p_value = 3.2e-10;
  std::string j = s.to_json();
  EXPECT_NE(j.find("\"baseline\":1.23457,\"best\":null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"p_value\":3.2e-10"), std::string::npos) << j;
}

TEST(Summary, several_objectives_and_gpus_round_trip) {
  RunSummary s = finished_run();
  s.results->baseline_values = {1144, 64};
  s.results->best_values = {0, NAN};
  s.results->front = {SummaryPoint{"maxrregcount=64", {0, 64}}, SummaryPoint{"maxrregcount=32", {8, 32}}};
  s.results->prefer = 2;
  s.results->gpu_defaults = {SummaryGpuDefault{"0", 3, {10, 5}}, SummaryGpuDefault{"1", 3, {11, NAN}}};
  std::string j = s.to_json();
  EXPECT_NE(j.find("\"baseline_values\":[1144,64],\"best_values\":[0,null],\"front\":[{\"controls\":\"maxrregcount=64\",\"values\":[0,64]}"),
            std::string::npos) << j;
  auto back = RunSummary::from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->results);
  EXPECT_EQ(back->results->prefer, 2);
  ASSERT_EQ(back->results->front.size(), 2u);
  EXPECT_EQ(back->results->front[1].controls, "maxrregcount=32");
  EXPECT_EQ(back->results->front[1].values, (std::vector<double>{8, 32}));
  ASSERT_EQ(back->results->gpu_defaults.size(), 2u);
  EXPECT_EQ(back->results->gpu_defaults[1].gpu, "1");
  EXPECT_TRUE(std::isnan(back->results->gpu_defaults[1].values[1]));
  EXPECT_TRUE(std::isnan(back->results->best_values[1]));
  EXPECT_EQ(back->to_json(), j);
}

// A run that failed before its search ended records why, and no results.
TEST(Summary, a_failed_run_records_its_reason) {
  RunSummary s{"/runs/b", std::nullopt, RunOutcome::failed, "the discovery build failed: exit 2\nsome output"};
  EXPECT_EQ(s.to_json(), "{\"run_dir\":\"/runs/b\",\"outcome\":\"failed\",\"reason\":\"the discovery build failed: exit 2\\nsome output\"}");
  auto back = RunSummary::from_json(s.to_json());
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->results);
  EXPECT_EQ(back->outcome, RunOutcome::failed);
  EXPECT_EQ(back->reason, s.reason);
}

// A finished run writes no outcome (its summary is as it always was).
TEST(Summary, without_an_outcome_is_finished) {
  auto s = RunSummary::from_json("{\"run_dir\":\"/r\",\"objective\":\"m\",\"baseline\":2,\"best\":1,\"verdict\":\"v\"}");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->outcome, RunOutcome::finished);
  ASSERT_TRUE(s->results);
  EXPECT_EQ(s->results->best, 1);
  EXPECT_FALSE(s->results->p_value);
  EXPECT_FALSE(RunSummary::from_json("{\"outcome\":\"maybe\"}"));
  EXPECT_FALSE(RunSummary::from_json("[1]"));
}

TEST(Summary, file_absent_written_read_removed) {
  auto dir = ScratchDir::create("ciq-summary");
  ASSERT_TRUE(dir);
  auto none = read_summary(dir->path());
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(write_summary(dir->path(), finished_run()));
  auto text = read_file(summary_path(dir->path()));
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, finished_run().to_json() + "\n");
  auto read = read_summary(dir->path());
  ASSERT_TRUE(read && *read);
  EXPECT_EQ((*read)->results->controls, "maxrregcount=64");
  ASSERT_TRUE(remove_summary(dir->path()));
  ASSERT_TRUE(remove_summary(dir->path())); // already gone: nothing to do
  EXPECT_FALSE(path_exists(summary_path(dir->path())));
  ASSERT_TRUE(write_file_atomic(summary_path(dir->path()), "{not json"));
  EXPECT_FALSE(read_summary(dir->path()));
}

// run --separately: each kernel's own result, after the members every
// summary has (readers of those see nothing new); the change is computed.
TEST(Summary, per_kernel_results_round_trip) {
  RunSummary s = finished_run();
  SummaryKernel a{"_Z1av", 20, 15, 0.001, "_Z1av:maxnreg=64", "better than the default", true, 5};
  SummaryKernel b{"_Z1bv", 10, 10, std::nullopt, "default", "the default was the best found", false, 3};
  s.results->kernels = {a, b};
  std::string j = s.to_json();
  EXPECT_NE(j.find("\"prefer\":1,\"kernels\":[{\"kernel\":\"_Z1av\",\"baseline\":20,\"best\":15,\"change\":-0.25,\"p_value\":0.001,"
                   "\"controls\":\"_Z1av:maxnreg=64\",\"shipped\":true,\"parts\":5,\"verdict\":\"better than the default\"}"),
            std::string::npos) << j;
  auto back = RunSummary::from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->results->kernels.size(), 2u);
  EXPECT_EQ(back->results->kernels[0].controls, "_Z1av:maxnreg=64");
  EXPECT_TRUE(back->results->kernels[0].shipped);
  EXPECT_FALSE(back->results->kernels[1].p_value);
  EXPECT_EQ(back->results->kernels[1].parts, 3);
  EXPECT_EQ(back->to_json(), j);
  EXPECT_EQ(finished_run().to_json().find("kernels"), std::string::npos);
}

// A child run's outcome comes from its summary alone: summary.json, else
// the last summary line it printed on stdout (a run that failed before its
// directory was its own); never from what it wrote on stderr.
TEST(Summary, a_childs_outcome_from_its_file_else_its_stdout) {
  auto dir = ScratchDir::create("ciq-child");
  ASSERT_TRUE(dir);
  std::string printed = "a benchmark's line\n{not json\n" +
                        RunSummary{"", std::nullopt, RunOutcome::failed, "Unknown command line argument '--x'."}.to_json() + "\n";
  auto from_stdout = child_summary(dir->path(), printed);
  ASSERT_TRUE(from_stdout);
  EXPECT_EQ(from_stdout->outcome, RunOutcome::failed);
  EXPECT_EQ(from_stdout->reason, "Unknown command line argument '--x'.");
  EXPECT_FALSE(child_summary(dir->path(), "ciq-tuner: error: said only on stderr\n"));
  ASSERT_TRUE(write_summary(dir->path(), finished_run()));
  auto from_file = child_summary(dir->path(), printed);  // the file comes first
  ASSERT_TRUE(from_file);
  EXPECT_EQ(from_file->outcome, RunOutcome::finished);
  EXPECT_EQ(from_file->run_dir, "/runs/a");
}

// best.controls: written by the run, read back by campaigns as the set it holds.
TEST(BestControls, written_and_read_back) {
  auto dir = ScratchDir::create("ciq-best");
  ASSERT_TRUE(dir);
  spaces::ControlSet set;
  set.space = "ptxas-13";
  set.options["maxrregcount"] = "64";
  set.kernels["_Z1kv"]["maxnreg"] = "96";
  ASSERT_TRUE(write_best_controls(dir->path(), "maxrregcount=64;_Z1kv:maxnreg=96", set));
  auto text = read_file(best_controls_path(dir->path()));
  ASSERT_TRUE(text);
  EXPECT_EQ(text->rfind("# best candidate of " + dir->path() + "\n# maxrregcount=64;_Z1kv:maxnreg=96\n", 0), 0u);
  auto back = read_controls_file(best_controls_path(dir->path()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->options.at("maxrregcount"), "64");
  EXPECT_EQ(back->kernels.at("_Z1kv").at("maxnreg"), "96");
  // Parameters only: the comment lines, an empty set.
  ASSERT_TRUE(write_best_controls(dir->path(), "param:x=3", std::nullopt));
  auto none = read_controls_file(best_controls_path(dir->path()));
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(read_controls_file(dir->path() + "/absent.controls"));
}

// profile.json: written by profile_json(), its shares read back by a
// campaign; a file that is there but not a profile is an error naming it,
// not a campaign silently without shares.
TEST(ProfileJson, shares_read_back_and_a_broken_file_said) {
  auto dir = ScratchDir::create("ciq-profile");
  ASSERT_TRUE(dir);
  auto none = profiled_shares(dir->path());
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  std::string path = dir->path() + "/profile.json";
  ASSERT_TRUE(write_file_atomic(path, R"({"total_ns":100,"processes":[],"kernels":[{"kernel":"k1","share":0.75},{"kernel":"k2","share":0.25}]})"));
  auto shares = profiled_shares(dir->path());
  ASSERT_TRUE(shares) << shares.error().message;
  EXPECT_DOUBLE_EQ(shares->at("k1"), 0.75);
  EXPECT_DOUBLE_EQ(shares->at("k2"), 0.25);
  ASSERT_TRUE(write_file_atomic(path, "{\"kernels\":[{\"kernel\":"));
  auto broken = profiled_shares(dir->path());
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find(path), std::string::npos);
  ASSERT_TRUE(write_file_atomic(path, "[1,2]"));
  EXPECT_FALSE(profiled_shares(dir->path()));
}

// Numbers in ciq's files: 6 significant digits, whole ones without a
// fraction, non-finite ones null (a NaN share was written "nan" before).
TEST(ProfileJson, numbers_as_the_files_write_them) {
  EXPECT_EQ(json_line({{"a", json_number(1144.0)}, {"b", json_number(0.1234567)}, {"c", json_number(NAN)}}),
            R"({"a":1144,"b":0.123457,"c":null})");
}

// campaign.json: one owner writes and reads it; another format is refused,
// naming the file (the report used to read any JSON's "kernels").
TEST(CampaignFile, rows_round_trip_and_the_format_is_checked) {
  auto dir = ScratchDir::create("ciq-campaign");
  ASSERT_TRUE(dir);
  CampaignRow row;
  row.kernel = "k\xff";  // not UTF-8: written as U+FFFD
  row.state = "done";
  row.verdict = "better than the default";
  row.baseline = 1144;
  row.best = 0.1234567;
  row.shipped = true;
  row.tuned_by = "replay";
  std::string text = campaign_json({row});
  EXPECT_EQ(text.rfind("{\"format\":\"ciq-campaign/1\",\"kernels\":[{\"kernel\":\"k\xef\xbf\xbd\",", 0), 0u) << text;
  EXPECT_NE(text.find("\"baseline\":1144,\"best\":0.123457,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"share\":null,"), std::string::npos) << text;
  ASSERT_TRUE(write_file_atomic(dir->path() + "/campaign.json", text));
  auto back = read_campaign(dir->path());
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].state, "done");
  EXPECT_TRUE((*back)[0].shipped);
  EXPECT_EQ((*back)[0].baseline, 1144);
  EXPECT_TRUE(std::isnan((*back)[0].share));
  ASSERT_TRUE(write_file_atomic(dir->path() + "/campaign.json", R"({"format":"ciq-campaign/9","kernels":[]})"));
  auto other = read_campaign(dir->path());
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("campaign.json is not a campaign of format ciq-campaign/1"), std::string::npos);
}
