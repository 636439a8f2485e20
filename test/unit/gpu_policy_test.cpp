// Tests of cache/gpu_policy.h: CIQ_GPU_POLICY read from the environment,
// and check_entry() refusing under `same` only.
#include "cache/entries.h"
#include "cache/gpu_policy.h"
#include "spaces/space.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::cache;

namespace {

struct Environment {
  Environment(const char* policy, const char* model) {
    policy ? ::setenv("CIQ_GPU_POLICY", policy, 1) : ::unsetenv("CIQ_GPU_POLICY");
    model ? ::setenv("CIQ_GPU_MODEL", model, 1) : ::unsetenv("CIQ_GPU_MODEL");
  }
  ~Environment() {
    ::unsetenv("CIQ_GPU_POLICY");
    ::unsetenv("CIQ_GPU_MODEL");
  }
};

Record verified_on(const std::string& gpu) {
  Record r;
  r.kind = cache::RecordKind::module;
  r.target = "sm_90a";
  r.ptxas = "13.0.88";
  r.controls.space = "ptxas-13";
  if (!gpu.empty()) r.provenance = {{"gpu", "none"}, {"gpu_model", gpu}};
  return r;
}

const spaces::Space& test_space() {
  static const spaces::Space space =
      spaces::parse_space("[space]\nname = ptxas-13\ntool = ptxas\nversions = 13.0..13.99\n"
                          "[option.maxrregcount]\nrender = --maxrregcount={}\nrange = 16..255\ndefault = none\nsafety = exact\n",
                          "test.space")
          .value();
  return space;
}

} // namespace

TEST(GpuPolicy, read_from_the_environment) {
  std::string why;
  {
    Environment e(nullptr, "NVIDIA H100 80GB HBM3");
    auto rule = gpu_rule_from_environment(why);
    EXPECT_EQ(rule.policy, GpuPolicy::any);
    EXPECT_EQ(why, "");
  }
  {
    Environment e("same", " NVIDIA H100 80GB HBM3 ");
    auto rule = gpu_rule_from_environment(why);
    EXPECT_EQ(rule.policy, GpuPolicy::same);
    EXPECT_EQ(rule.model, "NVIDIA H100 80GB HBM3");
  }
  {
    Environment e("warn", "H100");
    EXPECT_EQ(gpu_rule_from_environment(why).policy, GpuPolicy::warn);
  }
}

// The wrappers fail open: a setting they cannot follow is `any`, with why.
TEST(GpuPolicy, what_cannot_be_followed_is_any) {
  std::string why;
  {
    Environment e("same", nullptr);
    EXPECT_EQ(gpu_rule_from_environment(why).policy, GpuPolicy::any);
    EXPECT_NE(why.find("needs CIQ_GPU_MODEL"), std::string::npos) << why;
  }
  {
    Environment e("strict", "H100");
    EXPECT_EQ(gpu_rule_from_environment(why).policy, GpuPolicy::any);
    EXPECT_NE(why.find("'strict' is not any, same or warn"), std::string::npos) << why;
  }
}

TEST(GpuPolicy, verified_elsewhere_needs_both_models) {
  GpuRule rule{GpuPolicy::same, "NVIDIA H100 80GB HBM3"};
  EXPECT_TRUE(verified_elsewhere(rule, verified_on("NVIDIA H200")));
  EXPECT_FALSE(verified_elsewhere(rule, verified_on("h100 80gb hbm3")));
  EXPECT_FALSE(verified_elsewhere(rule, verified_on(""))); // a hand-made entry
  EXPECT_FALSE(verified_elsewhere(GpuRule{GpuPolicy::same, ""}, verified_on("NVIDIA H200")));
}

TEST(GpuPolicy, check_entry_refuses_under_same_only) {
  EntryRules rules;
  rules.running_space = []() -> Result<const spaces::Space*> { return &test_space(); };
  Hash128 key{};
  std::string text = format_record(verified_on("NVIDIA H200"));
  EXPECT_TRUE(check_entry(text, key, rules).ok());
  rules.gpu = {GpuPolicy::warn, "NVIDIA H100 80GB HBM3"};
  EXPECT_TRUE(check_entry(text, key, rules).ok());
  rules.gpu = {GpuPolicy::same, "NVIDIA H100 80GB HBM3"};
  auto refused = check_entry(text, key, rules);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "other-gpu");
  EXPECT_NE(refused.error().message.find("verified on NVIDIA H200, not on NVIDIA H100 80GB HBM3"), std::string::npos);
  rules.gpu = {GpuPolicy::same, "NVIDIA H200"};
  EXPECT_TRUE(check_entry(text, key, rules).ok());
}
