// run/kernel_parts.h: each kernel's best part from its own times
// over every run that carried it, and their composition.
#include "tuner/run/kernel_parts.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace ciq::tuner;

namespace {

// Two kernels, a maxnreg each; an option the parts do not own.
SearchSpace two_kernels() {
  SearchSpace s;
  s.dimensions.push_back(Dimension{DimensionKind::option, "opt-level", "", {"1", "2"}, true, 0.5, 0});
  s.dimensions.push_back(Dimension{DimensionKind::directive, "maxnreg", "a", {"32", "64"}, true, 0.5, 0});
  s.dimensions.push_back(Dimension{DimensionKind::directive, "maxnreg", "b", {"32", "64"}, true, 0.5, 0});
  return s;
}

EvalRecord run(const SearchSpace& s, std::vector<std::optional<int>> genes, double a_ms, double b_ms, bool valid = true) {
  EvalRecord r;
  r.candidate = s.canonical(Candidate{std::move(genes)});
  r.evaluation.valid = valid;
  r.status = valid ? EvalStatus::ok : EvalStatus::invalid;
  r.kernel_samples = {{"a", {a_ms}}, {"b", {b_ms}}};
  return r;
}

} // namespace

TEST(KernelParts, each_kernel_owns_its_directives) {
  SearchSpace s = two_kernels();
  auto parts = kernel_parts(s, {"a", "b", "c"});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].dims, (std::vector<std::size_t>{1}));
  EXPECT_EQ(parts[1].dims, (std::vector<std::size_t>{2}));
  EXPECT_TRUE(parts[2].dims.empty());
}

// a is fastest at maxnreg=32, b at 64: each is found from its own time,
// whichever setting the other kernel had in those runs; an invalid run
// counts for neither.
TEST(KernelParts, each_best_is_the_lowest_own_time_whatever_the_others_had) {
  SearchSpace s = two_kernels();
  std::vector<EvalRecord> records{
      run(s, {std::nullopt, std::nullopt, std::nullopt}, 10, 10),
      run(s, {std::nullopt, 0, std::nullopt}, 6, 10.5),   // a=32 with b default
      run(s, {std::nullopt, 1, 1}, 9, 7),                  // a=64, b=64
      run(s, {std::nullopt, 0, 0}, 6, 12),                 // a=32, b=32
      run(s, {std::nullopt, 1, 0}, 1, 1, /*valid=*/false), // invalid: not counted
  };
  auto parts = kernel_parts(s, {"a", "b"});
  find_best_parts(s, records, parts);
  EXPECT_EQ(part_text(s, parts[0], parts[0].best), "a:maxnreg=32");
  EXPECT_EQ(parts[0].best_ms, 6);
  EXPECT_EQ(parts[0].default_ms, 10);
  EXPECT_EQ(parts[0].parts, 3);
  EXPECT_EQ(part_text(s, parts[1], parts[1].best), "b:maxnreg=64");
  EXPECT_EQ(parts[1].best_ms, 7);
  // The default's time of b pools the runs where b was at the default: 10 and 10.5.
  EXPECT_EQ(parts[1].default_ms, 10.25);
  EXPECT_EQ(s.canonical(compose_parts(s, parts)), "a:maxnreg=32;b:maxnreg=64");
  std::vector<bool> keep{false, true};
  EXPECT_EQ(s.canonical(compose_parts(s, parts, &keep)), "b:maxnreg=64");
}

// A tie goes to the part that sets fewer knobs: the default.
TEST(KernelParts, a_tie_keeps_the_default) {
  SearchSpace s = two_kernels();
  std::vector<EvalRecord> records{run(s, {std::nullopt, std::nullopt, std::nullopt}, 10, 10),
                                  run(s, {std::nullopt, 0, 0}, 10, 10)};
  auto parts = kernel_parts(s, {"a", "b"});
  find_best_parts(s, records, parts);
  EXPECT_EQ(part_text(s, parts[0], parts[0].best), "default");
  EXPECT_EQ(s.canonical(compose_parts(s, parts)), "default");
}
