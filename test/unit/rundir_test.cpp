// Tests of tuner/rundir: the journal's whole lines and the run directory's lock.
#include "tuner/rundir/journal.h"
#include "tuner/rundir/lock.h"
#include "utils/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace ciq;
using namespace ciq::tuner;

TEST(RunDir, a_partial_last_line_is_cut_off_before_the_journal_is_read) {
  ScratchDir dir = *ScratchDir::create("journal");
  std::string path = join_path(dir.path(), "journal.jsonl");
  EvalRecord r;
  r.candidate = "default";
  r.status = EvalStatus::ok;
  ASSERT_TRUE(append_whole_line(path, r.to_json()).ok());
  r.number = 1;
  r.candidate = "x=1";
  std::string partial = r.to_json().substr(0, 30);
  ASSERT_TRUE(append_file(path, partial).ok()); // a run stopped mid-write
  auto records = load_journal(path);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  // The next record starts a line of its own, not glued to the torn one.
  ASSERT_TRUE(append_whole_line(path, r.to_json()).ok());
  records = load_journal(path);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].candidate, "x=1");
  EXPECT_EQ(*drop_partial_last_line(path), 0u);
}

TEST(RunDir, a_second_lock_is_refused_naming_the_owner) {
  ScratchDir dir = *ScratchDir::create("lock");
  ASSERT_TRUE(lock_run_directory(dir.path()).ok());
  // flock locks belong to the open file description: a second open (as a
  // second tuner would make) is refused even within this process.
  auto second = lock_run_directory(dir.path());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, "locked");
  EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid()) + " on host "), std::string::npos)
      << second.error().message;
  release_run_directory();
  auto emptied = read_file(join_path(dir.path(), "lock"));
  ASSERT_TRUE(emptied.ok());
  EXPECT_EQ(*emptied, "");
  EXPECT_TRUE(lock_run_directory(dir.path()).ok());
  release_run_directory();
}
