// Tests of utils/log.h.
#include "utils/files.h"
#include "utils/log.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

using namespace ciq;

TEST(Log, messages_are_printable_one_line_each) {
  auto dir = ScratchDir::create("ciq-log");
  ASSERT_TRUE(dir);
  std::string file = join_path(dir->path(), "log");
  auto previous = spdlog::default_logger();
  ::setenv("CIQ_LOG_FILE", file.c_str(), 1);
  setup_logging("ciq-test", "off");
  spdlog::info("kernel {} ends", "_Z4evil\x1b]0;pwned\x07\nforged line");
  spdlog::default_logger()->flush();
  spdlog::set_default_logger(previous);
  ::unsetenv("CIQ_LOG_FILE");
  auto text = read_file(file);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("info: kernel _Z4evil\\x1b]0;pwned\\x07\\nforged line ends\n"), std::string::npos) << *text;
  EXPECT_EQ(text->find('\x1b'), std::string::npos);
}
