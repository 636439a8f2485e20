// Tests of tuner/rundir: the journal's whole lines and the run directory's lock.
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/lock.h"
#include "utils/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
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

// The one reader behind --resume, retune and reverify: what it hands back,
// and what it refuses, by code (callers word their messages by it).
TEST(RunDir, a_saved_start_is_read_only_from_what_is_yours_alone) {
  ScratchDir dir = *ScratchDir::create("saved-start");
  std::string run = join_path(dir.path(), "run"), project = join_path(dir.path(), "project");
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(project.c_str(), 0700), 0);
  auto code = [&] {
    auto s = load_saved_start(run);
    return s ? std::string("ok") : s.error().code;
  };
  EXPECT_EQ(code(), "missing"); // no command-line
  ASSERT_TRUE(save_command_line(run, {"run", "--build", "make\nmake install"}).ok());
  auto saved = load_saved_start(run);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_EQ(saved->arguments, (std::vector<std::string>{"run", "--build", "make\nmake install"}));
  EXPECT_EQ(saved->working_directory, ""); // none saved: the caller decides
  std::string where = join_path(run, "working-directory");
  ASSERT_TRUE(write_file_atomic(where, project + "\n").ok());
  saved = load_saved_start(run);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_EQ(saved->working_directory, project);
  ASSERT_EQ(::chmod(project.c_str(), 0777), 0);
  EXPECT_EQ(code(), "unsafe"); // others may put their build script there
  ASSERT_EQ(::chmod(project.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(where.c_str(), 0660), 0);
  EXPECT_EQ(code(), "unsafe");
  ASSERT_EQ(::chmod(where.c_str(), 0600), 0);
  ASSERT_TRUE(write_file_atomic(where, "relative/dir\n").ok());
  EXPECT_EQ(code(), "invalid");
  ASSERT_TRUE(write_file_atomic(where, std::string(2u << 20, '/')).ok());
  EXPECT_EQ(code(), "invalid"); // larger than one ciq writes
  ASSERT_TRUE(write_file_atomic(where, project + "/gone\n").ok());
  EXPECT_EQ(code(), "gone");
  ASSERT_TRUE(write_file_atomic(where, "/dev/zero\n").ok());
  EXPECT_EQ(code(), "invalid"); // not a directory: not "gone"
  ASSERT_TRUE(write_file_atomic(where, project + "\n/etc\n").ok());
  EXPECT_EQ(code(), "invalid"); // two lines
  ASSERT_TRUE(write_file_atomic(where, project + "\n").ok());
  ASSERT_TRUE(save_command_line(run, {"run", "--budget", std::string("6\0junk", 6)}).ok());
  EXPECT_EQ(code(), "invalid"); // a NUL no process could get
  ASSERT_TRUE(save_command_line(run, {"run", "--build", "make\nmake install"}).ok());
  ASSERT_TRUE(write_file_atomic(where, project + "\n").ok());
  ASSERT_EQ(::chmod(join_path(run, "command-line").c_str(), 0602), 0);
  auto refused = load_saved_start(run);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "unsafe");
  EXPECT_NE(refused.error().message.find("writable by other users (mode 0602)"), std::string::npos) << refused.error().message;
  ASSERT_EQ(::chmod(join_path(run, "command-line").c_str(), 0600), 0);
  ASSERT_EQ(::chmod(run.c_str(), 0777), 0);
  EXPECT_EQ(code(), "unsafe"); // the run directory itself
  ASSERT_EQ(::chmod(run.c_str(), 0700), 0);
  EXPECT_EQ(code(), "ok");
}
