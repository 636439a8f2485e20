// report/chart.h: round ticks and escaped text.
#include "tuner/report/chart.h"

#include <gtest/gtest.h>

using namespace ciq::tuner::chart;

TEST(Chart, ticks_at_round_values) {
  EXPECT_EQ(nice_ticks(0, 10, 5, false), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(13, 61, 5, false), (std::vector<double>{20, 30, 40, 50, 60}));
  EXPECT_EQ(nice_ticks(1, 4, 6, true), (std::vector<double>{1, 2, 3, 4})); // evaluations: whole numbers
  EXPECT_EQ(nice_ticks(3, 3, 5, false), (std::vector<double>{3}));         // an empty range: one tick
}

TEST(Chart, text_escaped_for_svg) {
  EXPECT_EQ(esc("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
  EXPECT_EQ(tick(1234.5678), "1235");
  EXPECT_EQ(num(2.25), "2.2");
}

TEST(Chart, marks_inside_the_plotting_area) {
  Chart c("id", "title", 0, 10, 0, 1, "x", "y");
  EXPECT_LT(c.x(0), c.x(10));
  EXPECT_GT(c.y(0), c.y(1)); // SVG's y grows downwards
  c.point(5, 0.5, "#000", "tip <5>");
  std::string svg = c.svg();
  EXPECT_NE(svg.find("<title>tip &lt;5&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find("id=\"id\""), std::string::npos);
}
