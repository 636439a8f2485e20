// "Was the candidate compiled as asked" (tuner/measure/honoured.h).
#include "tuner/measure/honoured.h"

#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

TEST(Honoured, a_warning_kind_drops_its_numbers_and_reports_on_the_code_have_none) {
  EXPECT_EQ(warning_kind("ptxas warning : adjusting per thread register count of 16 to lower bound of 24"),
            "ptxas warning : adjusting per thread register count of # to lower bound of #");
  EXPECT_EQ(warning_kind("v1.2.30"), "v#.#.#");
  EXPECT_EQ(warning_kind("ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes"), "");
  EXPECT_EQ(warning_kind("ptxas warning : Double is being used"), "");
}

TEST(Honoured, only_a_warning_whose_kind_the_default_build_did_not_give_is_added) {
  std::set<std::string> baseline = {"ptxas warning : adjusting per thread register count of 8 to lower bound of 24"};
  EXPECT_EQ(first_added_warning({"ptxas warning : adjusting per thread register count of 16 to lower bound of 24"}, baseline), "");
  EXPECT_EQ(first_added_warning({"ptxas warning : Registers are spilled to local memory, 4 bytes",
                                 "ptxas warning : option -O9 ignored", "ptxas warning : option -O8 ignored"},
                                baseline),
            "ptxas warning : option -O9 ignored");
}

TEST(Honoured, a_trace_without_applied_controls_says_why) {
  spaces::ControlSet controls;
  controls.options["opt-level"] = "2";
  EXPECT_EQ(trace_problem({}, "/nowhere", controls, false), ""); // parameters only
  EXPECT_NE(trace_problem({}, "/nowhere", controls, true).find("no kernels were compiled through ciq-ptxas"), std::string::npos);
  TracedModule refused;
  refused.controls_error = "unknown knob";
  EXPECT_EQ(trace_problem({refused}, "/nowhere", controls, true), "controls not applied: unknown knob");
  TracedModule unmatched;
  EXPECT_EQ(trace_problem({unmatched}, "/nowhere", controls, true),
            "no compiled kernel matched --kernels, so the controls were not applied");
  TracedModule applied;
  applied.controls_applied = true;
  EXPECT_EQ(trace_problem({unmatched, applied}, "/nowhere", controls, true), "");
}

TEST(Honoured, the_check_names_the_added_warning_after_its_prefix) {
  spaces::ControlSet controls;
  controls.options["opt-level"] = "2";
  TracedModule m;
  m.controls_applied = true;
  m.warnings = {"ptxas warning : option dropped"};
  ScratchDir dir = *ScratchDir::create("honoured");
  HonouredCheck check(true, {});
  EXPECT_EQ(check.why_not({m}, dir.path(), controls), std::string(k_unhonoured) + "ptxas warning : option dropped");
  HonouredCheck same_as_default(true, {"ptxas warning : option dropped"});
  EXPECT_EQ(same_as_default.why_not({m}, dir.path(), controls), "");
  HonouredCheck parameters_only(false, {});
  EXPECT_EQ(parameters_only.why_not({}, dir.path(), controls), "");
}
