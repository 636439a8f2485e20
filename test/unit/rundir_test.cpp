// Tests of tuner/rundir: the journal's whole lines, the run directory's lock,
// profile.json's owner.
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/profile_file.h"
#include "utils/files.h"

#include <cmath>
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

TEST(ProfileFile, written_and_read_back_with_its_format) {
  ScratchDir dir = *ScratchDir::create("profile");
  ProfileFile p;
  p.total_ns = 1000;
  p.processes.push_back({42, "/bin/app", "ok", ""});
  ProfileKernel k;
  k.kernel = "_Z4heavyPf";
  k.share = 0.75;
  k.cumulative = 0.75;
  k.launches = 3;
  k.total_ns = 750;
  k.median_ns = 250;
  k.registers = 96;
  k.origins.push_back({"ab12", "/tmp/t/ptx/ab12.ptx", "sm_90a"});
  k.code_xxh128 = {"00ff"};
  p.kernels.push_back(k);
  ProfileKernel light;
  light.kernel = "light";  // no registers known, no share: written null
  p.kernels.push_back(light);
  std::string text = profile_json(p);
  EXPECT_EQ(text.rfind("{\"format\":\"ciq-profile/1\",\"total_ns\":1000,", 0), 0u) << text;
  std::string path = join_path(dir.path(), "profile.json");
  ASSERT_TRUE(write_file_atomic(path, text + "\n").ok());
  auto back = read_profile_file(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->total_ns, 1000u);
  ASSERT_EQ(back->processes.size(), 1u);
  EXPECT_EQ(back->processes[0].pid, 42);
  ASSERT_EQ(back->kernels.size(), 2u);
  EXPECT_EQ(back->kernels[0].kernel, "_Z4heavyPf");
  EXPECT_DOUBLE_EQ(back->kernels[0].share, 0.75);
  EXPECT_EQ(back->kernels[0].registers, std::optional<std::uint64_t>(96));
  ASSERT_EQ(back->kernels[0].origins.size(), 1u);
  EXPECT_EQ(back->kernels[0].origins[0].target, "sm_90a");
  EXPECT_TRUE(std::isnan(back->kernels[1].share));
  EXPECT_FALSE(back->kernels[1].registers);
  EXPECT_EQ(profile_json(*back), text);  // what is read is what was written
}

TEST(ProfileFile, an_older_profile_is_read_and_another_format_refused) {
  ScratchDir dir = *ScratchDir::create("profile");
  std::string path = join_path(dir.path(), "profile.json");
  // Before the format member: a campaign resumed over such a folder.
  ASSERT_TRUE(write_file_atomic(path, R"({"total_ns":5,"processes":[],"kernels":[{"kernel":"k","share":1}]})").ok());
  auto old = read_profile_file(path);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->kernels.at(0).kernel, "k");
  ASSERT_TRUE(write_file_atomic(path, R"({"format":"ciq-profile/2","kernels":[]})").ok());
  auto newer = read_profile_file(path);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().message.find("ciq-profile/1"), std::string::npos) << newer.error().message;
  ASSERT_TRUE(write_file_atomic(path, R"({"format":"ciq-profile/1","kernels":[{"share":1}]})").ok());
  EXPECT_FALSE(read_profile_file(path).ok());  // a kernel without its name
  ASSERT_TRUE(write_file_atomic(path, R"({"format":"ciq-profile/1"})").ok());
  EXPECT_FALSE(read_profile_file(path).ok());  // no kernels array
}

// What is saved or passed on has --publish's password masked, and only
// --publish's: a program's own words after "--" stay as they were given.
// Read with the parser's grammar (here a stand-in): a --publish that is
// another option's value is that value.
TEST(CommandLine, publish_passwords_masked_the_program_s_words_kept) {
  set_option_grammar([](std::string_view, std::string_view name) {
    return OptionFacts{true, name == "publish" || name == "budget" || name == "build", group_none};
  });
  std::vector<std::string> given{"run", "--publish", "redis://:pw@h:6379", "--publish=redis://:pw2@h", "--budget", "4",
                                 "--", "./app", "--publish", "redis://:mine@h"};
  auto saved = without_publish_password(given);
  EXPECT_EQ(without_publish_password({"--build", "--publish", "redis://:pw@h"}),
            (std::vector<std::string>{"--build", "--publish", "redis://:pw@h"}));
  set_option_grammar(nullptr);
  ASSERT_EQ(saved.size(), given.size());
  EXPECT_EQ(saved[2].find("pw@"), std::string::npos) << saved[2];
  EXPECT_NE(saved[2].find("***"), std::string::npos) << saved[2];
  EXPECT_EQ(saved[3].find("pw2"), std::string::npos) << saved[3];
  EXPECT_EQ(saved[5], "4");
  EXPECT_EQ(std::vector<std::string>(saved.begin() + 6, saved.end()),
            (std::vector<std::string>{"--", "./app", "--publish", "redis://:mine@h"}));
}
