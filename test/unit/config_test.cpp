// Tests of utils/config.h: the CIQ_* environment.
#include "utils/config.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq;

// One boolean parser for every CIQ_* flag; what an unknown value means is
// the caller's (CIQ_DISABLE: off is the safe side; CIQ_ALLOW_UNSAFE: no).
TEST(Config, boolean_flags) {
  for (const char* yes : {"1", "true", "TRUE", "Yes", "on"}) {
    ::setenv("CIQ_ALLOW_UNSAFE", yes, 1);
    ::setenv("CIQ_DISABLE", yes, 1);
    EXPECT_TRUE(unsafe_allowed()) << yes;
    EXPECT_TRUE(ciq_disabled()) << yes;
  }
  for (const char* no : {"", "0", "false", "No", "OFF"}) {
    ::setenv("CIQ_ALLOW_UNSAFE", no, 1);
    ::setenv("CIQ_DISABLE", no, 1);
    EXPECT_FALSE(unsafe_allowed()) << no;
    EXPECT_FALSE(ciq_disabled()) << no;
  }
  ::setenv("CIQ_ALLOW_UNSAFE", "maybe", 1);
  ::setenv("CIQ_DISABLE", "maybe", 1);
  EXPECT_FALSE(unsafe_allowed());
  EXPECT_TRUE(ciq_disabled());
  ::unsetenv("CIQ_ALLOW_UNSAFE");
  ::unsetenv("CIQ_DISABLE");
  EXPECT_FALSE(unsafe_allowed());
  EXPECT_FALSE(ciq_disabled());
}

// env_name() finds a variable's row by the enum's position: a row out of
// the enum's order would give another variable's name (CIQ_NVCC_ARGS and
// CIQ_STAMPS_OUT were once swapped so).
TEST(Config, the_table_is_in_the_enum_s_order) {
  const auto& table = ciq::environment_variables();
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(std::size_t(table[i].id), i) << table[i].name;
    EXPECT_STREQ(ciq::env_name(table[i].id), table[i].name);
  }
  EXPECT_STREQ(ciq::env_name(ciq::Env::nvcc_args), "CIQ_NVCC_ARGS");
  EXPECT_STREQ(ciq::env_name(ciq::Env::stamps_out), "CIQ_STAMPS_OUT");
}
