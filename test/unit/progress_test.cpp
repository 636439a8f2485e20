// run/progress.h: values as people read them.
#include "tuner/run/progress.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

TEST(Progress, percent_change) {
  EXPECT_EQ(percent(200, 150), " (-25.0%)");
  EXPECT_EQ(percent(-4, -2), " (+50.0%)");
  EXPECT_EQ(percent(0, 1), "");
  EXPECT_EQ(percent(NAN, 1), "");
  EXPECT_EQ(percent(1, INFINITY), "");
}

TEST(Progress, shown_values_are_un_negated) {
  TuneOptions o;
  o.setup.objectives.resize(2);
  o.setup.objectives[1].maximize = true;
  EvalRecord r;
  r.evaluation.valid = true;
  r.evaluation.objectives = {3, -7};
  EXPECT_EQ(shown(o, r, 0), 3);
  EXPECT_EQ(shown(o, r, 1), 7);
  EXPECT_TRUE(std::isnan(shown(o, r, 2)));
  r.evaluation.valid = false;
  EXPECT_TRUE(std::isnan(shown(o, r, 0)));
}
