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
