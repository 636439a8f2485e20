// The journal's status field (tuner/rundir/journal.h): an enum in the
// tuner, the same words in the file as before, and a line whose status the
// tuner does not know is no record.
#include "tuner/rundir/journal.h"
#include "utils/files.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ciq;
using namespace ciq::tuner;

TEST(Journal, every_status_is_written_as_its_word_and_read_back) {
  for (auto [status, word] : {std::pair{EvalStatus::ok, "\"status\":\"ok\""},
                              std::pair{EvalStatus::invalid, "\"status\":\"invalid\""},
                              std::pair{EvalStatus::same_code, "\"status\":\"same-code\""}}) {
    EvalRecord r;
    r.candidate = "x=1";
    r.status = status;
    std::string line = r.to_json();
    EXPECT_NE(line.find(word), std::string::npos) << line;
    auto back = EvalRecord::from_json(line);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->status, status);
  }
}

TEST(Journal, status_names_and_parse_are_inverse) {
  EXPECT_EQ(status_name(EvalStatus::same_code), "same-code");
  EXPECT_EQ(parse_status("same-code"), EvalStatus::same_code);
  EXPECT_EQ(parse_status("ok"), EvalStatus::ok);
  EXPECT_EQ(parse_status("invalid"), EvalStatus::invalid);
  EXPECT_EQ(parse_status("same_code"), std::nullopt);
  EXPECT_EQ(parse_status(""), std::nullopt);
}

// A line whose status is none of the three (a journal of another version,
// an edited file) or that has none is not read as a record: reading it as
// "ok" would let a result nobody measured into the search, so its
// evaluation runs again, as for any line that does not parse.
TEST(Journal, a_line_with_an_unknown_status_is_skipped_and_its_evaluation_runs_again) {
  auto unknown = EvalRecord::from_json(R"({"n":0,"candidate":"x=1","status":"timeout","valid":false})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'timeout'"), std::string::npos) << unknown.error().message;
  EXPECT_FALSE(EvalRecord::from_json(R"({"n":0,"candidate":"x=1","valid":true})").ok());

  ScratchDir dir = *ScratchDir::create("journal-status");
  std::string path = join_path(dir.path(), "journal.jsonl");
  EvalRecord good;
  good.candidate = "default";
  good.status = EvalStatus::ok;
  ASSERT_TRUE(append_whole_line(path, good.to_json()).ok());
  ASSERT_TRUE(append_whole_line(path, R"({"n":1,"candidate":"x=1","status":"timeout","valid":false})").ok());
  auto records = load_journal(path);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].candidate, "default");
}

// The line's form, member by member, is the one the journal always had
// (tests, tools and the report read it): whole numbers as integers, NaN as
// null, the finish time to the millisecond, GPU states as objects.
TEST(Journal, a_line_keeps_its_members_order_and_number_forms) {
  EvalRecord r;
  r.number = 3;
  r.generation = 1;
  r.candidate = "x=1";
  r.status = EvalStatus::ok;
  r.evaluation.valid = true;
  r.evaluation.objectives = {5, -2.5};
  r.samples = {{5, NAN}};
  r.build_seconds = 0.25;
  r.bench_seconds = 1;
  r.finished = 1700000000.1234;
  r.workdir = "w";
  r.run_gpus = {"0"};
  GpuState gpu;
  gpu.read = true;
  gpu.energy_j = 10;
  gpu.seconds = 0.5;
  gpu.sm_mhz_min = gpu.sm_mhz_max = 1980;
  gpu.power_w = 350;
  gpu.reasons = 0x4 | 0x40;
  gpu.samples = 3;
  r.gpu_states = {gpu};
  EXPECT_EQ(r.to_json(), R"({"n":3,"generation":1,"candidate":"x=1","status":"ok","valid":true,"objectives":[5,-2.5],)"
                         R"("samples":[[5,null]],"reason":"","detail":"","digest":"","build_s":0.25,"steps_run":0,)"
                         R"("steps_reused":0,"bench_s":1,"gpu_wait_s":0,"finished":1700000000.123,"workdir":"w",)"
                         R"("run_gpus":["0"],"gpu":[{"energy_j":10,"seconds":0.5,"sm_mhz_min":1980,"sm_mhz_max":1980,"mem_mhz":0,)"
                         R"("temperature_c":0,"power_w":350,"power_limit_w":0,"clock_events":"sw-power-cap,hw-thermal-slowdown",)"
                         R"("samples":3}]})");
}

// Numbers read back as written, to at least the 9 digits %.9g kept.
TEST(Journal, numbers_read_back_unchanged) {
  EvalRecord r;
  r.candidate = "x=1";
  r.status = EvalStatus::ok;
  r.evaluation.objectives = {0.123456789123, -1e-7, 3e20};
  r.samples = {{0.1, 2.000000001}};
  auto back = EvalRecord::from_json(r.to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->evaluation.objectives, r.evaluation.objectives);
  EXPECT_EQ(back->samples, r.samples);
}

// run --separately: each kernel's own time per run, after the other
// members, only when there are some (other runs' lines are unchanged).
TEST(Journal, kernel_samples_are_written_only_when_present_and_read_back) {
  EvalRecord r;
  r.candidate = "a:maxnreg=64";
  r.status = EvalStatus::ok;
  EXPECT_EQ(r.to_json().find("kernel_samples"), std::string::npos);
  r.kernel_samples = {{"_Z1av", {12.5, 12}}, {"_Z1bv", {3}}};
  std::string line = r.to_json();
  EXPECT_NE(line.find(R"("workdir":"","kernel_samples":{"_Z1av":[12.5,12],"_Z1bv":[3]}})"), std::string::npos) << line;
  auto back = EvalRecord::from_json(line);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->kernel_samples, r.kernel_samples);
}

// The GPU's state round-trips through a journal line, numbers to the 6
// digits written; a counter not supported stays -1 (null in the line).
TEST(Journal, gpu_states_read_back) {
  EvalRecord r;
  r.candidate = "x=1";
  r.status = EvalStatus::ok;
  GpuState a;
  a.read = true;
  a.energy_j = 12.5;
  a.seconds = 0.25;
  a.sm_mhz_min = 1410;
  a.sm_mhz_max = 1980;
  a.mem_mhz = 2619;
  a.temperature_c = 61;
  a.power_w = 512.125;
  a.power_limit_w = 700;
  a.reasons = 0x1 | 0x80 | 0x100;
  a.samples = 7;
  GpuState b = a;
  b.energy_j = -1;
  r.gpu_states = {a, b};
  auto back = EvalRecord::from_json(r.to_json());
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->gpu_states.size(), 2u);
  EXPECT_EQ(back->gpu_states[0], a);
  EXPECT_EQ(back->gpu_states[1], b);
  EXPECT_NE(r.to_json().find(R"("gpu":[{"energy_j":12.5,)"), std::string::npos);
  EXPECT_NE(r.to_json().find(R"({"energy_j":null,)"), std::string::npos);
}

// JSON has no NaN or infinity: a non-finite value in the GPU's state (a
// division by a zero interval, a broken counter) is written as a string and
// read back as the same value; the line stays readable, never <discarded>.
TEST(Journal, non_finite_gpu_values_are_written_as_strings_and_read_back) {
  EvalRecord r;
  r.candidate = "x=1";
  r.status = EvalStatus::ok;
  GpuState s;
  s.read = true;
  s.energy_j = INFINITY;
  s.seconds = NAN;
  s.power_w = -INFINITY;
  s.power_limit_w = 700;
  r.gpu_states = {s};
  std::string line = r.to_json();
  EXPECT_EQ(line.find("discarded"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("energy_j":"inf","seconds":"nan",)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("power_w":"-inf","power_limit_w":700,)"), std::string::npos) << line;
  auto back = EvalRecord::from_json(line);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->gpu_states.size(), 1u);
  const GpuState& g = back->gpu_states[0];
  EXPECT_TRUE(g.read);
  EXPECT_TRUE(std::isinf(g.energy_j) && g.energy_j > 0);
  EXPECT_TRUE(std::isnan(g.seconds));
  EXPECT_TRUE(std::isinf(g.power_w) && g.power_w < 0);
  EXPECT_EQ(g.power_limit_w, 700);
}
