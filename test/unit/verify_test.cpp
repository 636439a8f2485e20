// run/verify.h: the parts of a verdict that need no GPU.
#include "tuner/run/verify.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

GpuState state(unsigned sm_mhz, std::uint64_t reasons = 0) {
  GpuState s;
  s.read = true;
  s.sm_mhz_min = sm_mhz;
  s.reasons = reasons;
  return s;
}

} // namespace

TEST(Verify, alike_conditions_say_nothing) {
  std::vector<GpuState> states[2] = {{state(1980), state(1975)}, {state(1980), state(1970)}};
  EXPECT_EQ(compare_conditions(states), "");
  std::vector<GpuState> unread[2] = {{}, {state(1980)}};
  EXPECT_EQ(compare_conditions(unread), "");
}

TEST(Verify, different_clocks_are_named) {
  std::vector<GpuState> states[2] = {{state(1980), state(1980)}, {state(1500), state(1500)}};
  EXPECT_EQ(compare_conditions(states), "lowest SM clock (median of runs): default 1980 MHz, winner 1500 MHz");
}

TEST(Verify, method_names_as_provenance_writes_them) {
  EXPECT_EQ(method_name(VerifyMethod::welch), "welch");
  EXPECT_EQ(method_name(VerifyMethod::deterministic), "deterministic");
  EXPECT_EQ(method_name(VerifyMethod::none), "");
}
