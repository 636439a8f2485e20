#include "spaces/control_set.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::spaces;

TEST(ControlSet, assignments_split_module_and_kernel_knobs) {
  ControlSet s;
  ASSERT_TRUE(add_assignment(s, "maxrregcount=64").ok());
  ASSERT_TRUE(add_assignment(s, "_Z1kv:maxnreg = 96").ok());
  EXPECT_EQ(s.options.at("maxrregcount"), "64");
  EXPECT_EQ(s.kernels.at("_Z1kv").at("maxnreg"), "96");
  EXPECT_FALSE(add_assignment(s, "novalue").ok());
  EXPECT_FALSE(add_assignment(s, "k=").ok());
  EXPECT_FALSE(add_assignment(s, "k=two words").ok());
  EXPECT_FALSE(add_assignment(s, ":maxnreg=1").ok());
  EXPECT_FALSE(add_assignment(s, "bad name=1").ok());
}

TEST(ControlSet, text_round_trip_is_canonical) {
  auto parsed = parse_control_set("space = ptxas-13\nb:maxnreg = 1\nzeta = 2\nalpha = 3\nacf = sha256:" +
                                      std::string(64, 'a') + "\n",
                                  "t");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  std::string text = format_control_set(*parsed);
  EXPECT_EQ(text, "format = ciq-controls/1\nspace = ptxas-13\nalpha = 3\nzeta = 2\nb:maxnreg = 1\nacf = sha256:" +
                      std::string(64, 'a') + "\n");
  auto again = parse_control_set(text, "t");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *parsed);
}

TEST(ControlSet, rejects_bad_format_acf_and_sections) {
  EXPECT_FALSE(parse_control_set("format = ciq-controls/9\n", "t").ok());
  EXPECT_FALSE(parse_control_set("acf = sha256:xyz\n", "t").ok());
  EXPECT_FALSE(parse_control_set("[other]\na = 1\n", "t").ok());
}

TEST(ControlSet, for_kernel_keeps_options_and_that_kernel) {
  ControlSet s;
  (void)add_assignment(s, "maxrregcount=64");
  (void)add_assignment(s, "a:maxnreg=32");
  (void)add_assignment(s, "b:maxnreg=40");
  ControlSet a = s.for_kernel("a");
  EXPECT_EQ(a.options.size(), 1u);
  EXPECT_EQ(a.kernels.size(), 1u);
  EXPECT_TRUE(a.kernels.count("a"));
  EXPECT_TRUE(s.for_kernel("c").kernels.empty());
}
