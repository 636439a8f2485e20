// What a candidate compiled to (tuner/measure/code_identity.h).
#include "tuner/measure/code_identity.h"

#include <gtest/gtest.h>

using namespace ciq::tuner;

namespace {

TracedModule module(std::string digest, std::vector<std::pair<std::string, std::string>> kernels = {}) {
  TracedModule m;
  m.code_digest = std::move(digest);
  for (auto& [name, code] : kernels) {
    m.kernels.push_back({});
    m.kernels.back().name = name;
    m.kernels.back().code = code;
  }
  return m;
}

} // namespace

TEST(CodeIdentity, every_module_counts_for_a_metric_and_parameters_follow) {
  std::vector<Objective> metric = {*metric_objective("t=([0-9]+)")};
  std::string a(20, 'a'), b(20, 'b');
  EXPECT_EQ(code_digest({module(a), module(b)}, metric, {{"tile", "32"}}), a.substr(0, 16) + b.substr(0, 16) + ";tile=32");
  EXPECT_EQ(code_digest({module(a), module("")}, metric, {}), ""); // one module's code unknown
  EXPECT_EQ(code_digest({}, metric, {{"tile", "32"}}), "");        // nothing compiled
}

TEST(CodeIdentity, with_kernel_time_only_the_timed_kernels_count) {
  std::vector<Objective> timed = {*builtin_objective("kernel-time:*gemm*")};
  std::string one = code_digest({module("m1", {{"sgemm", "1111"}, {"other", "2222"}})}, timed, {});
  std::string two = code_digest({module("m2", {{"sgemm", "1111"}, {"other", "3333"}})}, timed, {});
  EXPECT_EQ(one, "sgemm=1111,;");
  EXPECT_EQ(one, two); // the untimed kernel changed: the same code as far as the objective sees
  EXPECT_NE(one, code_digest({module("m1", {{"sgemm", "4444"}})}, timed, {}));
  // The timed kernels come from elsewhere (a JIT, a library): unknown.
  EXPECT_EQ(code_digest({module("m1", {{"other", "2222"}})}, timed, {}), "");
  // With a metric beside it, every module counts again.
  timed.push_back(*metric_objective("t=([0-9]+)"));
  EXPECT_EQ(code_digest({module("m1", {{"sgemm", "1111"}})}, timed, {}), "m1");
}

TEST(CodeIdentity, a_reuse_takes_the_result_and_names_the_evaluation) {
  EvalRecord same;
  same.number = 4;
  same.status = EvalStatus::ok;
  same.evaluation.valid = true;
  same.evaluation.objectives = {1.5};
  same.samples = {{1, 2}};
  EvalRecord r;
  r.number = 9;
  reuse_same_code(r, same);
  EXPECT_EQ(r.status, EvalStatus::same_code);
  EXPECT_TRUE(r.evaluation.valid);
  EXPECT_EQ(r.evaluation.objectives, same.evaluation.objectives);
  EXPECT_EQ(r.samples, same.samples);
  EXPECT_EQ(r.evaluation.reason, "same code as evaluation 4");
  EXPECT_EQ(r.number, 9);
}
