// Names that processes sharing a directory never share, and a rename that
// never replaces (utils/safe_open.h: new_process_tag, rename_new): what
// keeps two processes of one pid (PID namespaces) from replacing each
// other's traces and capture indexes.
#include "utils/files.h"
#include "utils/safe_open.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace ciq;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/ciq-process-tag-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

} // namespace

TEST(ProcessTag, is_the_pid_and_a_random_part_drawn_anew_each_call) {
  std::string tag = new_process_tag();
  EXPECT_TRUE(std::regex_match(tag, std::regex(std::to_string(::getpid()) + "-[0-9a-f]{16}"))) << tag;
  std::set<std::string> drawn;
  for (int i = 0; i < 100; ++i) drawn.insert(new_process_tag());
  EXPECT_EQ(drawn.size(), 100u);  // one pid, a hundred names: the random part tells them apart
}

TEST(RenameNew, gives_the_name_when_it_is_free) {
  TempDir dir;
  ASSERT_TRUE(write_file_atomic(dir.path + "/tmp", "new"));
  auto renamed = rename_new(dir.path + "/tmp", dir.path + "/index.jsonl");
  ASSERT_TRUE(renamed.ok()) << renamed.error().message;
  EXPECT_EQ(*read_file(dir.path + "/index.jsonl"), "new");
  EXPECT_FALSE(path_exists(dir.path + "/tmp"));
}

TEST(RenameNew, never_replaces_a_file_a_link_or_a_directory) {
  TempDir dir;
  ASSERT_TRUE(write_file_atomic(dir.path + "/taken", "the first process'"));
  ASSERT_EQ(::symlink("/nonexistent", (dir.path + "/dangling").c_str()), 0);
  ASSERT_EQ(::mkdir((dir.path + "/directory").c_str(), 0755), 0);
  ASSERT_TRUE(write_file_atomic(dir.path + "/tmp", "the second process'"));
  for (const char* name : {"/taken", "/dangling", "/directory"}) {
    auto renamed = rename_new(dir.path + "/tmp", dir.path + name);
    ASSERT_FALSE(renamed.ok()) << name;
    EXPECT_EQ(renamed.error().code, "exists") << name;
  }
  EXPECT_EQ(*read_file(dir.path + "/taken"), "the first process'");
  EXPECT_EQ(*read_file(dir.path + "/tmp"), "the second process'");  // left to the caller
}
