#include "utils/process.h"

#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <utility>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ciq {

std::string self_executable() {
  return real_path("/proc/self/exe").value_or("");
}

std::optional<std::string> find_program(const std::string& name, const std::string& exclude,
                                        const char* search_path) {
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name)) return std::nullopt;
    if (!exclude.empty() && real_path(name) == exclude) return std::nullopt;
    return name;
  }
  const char* path = search_path ? search_path : std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest(path);
  while (true) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = join_path(dir, name);
    if (is_executable_file(candidate) && (exclude.empty() || real_path(candidate) != exclude))
      return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

static std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  out.reserve(argv.size() + 1);
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

Error exec_replace(const std::string& path, const std::vector<std::string>& argv) {
  auto args = c_argv(argv);
  ::execv(path.c_str(), args.data());
  return make_error("exec", "cannot run '" + path + "': " + std::strerror(errno));
}

namespace {
// Process groups of running children, for the interrupt handler: a fixed
// table of atomics, because a signal handler may not take locks.
constexpr int k_child_slots = 256;
std::atomic<pid_t> g_child_groups[k_child_slots];
const char* g_interrupt_message = nullptr;
std::atomic<bool> g_forward_interrupt{false};
std::atomic<bool> g_interrupt_arrived{false};
// A command the handler runs before killing the children (run_on_interrupt):
// built once, outside the handler, and never freed.
std::atomic<char* const*> g_interrupt_argv{nullptr};

void track_child(pid_t pid) {
  for (auto& slot : g_child_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void untrack_child(pid_t pid) {
  for (auto& slot : g_child_groups) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

extern "C" void on_interrupt(int sig) {
  g_interrupt_arrived.store(true); // before any child is signalled: whoever sees one end sees this
  if (char* const* argv = g_interrupt_argv.load()) {
    // fork and execve are async-signal-safe; the command (scancel) is short.
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execve(argv[0], argv, environ);
      ::_exit(127);
    }
    int status;
    while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (g_forward_interrupt) {
    // The children stop their own work (their own handlers run); wait for
    // them, but not for ever: SIGALRM's default action ends this process.
    ::alarm(60);
    for (auto& slot : g_child_groups)
      if (pid_t pid = slot.load(); pid > 0) ::kill(-pid, sig);
    for (auto& slot : g_child_groups)
      if (pid_t pid = slot.load(); pid > 0) {
        int status;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
  }
  for (auto& slot : g_child_groups)
    if (pid_t pid = slot.load(); pid > 0) ::kill(-pid, SIGKILL);
  if (g_interrupt_message) {
    ssize_t ignored = ::write(2, g_interrupt_message, std::strlen(g_interrupt_message));
    (void)ignored;
  }
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}
} // namespace

void kill_children_on_interrupt(const char* message, bool forward) {
  g_interrupt_message = message;
  g_forward_interrupt = forward;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

bool interrupt_arrived() { return g_interrupt_arrived.load(); }

void kill_tracked_children() {
  for (auto& slot : g_child_groups)
    if (pid_t pid = slot.load(); pid > 0) ::kill(-pid, SIGKILL);
}

void run_on_interrupt(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    g_interrupt_argv = nullptr;
    return;
  }
  // Kept for the life of the process: the handler may run at any moment.
  auto* storage = new std::vector<std::string>(argv);
  auto* pointers = new std::vector<char*>(c_argv(*storage));
  g_interrupt_argv = pointers->data();
}

std::string RunResult::describe() const {
  if (timed_out) return "timed out";
  if (signal) return std::string("killed by signal ") + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exit status " + std::to_string(exit_code);
}

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
};

std::vector<std::string> merged_environment(const RunOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : options.set_env)
      if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=')
        replaced = true;
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : options.set_env) env.push_back(name + "=" + value);
  return env;
}

} // namespace

namespace {

/// posix_spawn of options.argv with default signal dispositions and an empty
/// mask, in its own process group when asked (and then tracked for the
/// interrupt handler). `stdin_fd`/`stdout_fd`/`stderr_fd` >= 0 become the
/// child's 0/1/2.
Result<pid_t> spawn_child(const RunOptions& options, int stdin_fd, int stdout_fd, int stderr_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  else if (options.stdin_null) posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  if (stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
  if (options.cwd_fd >= 0) posix_spawn_file_actions_addfchdir_np(&actions, options.cwd_fd);
  else if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  if (options.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);

  auto argv = c_argv(options.argv);
  std::vector<std::string> env_storage;
  std::vector<char*> envp;
  char** env = environ;
  if (!options.set_env.empty()) {
    env_storage = merged_environment(options);
    envp = c_argv(env_storage);
    env = envp.data();
  }

  pid_t pid;
  int rc = options.argv[0].find('/') != std::string::npos
               ? posix_spawn(&pid, options.argv[0].c_str(), &actions, &attr, argv.data(), env)
               : posix_spawnp(&pid, options.argv[0].c_str(), &actions, &attr, argv.data(), env);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return make_error("exec", "cannot run '" + options.argv[0] + "': " + std::strerror(rc));
  if (options.own_process_group) track_child(pid);
  return pid;
}

void set_status(RunResult& result, int status) {
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  else result.exit_code = WEXITSTATUS(status);
}

using Deadline = std::chrono::time_point<std::chrono::steady_clock, std::chrono::duration<double>>;

// One captured stream: all of it, or its first and last `limit` bytes.
class CaptureSink {
public:
  CaptureSink(std::string& head, std::size_t& dropped, std::size_t limit) : head_(head), dropped_(dropped), limit_(limit) {}
  void append(const char* data, std::size_t size) {
    if (limit_ == 0 || head_.size() + size <= limit_) {
      head_.append(data, size);
      return;
    }
    std::size_t room = limit_ - head_.size();
    head_.append(data, room);
    tail_.append(data + room, size - room);
    if (tail_.size() > 2 * limit_) { // amortised: trim to `limit` once it doubles
      dropped_ += tail_.size() - limit_;
      tail_.erase(0, tail_.size() - limit_);
    }
  }
  /// Puts the kept tail after the head (with a marker when something was dropped).
  void finish() {
    if (tail_.size() > limit_) {
      dropped_ += tail_.size() - limit_;
      tail_.erase(0, tail_.size() - limit_);
    }
    if (dropped_) head_ += "\n[... output dropped ...]\n";
    head_ += tail_;
    tail_.clear();
  }

private:
  std::string& head_;
  std::size_t& dropped_;
  std::size_t limit_;
  std::string tail_;
};

// Reads `out_fd` and `err_fd` (-1: none) into the result until both close;
// false when `deadline` passed first. With `grace` >= 0 it also watches the
// child: once `pid` has exited (its status in `*status`, `*reaped` set) it
// reads for at most `grace` seconds more.
bool drain_pipes(int out_fd, int err_fd, RunResult& result, const Deadline* deadline, std::size_t limit, pid_t pid,
                 double grace, int* status, bool* reaped) {
  CaptureSink sinks[2] = {{result.out, result.out_dropped, limit}, {result.err, result.err_dropped, limit}};
  int fds[2] = {out_fd, err_fd};
  std::optional<Deadline> stop_reading;
  bool in_time = true;
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd pfd[2];
    int n = 0, which[2];
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) {
        pfd[n] = {fds[i], POLLIN, 0};
        which[n++] = i;
      }
    auto now = std::chrono::steady_clock::now();
    auto ms_until = [&](Deadline t) {
      return std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count());
    };
    long long wait_ms = -1;
    if (deadline) wait_ms = ms_until(*deadline);
    if (grace >= 0) {
      long long slice = stop_reading ? ms_until(*stop_reading) : 20; // look at the child now and then
      wait_ms = wait_ms < 0 ? slice : std::min(wait_ms, slice);
    }
    int ready = ::poll(pfd, nfds_t(n), int(wait_ms));
    if (ready < 0 && errno == EINTR) continue;
    for (int k = 0; ready > 0 && k < n; ++k) {
      if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[65536];
      ssize_t got = ::read(pfd[k].fd, buffer, sizeof buffer);
      if (got > 0) {
        sinks[which[k]].append(buffer, std::size_t(got));
      } else if (got == 0 || errno != EINTR) {
        fds[which[k]] = -1;
      }
    }
    now = std::chrono::steady_clock::now();
    if (deadline && now >= *deadline) {
      in_time = false;
      break;
    }
    if (grace >= 0 && !*reaped && ::waitpid(pid, status, WNOHANG) == pid) {
      *reaped = true;
      stop_reading = now + std::chrono::duration<double>(grace);
    }
    if (stop_reading && now >= *stop_reading && (fds[0] >= 0 || fds[1] >= 0)) {
      result.streams_left_open = true;
      break;
    }
  }
  for (auto& sink : sinks) sink.finish();
  return in_time;
}

} // namespace

Result<RunResult> run_process(const RunOptions& options) {
  if (options.argv.empty()) return make_error("exec", "no program to run");
  Pipe out, err;
  if ((options.capture_stdout && ::pipe2(out.fd, O_CLOEXEC) != 0) ||
      (options.capture_stderr && ::pipe2(err.fd, O_CLOEXEC) != 0))
    return make_error("exec", std::string("cannot create a pipe: ") + std::strerror(errno));

  auto start = std::chrono::steady_clock::now();
  int stderr_fd = err.fd[1];
  Pipe file; // fd[0]: the stderr file, when there is one
  if (!options.capture_stderr && !options.stderr_file.empty()) {
    auto opened = open_own_file(options.stderr_file, O_WRONLY | O_CREAT | O_APPEND);
    if (!opened) return make_error("exec", "cannot write the command's output: " + opened.error().message);
    file.fd[0] = *opened;
    stderr_fd = file.fd[0];
  }
  auto spawned = spawn_child(options, -1, out.fd[1], stderr_fd);
  if (!spawned) return spawned.error();
  pid_t pid = *spawned;
  RunResult result;
  for (Pipe* p : {&out, &err})
    if (p->fd[1] >= 0) {
      ::close(p->fd[1]);
      p->fd[1] = -1;
    }

  Deadline deadline = start + std::chrono::duration<double>(options.timeout_seconds);
  auto kill_child = [&] {
    if (options.own_process_group) ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    result.timed_out = true;
  };

  // Drain the pipes until both close; the child may exit before its
  // grandchildren close them, so a timeout also applies here (and, when
  // asked, a grace after the child's own exit).
  int status = 0;
  bool reaped = false;
  if (!drain_pipes(out.fd[0], err.fd[0], result, options.timeout_seconds > 0 ? &deadline : nullptr, options.capture_head_tail,
                   pid, options.exit_grace_seconds, &status, &reaped) && !reaped)
    kill_child();

  while (!reaped) {
    int options_flags = (options.timeout_seconds > 0 && !result.timed_out) ? WNOHANG : 0;
    pid_t w = ::waitpid(pid, &status, options_flags);
    if (w == pid) break;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      untrack_child(pid);
      return make_error("exec", std::string("waitpid failed: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_child();
      continue;
    }
    ::usleep(2000);
  }
  if (options.own_process_group) untrack_child(pid);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  set_status(result, status);
  if (result.timed_out) result.signal = 0;
  return result;
}

Result<std::unique_ptr<Coprocess>> Coprocess::start(const RunOptions& options, const std::string& stderr_path) {
  if (options.argv.empty()) return make_error("exec", "no program to run");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return make_error("exec", std::string("cannot create a socket pair: ") + std::strerror(errno));
  Pipe in{{sv[0], sv[1]}}, out;
  if (::pipe2(out.fd, O_CLOEXEC) != 0) return make_error("exec", std::string("cannot create a pipe: ") + std::strerror(errno));
  auto opened = open_own_file(stderr_path, O_WRONLY | O_CREAT | O_APPEND);
  if (!opened) return opened.error();
  int log = *opened;
  RunOptions own = options;
  own.own_process_group = true;
  auto spawned = spawn_child(own, in.fd[1], out.fd[1], log);
  ::close(log);
  if (!spawned) return spawned.error();
  std::unique_ptr<Coprocess> child(new Coprocess);
  child->pid_ = *spawned;
  child->to_child_ = std::exchange(in.fd[0], -1);
  child->from_child_ = std::exchange(out.fd[0], -1);
  child->limit_ = options.capture_head_tail;
  return child;
}

Coprocess::~Coprocess() { finish(1.0); }

std::string Coprocess::finish(double grace_seconds) {
  if (to_child_ >= 0) ::close(std::exchange(to_child_, -1));
  if (from_child_ >= 0) ::close(std::exchange(from_child_, -1));
  if (pid_ <= 0) return "not running";
  int status = exit_status_.value_or(0);
  // Closing its stdin is the polite "no more requests": give it a moment
  // to leave on its own (a CUDA process tears its context down), then kill
  // the group.
  pid_t w = exit_status_ ? pid_ : 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (w == 0 && (w = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until) ::usleep(2000);
  ::kill(-pid_, SIGKILL); // it, if still running, and anything it left in its group
  if (w == 0)
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  untrack_child(pid_);
  pid_ = -1;
  exit_status_.reset();
  ended_cleanly_ = w > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  RunResult r;
  set_status(r, status);
  return r.describe();
}

bool Coprocess::running() {
  if (pid_ <= 0 || exit_status_) return false;
  int status = 0;
  pid_t w = ::waitpid(pid_, &status, WNOHANG);
  if (w == pid_) exit_status_ = status;
  return w == 0;
}

bool Coprocess::read_available(int max_reads) {
  for (int reads = 0; from_child_ >= 0 && reads < max_reads;) {
    pollfd pfd{from_child_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 0);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return true;
    char buffer[65536];
    ssize_t got = ::read(from_child_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    pending_.append(buffer, std::size_t(got));
    ++reads;
  }
  return from_child_ >= 0;
}

std::size_t Coprocess::waiting_output() {
  if (pending_.empty()) read_available(1);
  return pending_.size();
}

Result<void> Coprocess::send(std::string_view data) {
  if (to_child_ < 0) return make_error(ciq::errc::exited, "is not running");
  // send(MSG_NOSIGNAL), not write_all(): a child that has gone must give an
  // error here, not a SIGPIPE that ends the tuner.
  while (!data.empty()) {
    ssize_t n = ::send(to_child_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = std::strerror(errno);
      return make_error(ciq::errc::exited, "could not be sent a request (" + why + "); it ended (" + finish() + ")");
    }
    data.remove_prefix(std::size_t(n));
  }
  return {};
}

Result<std::string> Coprocess::receive(std::string_view marker, double timeout_seconds, std::string* text) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  auto exit_check_every = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(k_exit_check_seconds));
  auto next_exit_check = Clock::now() + exit_check_every;
  bool exited = false; // the child itself: what it wrote before is read, then its end is the answer
  std::size_t scanned = 0; // pending_ before this holds no marker line
  static constexpr std::string_view k_dropped = " [... output dropped ...] ";
  dropped_ = 0;
  while (true) {
    for (std::size_t line = scanned; line < pending_.size();) {
      std::size_t nl = pending_.find('\n', line);
      if (nl == std::string::npos) break;
      if (std::string_view(pending_).substr(line, nl - line).substr(0, marker.size()) == marker) {
        if (text) *text = pending_.substr(0, line);
        std::string rest = pending_.substr(line + marker.size(), nl - line - marker.size());
        pending_.erase(0, nl + 1);
        return rest;
      }
      line = scanned = nl + 1;
    }
    std::string_view open_line = std::string_view(pending_).substr(scanned);
    if (open_line.size() > k_max_marker_line && open_line.substr(0, marker.size()) == marker) {
      if (text) *text = pending_.substr(0, scanned);
      finish(0);
      return make_error("garbled", "wrote a line starting with '" + std::string(trim(marker)) + "' of over " +
                                       std::to_string(k_max_marker_line >> 10) + " KiB");
    }
    // Bounded: what cannot hold the marker line (the lines before `scanned`,
    // or an unfinished line that does not start with it) loses its middle,
    // the first and last `limit_` bytes kept. The note has no newline: a
    // line cut in two stays one line.
    if (limit_) {
      bool not_marker = open_line.size() >= marker.size() && open_line.substr(0, marker.size()) != marker;
      std::size_t safe = not_marker ? pending_.size() : scanned;
      std::size_t from = limit_ + (dropped_ ? k_dropped.size() : 0);
      if (safe > from + 2 * limit_) {
        std::size_t to = safe - limit_, cut = to - from;
        if (dropped_) pending_.erase(from, cut);
        else pending_.replace(limit_, cut, k_dropped);
        dropped_ += cut;
        std::size_t now_at = dropped_ == cut ? limit_ + k_dropped.size() : from; // where `to` is now
        scanned = scanned >= to ? scanned - to + now_at : limit_;
      }
    }
    if (exited) {
      if (text) *text = pending_;
      return make_error(ciq::errc::exited, "ended (" + finish() + ") before answering");
    }
    if (from_child_ < 0) return make_error(ciq::errc::exited, "is not running");
    auto now = Clock::now();
    // Checked here, not only when the output pauses: a child that writes
    // without end (and never the marker) still times out.
    if (timeout_seconds > 0 && now >= deadline) {
      if (text) *text = pending_;
      finish(0); // hung: no grace
      return make_error(ciq::errc::timeout, "did not answer within " + format_number(timeout_seconds) + " s");
    }
    // Its own exit, not only the end of its stdout: a process it started
    // (a daemon, a stray child) may hold that open for ever.
    if (now >= next_exit_check) {
      next_exit_check = now + exit_check_every;
      if (!running()) {
        exited = true;
        read_available(64); // what it wrote before it exited
        continue;
      }
    }
    auto until = timeout_seconds > 0 ? std::min(deadline, next_exit_check) : next_exit_check;
    int wait_ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count()) + 1;
    pollfd pfd{from_child_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      std::string why = std::strerror(errno);
      if (text) *text = pending_;
      return make_error(ciq::errc::exited, "could not be read (" + why + "); it ended (" + finish(0) + ")");
    }
    if (ready == 0) continue;
    char buffer[65536];
    ssize_t got = ::read(from_child_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (text) *text = pending_;
      return make_error(ciq::errc::exited, "ended (" + finish() + ") before answering");
    }
    pending_.append(buffer, std::size_t(got));
  }
}

void exit_like(const RunResult& result) {
  if (result.signal) {
    std::signal(result.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, result.signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(result.signal);
  }
  std::_Exit(result.shell_status());
}

} // namespace ciq
