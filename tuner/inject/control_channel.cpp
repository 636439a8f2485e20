#include "tuner/inject/control_channel.h"

#include "utils/safe_open.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace ciq::inject {
namespace {

constexpr std::size_t max_command_bytes = 8192;  // a `cut DIR` line: a path

// The control thread: reads commands from the FIFO until the process ends.
// Only the process that started it (`owner`) acts on them: a fork child
// inherits the descriptor, not the channel.
void listen(int fd, pid_t owner, const Command& on_cut, const Logger& say) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the program's signals are for its own threads
  std::string pending;
  bool overlong = false;  // dropping a line longer than max_command_bytes, up to its newline
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    pending.append(buffer, std::size_t(n));
    if (overlong) {  // the rest of a dropped line: up to its newline, unread
      std::size_t nl = pending.find('\n');
      pending.erase(0, nl == std::string::npos ? pending.size() : nl + 1);
      overlong = nl == std::string::npos;
    }
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      try {
        if (line.rfind("cut /", 0) == 0 && ::getpid() == owner) on_cut(line.substr(4));
        else say("unknown command on the control FIFO: " + line);
      } catch (...) {
        say("cannot cut the trace: out of memory");
      }
    }
    if (pending.size() > max_command_bytes) {  // memory stays bounded whatever is written
      say("a command on the control FIFO is longer than " + std::to_string(max_command_bytes) + " bytes: dropped");
      pending.clear();
      overlong = true;
    }
  }
}

} // namespace

void start_control(const std::string& path, pid_t owner, Command on_cut, Logger say) {
  auto fifo = ciq::open_own_fifo(path, O_RDWR);  // read and write: no writer's close ends our reads
  if (!fifo) {
    say("not listening on the control FIFO: " + fifo.error().message);
    return;
  }
  int fd = *fifo;
  auto locked = ciq::open_own_file(path + ".lock", O_RDWR | O_CREAT, 0600);
  if (!locked || ::flock(*locked, LOCK_EX | LOCK_NB) != 0) {
    if (locked) ::close(*locked);
    else say("not listening on the control FIFO: " + locked.error().message);
    if (locked) say("control channel " + path + " is another process': this one writes its trace at exit only");
    ::close(fd);
    return;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // the thread sleeps in read(), never spins
  say("listening on " + path);
  std::thread(listen, fd, owner, std::move(on_cut), std::move(say)).detach();  // the lock stays held: it is the channel's owner mark
}

} // namespace ciq::inject
