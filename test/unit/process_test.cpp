#include "utils/process.h"
#include "utils/files.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace ciq;

namespace {
/// Where a test server's stderr goes: a file of this process' own (a run
/// log is only ever the user's regular file: utils/safe_open.h).
std::string server_log() {
  static ciq::ScratchDir dir = ciq::ScratchDir::create("ciq-coprocess").value();
  return ciq::join_path(dir.path(), "server.log");
}
} // namespace

TEST(RunProcess, captured_output_keeps_its_head_and_tail) {
  RunOptions o;
  // 5 MB of 'a' between a first and a last line.
  o.argv = {"/bin/sh", "-c", "echo FIRST; head -c 5000000 /dev/zero | tr '\\0' a; echo; echo LAST"};
  o.capture_stdout = o.capture_stderr = true;
  o.capture_head_tail = 1 << 20;
  auto r = run_process(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded());
  EXPECT_EQ(r->out.substr(0, 6), "FIRST\n");
  EXPECT_EQ(r->out.substr(r->out.size() - 5), "LAST\n");
  EXPECT_NE(r->out.find("\n[... output dropped ...]\n"), std::string::npos);
  std::size_t total = 6 + 5000000 + 1 + 5;
  EXPECT_EQ(r->out_dropped, total - 2 * (std::size_t(1) << 20));
  EXPECT_EQ(r->out.size(), 2 * (std::size_t(1) << 20) + std::string("\n[... output dropped ...]\n").size());
  EXPECT_EQ(r->err_dropped, 0u);
}

TEST(RunProcess, a_daemon_holding_stdout_open_does_not_hold_the_caller) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 20 & echo built"};
  o.capture_stdout = o.capture_stderr = true;
  o.own_process_group = true;
  o.timeout_seconds = 5;
  o.exit_grace_seconds = 0.2;
  auto r = run_process(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded()) << r->describe(); // not "timed out" after 5 s
  EXPECT_TRUE(r->streams_left_open);
  EXPECT_EQ(r->out, "built\n");
  EXPECT_LT(r->seconds, 3);
}

TEST(RunProcess, without_a_grace_the_streams_are_read_to_the_end) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "(sleep 0.5; echo late) & echo early"};
  o.capture_stdout = true;
  auto r = run_process(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "early\nlate\n");
  EXPECT_FALSE(r->streams_left_open);
}

TEST(Coprocess, an_answer_keeps_its_head_and_tail_and_finds_the_marker) {
  RunOptions o;
  // One answer: a first line, 5 MB in lines of 99 'a', one unfinished 3 MB
  // line, then the status line; a second answer after it.
  o.argv = {"/bin/sh", "-c",
            "read x; echo FIRST; head -c 5000000 /dev/zero | tr '\\0' a | fold -w 99; echo; head -c 3000000 /dev/zero | tr '\\0' b; "
            "echo; echo LAST; echo 'ciq-status: 0'; read y; echo 'ciq-status: 7'"};
  o.capture_head_tail = 1 << 20;
  auto started = Coprocess::start(o, server_log());
  ASSERT_TRUE(started.ok());
  Coprocess& server = **started;
  ASSERT_TRUE(server.send("go\n").ok());
  std::string text;
  auto status = server.receive("ciq-status: ", 30, &text);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(*status, "0");
  EXPECT_EQ(text.substr(0, 6), "FIRST\n");
  EXPECT_EQ(text.substr(text.size() - 5), "LAST\n");
  EXPECT_NE(text.find(" [... output dropped ...] "), std::string::npos);
  EXPECT_LT(text.size(), std::size_t(3) << 20);
  EXPECT_GT(server.dropped(), 5000000u);
  ASSERT_TRUE(server.send("again\n").ok());
  status = server.receive("ciq-status: ", 30, &text);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status, "7");
  EXPECT_EQ(server.dropped(), 0u);
}

TEST(Coprocess, its_exit_is_noticed_while_a_child_it_started_holds_its_stdout) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "read x; sleep 30 & exit 3"};
  auto started = Coprocess::start(o, server_log());
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE((*started)->send("go\n").ok());
  auto begin = std::chrono::steady_clock::now();
  auto status = (*started)->receive("ciq-status: ", 0, nullptr); // no timeout: only its exit can end the wait
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "exited");
  EXPECT_EQ(status.error().message, "ended (exit status 3) before answering");
  EXPECT_LT(took, 5.0);
}

TEST(Coprocess, an_answer_written_just_before_its_exit_is_still_read) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "read x; sleep 30 & echo out; echo 'ciq-status: 1 0'; exit 0"};
  auto started = Coprocess::start(o, server_log());
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE((*started)->send("go\n").ok());
  std::string text;
  auto status = (*started)->receive("ciq-status: ", 20, &text);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(*status, "1 0");
  EXPECT_EQ(text, "out\n");
}

TEST(Coprocess, output_without_end_and_without_the_marker_still_times_out) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "read x; yes"};
  o.capture_head_tail = 1 << 16;
  auto started = Coprocess::start(o, server_log());
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE((*started)->send("go\n").ok());
  auto begin = std::chrono::steady_clock::now();
  auto status = (*started)->receive("ciq-status: ", 1, nullptr);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "timeout");
  EXPECT_LT(took, 10.0);
}

TEST(Coprocess, an_endless_marker_line_is_garbled) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "read x; printf 'ciq-status: '; yes | tr -d '\\n'"};
  auto started = Coprocess::start(o, server_log());
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE((*started)->send("go\n").ok());
  auto status = (*started)->receive("ciq-status: ", 20, nullptr);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "garbled");
}

TEST(Coprocess, output_after_an_answer_is_waiting_for_the_next) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "read x; printf 'ciq-status: 1 0\\nextra\\n'; read y"};
  auto started = Coprocess::start(o, server_log());
  ASSERT_TRUE(started.ok());
  Coprocess& server = **started;
  ASSERT_TRUE(server.send("go\n").ok());
  auto status = server.receive("ciq-status: ", 20, nullptr);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(server.waiting_output(), 6u);
  EXPECT_EQ(server.leftover(), "extra\n");
  EXPECT_TRUE(server.running());
}
