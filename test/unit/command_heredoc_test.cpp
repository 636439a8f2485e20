// fill_shell_placeholders() and here-documents: a here-document's body takes
// no quoting, so no placeholder is filled from a `<<` on; a here-string
// (`<<<`) is a word like any other.
#include "tuner/measure/command.h"

#include <gtest/gtest.h>

using namespace ciq::tuner;

TEST(Command, no_placeholder_after_a_here_document) {
  std::map<std::string, std::string> v{{"param:x", "$(touch PWNED)"}, {"workdir", "/w"}};
  for (const char* t : {"cat > f <<EOF\n{param:x}\nEOF\necho v=1", "cat <<-'EOF' > f\n{param:x}\nEOF",
                        "x=$(cat <<EOF\n{workdir}\nEOF\n)", "cat <<EOF\nEOF\nbench {param:x}"}) {
    auto filled = fill_shell_placeholders(t, v);
    ASSERT_FALSE(filled.ok()) << t;
    EXPECT_NE(filled.error().message.find("here-document"), std::string::npos) << filled.error().message;
  }
  auto before = fill_shell_placeholders("bench {param:x} <<EOF\nliteral\nEOF", v);
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(*before, "bench '$(touch PWNED)' <<EOF\nliteral\nEOF");
  auto here_string = fill_shell_placeholders("cat <<< {param:x}", v);
  ASSERT_TRUE(here_string.ok()) << here_string.error().message;
  EXPECT_EQ(*here_string, "cat <<< '$(touch PWNED)'");
  auto quoted = fill_shell_placeholders("echo '<<' {workdir}", v);
  ASSERT_TRUE(quoted.ok()) << quoted.error().message;
  EXPECT_EQ(*quoted, "echo '<<' '/w'");
}
