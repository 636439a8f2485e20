#include "cache/writer_lock.h"

#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ciq::cache {

namespace {

// Who holds the lock, as its holder wrote it ("pid 123 (ciq-cache)").
std::string holder_of(int fd) {
  char buffer[256];
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text = n > 0 ? std::string(buffer, std::size_t(n)) : "";
  text = std::string(trim(text));
  return text.empty() ? "another process" : text;
}

} // namespace

Result<WriterLock> WriterLock::acquire(const std::string& db_dir, std::chrono::milliseconds wait) {
  std::string path = join_path(db_dir, "writer.lock");
  auto opened = open_regular_file(path, O_RDWR | O_CREAT | O_NOFOLLOW);
  if (!opened) return make_error("io", "cannot use the writer lock: " + opened.error().message);
  int fd = *opened;
  auto start = std::chrono::steady_clock::now();
  bool said = false;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      ::close(fd);
      return make_error("io", "cannot lock '" + path + "': " + std::strerror(errno));
    }
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    if (waited >= wait) {
      std::string who = holder_of(fd);
      ::close(fd);
      return make_error("busy", who + " has been writing to the cache in " + dir_name(db_dir) + " for over " +
                                    std::to_string(wait.count() / 1000.0).substr(0, 4) +
                                    " s (stopped or hung?); nothing was written");
    }
    if (!said && waited >= std::chrono::seconds(1)) {
      spdlog::warn("waiting for {} to finish writing to the cache in {}", holder_of(fd), dir_name(db_dir));
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(waited < std::chrono::milliseconds(50) ? 2 : 20));
  }
  std::string me = "pid " + std::to_string(::getpid()) + " (" + base_name(self_executable()) + ")\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != ssize_t(me.size()))
    spdlog::debug("cannot record this process in {}", path);
  return WriterLock(fd);
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_); // releases the lock
}

} // namespace ciq::cache
