#include "tuner/rundir/lock.h"

#include "utils/files.h"
#include "utils/text.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {
int g_lock_fd = -1; // held until release_run_directory() or exit

std::string read_fd(int fd) {
  std::string text;
  char buffer[256];
  ssize_t got;
  ::lseek(fd, 0, SEEK_SET);
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0 && text.size() < 4096) text.append(buffer, std::size_t(got));
  return std::string(trim(text));
}
} // namespace

Result<void> lock_run_directory(const std::string& dir) {
  std::string path = join_path(dir, "lock");
  auto opened = open_own_file(path, O_RDWR | O_CREAT);  // never a planted link: we print and overwrite it
  if (!opened) return opened.error();
  int fd = *opened;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int saved = errno;
    std::string owner = read_fd(fd);
    ::close(fd);
    if (saved != EWOULDBLOCK) return make_error("io", "cannot lock " + path + ": " + std::strerror(saved));
    return make_error("locked", "'" + dir + "' is in use by another ciq-tuner (" + (owner.empty() ? "starting" : owner) +
                                    "; lock file " + path + "): wait for it to end, or give another --out");
  }
  if (std::string previous = read_fd(fd); !previous.empty())
    std::fprintf(stderr, "ciq-tuner: taking over the lock of %s: its holder (%s) no longer runs\n", dir.c_str(), previous.c_str());
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  std::string owner = "pid " + std::to_string(::getpid()) + " on host " + host + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, owner.data(), owner.size(), 0) != ssize_t(owner.size()) || ::fsync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    return make_error("io", "cannot write " + path + ": " + std::strerror(saved));
  }
  g_lock_fd = fd;
  return {};
}

void release_run_directory() {
  if (g_lock_fd < 0) return;
  if (::ftruncate(g_lock_fd, 0) == 0) ::fsync(g_lock_fd); // empty: nobody's, nothing to take over
  ::close(g_lock_fd);
  g_lock_fd = -1;
}

} // namespace ciq::tuner
