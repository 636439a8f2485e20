// utils/safe_open.h: what another local user could plant (links, FIFOs,
// devices, hard links, open directories) is refused, never followed, waited
// on or read without bound. The cross-user halves (another owner) are in
// lit/cross-user.test, which runs a second user.
#include "utils/files.h"
#include "utils/safe_open.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace ciq;

namespace {

struct SafeOpen : ::testing::Test {
  ScratchDir dir = ScratchDir::create("ciq-safe-open").value();
  std::string at(const std::string& name) const { return join_path(dir.path(), name); }
  void write(const std::string& name, const std::string& text) { ASSERT_TRUE(write_file_atomic(at(name), text)); }
};

} // namespace

TEST_F(SafeOpen, create_new_file_refuses_anything_already_there) {
  auto fresh = create_new_file(at("new"), O_WRONLY);
  ASSERT_TRUE(fresh) << fresh.error().message;
  ::close(*fresh);
  auto again = create_new_file(at("new"), O_WRONLY);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, "exists");
  ASSERT_EQ(::symlink(at("nowhere").c_str(), at("dangling").c_str()), 0);
  auto through = create_new_file(at("dangling"), O_WRONLY);
  ASSERT_FALSE(through);
  EXPECT_EQ(through.error().code, "exists");
  EXPECT_FALSE(path_exists(at("nowhere"))); // the link's target was not created
}

TEST_F(SafeOpen, open_own_file_never_writes_through_a_link) {
  write("victim", "precious\n");
  ASSERT_EQ(::symlink(at("victim").c_str(), at("lock").c_str()), 0);
  auto opened = open_own_file(at("lock"), O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, "unsafe");
  EXPECT_NE(opened.error().message.find("symbolic link"), std::string::npos);
  EXPECT_EQ(read_file(at("victim")).value(), "precious\n");
}

TEST_F(SafeOpen, open_own_file_refuses_a_second_hard_link_before_truncating) {
  write("victim", "precious\n");
  ASSERT_EQ(::link(at("victim").c_str(), at("journal").c_str()), 0);
  auto opened = open_own_file(at("journal"), O_WRONLY | O_TRUNC);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, "unsafe");
  EXPECT_EQ(read_file(at("victim")).value(), "precious\n");
}

TEST_F(SafeOpen, open_own_file_refuses_a_fifo_without_waiting) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto opened = open_own_file(at("fifo"), O_RDWR | O_APPEND | O_CREAT);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, "not-regular");
  auto write_only = open_own_file(at("fifo"), O_WRONLY | O_APPEND);  // no reader: ENXIO, not a wait
  EXPECT_FALSE(write_only);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(SafeOpen, open_own_file_creates_and_truncates_its_own_file) {
  write("journal", "old\n");
  auto opened = open_own_file(at("journal"), O_WRONLY | O_TRUNC);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(::fcntl(*opened, F_GETFL) & O_NONBLOCK, 0);
  ::close(*opened);
  EXPECT_EQ(read_file(at("journal")).value(), "");
  auto created = open_own_file(at("results.csv"), O_WRONLY | O_APPEND | O_CREAT);
  ASSERT_TRUE(created) << created.error().message;
  ::close(*created);
  EXPECT_TRUE(path_exists(at("results.csv")));
}

TEST_F(SafeOpen, open_own_fifo_takes_only_a_private_fifo) {
  ASSERT_EQ(::mkfifo(at("ctl").c_str(), 0600), 0);
  auto ok = open_own_fifo(at("ctl"), O_RDWR);
  ASSERT_TRUE(ok) << ok.error().message;
  ::close(*ok);

  ASSERT_EQ(::mkfifo(at("open-ctl").c_str(), 0600), 0);
  ASSERT_EQ(::chmod(at("open-ctl").c_str(), 0622), 0);  // others may write commands into it
  auto shared = open_own_fifo(at("open-ctl"), O_RDWR);
  ASSERT_FALSE(shared);
  EXPECT_EQ(shared.error().code, "unsafe");

  for (const char* not_fifo : {"/dev/zero", "/dev/null"}) {
    auto device = open_own_fifo(not_fifo, O_RDWR);
    ASSERT_FALSE(device) << not_fifo;
    EXPECT_EQ(device.error().code, "unsafe");
  }
  write("plain", "");
  EXPECT_FALSE(open_own_fifo(at("plain"), O_RDWR));
  ASSERT_EQ(::symlink(at("ctl").c_str(), at("link-ctl").c_str()), 0);
  auto linked = open_own_fifo(at("link-ctl"), O_RDWR);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("symbolic link"), std::string::npos);
}

TEST_F(SafeOpen, check_own_directory_refuses_one_others_may_write) {
  EXPECT_TRUE(check_own_directory(dir.path()));
  std::string open_dir = at("open");
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  auto refused = check_own_directory(open_dir);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "unsafe");
  EXPECT_NE(refused.error().message.find("chmod go-w"), std::string::npos);
  write("file", "");
  EXPECT_FALSE(check_own_directory(at("file")));
  EXPECT_FALSE(make_own_directory(join_path(open_dir, ".")));
}

TEST_F(SafeOpen, check_own_directory_refuses_one_others_could_swap) {
  std::string open_parent = at("shared"), sticky_parent = at("tmp");
  ASSERT_EQ(::mkdir(open_parent.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_parent.c_str(), 0777), 0);  // others may rename what is in it
  ASSERT_EQ(::mkdir(sticky_parent.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(sticky_parent.c_str(), 01777), 0);  // like /tmp: they may not
  auto below_open = make_own_directory(join_path(open_parent, "run1"));
  ASSERT_FALSE(below_open);
  EXPECT_EQ(below_open.error().code, "unsafe");
  EXPECT_NE(below_open.error().message.find("above it, is writable by other users (mode 0777) and not sticky"),
            std::string::npos) << below_open.error().message;
  auto below_sticky = make_own_directory(join_path(sticky_parent, "run1"));
  EXPECT_TRUE(below_sticky) << below_sticky.error().message;
  ASSERT_EQ(::symlink(join_path(open_parent, "run1").c_str(), at("via-link").c_str()), 0);
  EXPECT_FALSE(check_own_directory(at("via-link")));  // the real place is what counts
}

// A team's project directory (setgid, group-writable) is refused for what it
// is: the directory itself, writable by its group, not "other users" and
// not a directory "above it".
TEST_F(SafeOpen, check_secure_location_names_the_group_and_the_directory_itself) {
  std::string team = at("team");
  ASSERT_EQ(::mkdir(team.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(team.c_str(), 02775), 0);
  auto refused = check_secure_location(team);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("'" + team + "' is writable by its group (mode 2775) and not sticky, so they could change what is in it"),
            std::string::npos) << refused.error().message;
  std::string inner = join_path(team, "run");
  ASSERT_EQ(::mkdir(inner.c_str(), 0700), 0);
  auto above = check_secure_location(inner);
  ASSERT_FALSE(above);
  EXPECT_NE(above.error().message.find("'" + team + "', above it, is writable by its group (mode 2775)"), std::string::npos)
      << above.error().message;
}

TEST_F(SafeOpen, make_own_directory_makes_every_level) {
  std::string deep = at("a/b/c");
  ASSERT_TRUE(make_own_directory(deep));
  EXPECT_TRUE(is_directory(deep));
  EXPECT_TRUE(make_own_directory(deep));  // already there and ours
}

TEST_F(SafeOpen, read_file_refuses_streams_and_bounds_what_it_reads) {
  ASSERT_EQ(::mkfifo(at("journal.jsonl").c_str(), 0600), 0);
  auto fifo = read_file(at("journal.jsonl"));
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code, "not-regular");
  auto zero = read_file("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, "not-regular");
  write("big", std::string(4096, 'x'));
  auto big = read_file(at("big"), 4095);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, "too-large");
  EXPECT_EQ(read_file(at("big"), 4096).value().size(), 4096u);
}

TEST_F(SafeOpen, read_bounded_stops_a_source_without_a_size) {
  int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto read = read_bounded(fd, "/dev/zero", 1 << 20);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, "too-large");
}

TEST_F(SafeOpen, log_destination_never_waits_for_a_fifo_reader) {
  ASSERT_EQ(::mkfifo(at("log").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(open_log_destination(at("log")));  // nobody reads it
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  int reader = ::open(at("log").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  auto opened = open_log_destination(at("log"));
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_NE(::fcntl(*opened, F_GETFL) & O_NONBLOCK, 0);  // a full pipe drops lines, never stalls
  ::close(*opened);
  ::close(reader);

  write("victim", "precious\n");
  ASSERT_EQ(::link(at("victim").c_str(), at("linked.log").c_str()), 0);
  EXPECT_FALSE(open_log_destination(at("linked.log")));
  auto fresh = open_log_destination(at("fresh.log"));
  ASSERT_TRUE(fresh) << fresh.error().message;
  ::close(*fresh);
}

TEST_F(SafeOpen, log_destination_refuses_another_users_fifo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give the FIFO to another user (lit/cross-user.test's kind)";
  ASSERT_EQ(::mkfifo(at("their.fifo").c_str(), 0666), 0);
  ASSERT_EQ(::chown(at("their.fifo").c_str(), 65534, 65534), 0);
  int reader = ::open(at("their.fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // they read it
  ASSERT_GE(reader, 0);
  auto opened = open_log_destination(at("their.fifo"));
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, "unsafe");
  ::close(reader);
}

TEST_F(SafeOpen, nothing_is_made_where_others_could_swap_it) {
  std::string open_parent = at("shared");
  ASSERT_EQ(::mkdir(open_parent.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_parent.c_str(), 0777), 0);
  EXPECT_FALSE(make_own_directory(join_path(open_parent, "run/deeper")));
  EXPECT_FALSE(path_exists(join_path(open_parent, "run")));  // refused before anything was made
  auto log = open_log_destination(join_path(open_parent, "ciq.log"));
  ASSERT_FALSE(log);
  EXPECT_EQ(log.error().code, "unsafe");
  EXPECT_FALSE(path_exists(join_path(open_parent, "ciq.log")));
  auto scratch = ScratchDir::create("ciq-x", open_parent);
  ASSERT_FALSE(scratch);
  EXPECT_EQ(scratch.error().code, "unsafe");
  auto stderr_log = open_log_destination("/dev/stderr");  // a stream: not a file in a directory
  ASSERT_TRUE(stderr_log) << stderr_log.error().message;
  ::close(*stderr_log);
}

TEST_F(SafeOpen, open_input_checks_what_it_opened_and_reads_through_it) {
  write("image", "12345678");
  auto in = open_input(at("image"), InputRules{false, 8, 1024});
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_EQ(in->st.st_size, 8);
  // The name now means something else: the descriptor still reads what was checked.
  ASSERT_EQ(::unlink(at("image").c_str()), 0);
  ASSERT_EQ(::mkfifo(at("image").c_str(), 0600), 0);
  auto text = read_bounded(in->fd, at("image"), 1024);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "12345678");
}

TEST_F(SafeOpen, open_input_refuses_a_fifo_a_link_and_a_wrong_size_without_waiting) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  write("real", "abc");
  ASSERT_EQ(::symlink(at("real").c_str(), at("link").c_str()), 0);
  auto start = std::chrono::steady_clock::now();
  auto fifo = open_input(at("fifo"));
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code, "not-regular");
  EXPECT_NE(fifo.error().message.find("(a FIFO)"), std::string::npos) << fifo.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  auto link = open_input(at("link"));
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error().code, "not-regular");
  EXPECT_NE(link.error().message.find("symbolic link"), std::string::npos) << link.error().message;
  auto followed = open_input(at("link"), InputRules{true, std::nullopt, 1024});  // a path the user named
  ASSERT_TRUE(followed) << followed.error().message;
  ::close(followed->fd);
  auto size = open_input(at("real"), InputRules{false, 4, 1024});
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error().code, "wrong-size");
  auto bound = open_input(at("real"), InputRules{false, std::nullopt, 2});
  ASSERT_FALSE(bound);
  EXPECT_EQ(bound.error().code, "too-large");
  auto absent = open_input(at("none"));
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code, "absent");
}
