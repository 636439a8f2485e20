// Tests of cache/counters.h: the wrappers' counters file.
#include "cache/counters.h"
#include "test/unit/temp_cache.h"
#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::cache;

TEST(Counters, bump_read_reset) {
  TempCache t;
  Tally first(Tool::ptxas), second(Tool::cicc);
  first.add(Counter::hit);
  first.add(Counter::calls);
  first.passed(Pass::no_entry);
  second.add(Counter::calls);
  bump_counters(t.path(), first);
  bump_counters(t.path(), first);
  bump_counters(t.path(), second);
  auto c = read_counters(t.path());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->at("calls"), 2u);
  EXPECT_EQ(c->at("hit"), 2u);
  EXPECT_EQ(c->at("passthrough.no-entry"), 2u);
  EXPECT_EQ(c->at("unit.calls"), 1u);
  ASSERT_TRUE(reset_counters(t.path()).ok());
  EXPECT_TRUE(read_counters(t.path())->empty());
}

TEST(Counters, tuning_candidates_are_not_cache_applications) {
  Tally ptxas(Tool::ptxas), cicc(Tool::cicc);
  ptxas.add(Counter::tuning_applied);
  ptxas.add(Counter::applied);
  cicc.add(Counter::tuning_applied);
  EXPECT_EQ(ptxas.names(), (std::vector<std::string>{"tuning.applied", "applied"}));
  EXPECT_EQ(cicc.names(), (std::vector<std::string>{"unit.tuning.applied"}));
}

TEST(Counters, damaged_file_counts_from_zero) {
  TempCache t;
  ASSERT_TRUE(write_file_atomic(join_path(t.path(), "stats"), "garbage\n\x01\x02 = x\ncalls = 5\n").ok());
  Tally calls(Tool::ptxas);
  calls.add(Counter::calls);
  bump_counters(t.path(), calls);
  EXPECT_EQ(read_counters(t.path())->at("calls"), 6u);
}
