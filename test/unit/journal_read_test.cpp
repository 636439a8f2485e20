// rundir/journal.h's reader for readers (read_journal): the file as it is.
#include "tuner/rundir/journal.h"
#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

// A partial last line (a run writing, or killed mid-write) is ignored and
// left in place, unlike load_journal(), which cuts it off for a resume.
TEST(JournalRead, leaves_the_file_as_it_is) {
  auto dir = ScratchDir::create("ciq-journal-read");
  ASSERT_TRUE(dir);
  std::string path = join_path(dir->path(), "journal.jsonl");
  EvalRecord a, b;
  a.candidate = "default";
  b.number = 1;
  b.candidate = "maxrregcount=64";
  // b's line whole but for its newline: it parses, yet is not a record yet.
  std::string text = a.to_json() + "\nnot json\n" + b.to_json();
  ASSERT_TRUE(write_file_atomic(path, text));
  auto read = read_journal(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].candidate, "default");
  auto after = read_file(path);
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, text);
  EXPECT_FALSE(read_journal(join_path(dir->path(), "absent.jsonl")));
}
