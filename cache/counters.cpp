#include "cache/counters.h"

#include "utils/files.h"
#include "utils/text.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::cache {

namespace {

std::map<std::string, std::uint64_t> parse_counters(std::string_view text) {
  std::map<std::string, std::uint64_t> out;
  for (std::string_view line : split(text, '\n')) {
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    auto value = parse_integer(trim(line.substr(eq + 1)));
    std::string_view name = trim(line.substr(0, eq));
    if (value && *value >= 0 && !name.empty()) out[std::string(name)] = std::uint64_t(*value);
  }
  return out;
}

std::string stats_path(const std::string& cache_dir) { return join_path(cache_dir, "stats"); }

std::string read_fd(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, std::size_t(n));
  return text;
}

// The counters are never worth waiting for: a build must not stall because
// another process holds the file (a hung `ciq-cache stats`, a stopped
// wrapper). Tries for about 20 ms, then the update is skipped.
bool lock_briefly(int fd) {
  for (int i = 0; i < 20; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    ::usleep(1000);
  }
  spdlog::debug("the counters file is locked by another process; this update is skipped");
  return false;
}

} // namespace

void bump_counters(const std::string& cache_dir, const std::vector<std::string>& names) {
  if (names.empty()) return;
  if (!make_dirs(cache_dir)) return;
  // O_NONBLOCK and a regular file only: a FIFO or device planted at the
  // path would otherwise block the read below for ever.
  int fd = ::open(stats_path(cache_dir).c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
  if (fd < 0) {
    spdlog::debug("cannot update counters in {}: {}", cache_dir, std::strerror(errno));
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    spdlog::debug("{} is not a regular file; counters not updated", stats_path(cache_dir));
    ::close(fd);
    return;
  }
  if (lock_briefly(fd)) {
    auto counters = parse_counters(read_fd(fd));
    for (const auto& n : names) ++counters[n];
    std::string text;
    for (const auto& [n, v] : counters) text += n + " = " + std::to_string(v) + "\n";
    if (::pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size())) {
      if (::ftruncate(fd, off_t(text.size())) != 0) spdlog::debug("cannot truncate the counters file");
    }
  }
  ::close(fd); // releases the lock
}

Result<std::map<std::string, std::uint64_t>> read_counters(const std::string& cache_dir) {
  int fd = ::open(stats_path(cache_dir).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::map<std::string, std::uint64_t>{};
    return make_error("io", "cannot read '" + stats_path(cache_dir) + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error("io", "'" + stats_path(cache_dir) + "' is not a regular file");
  }
  ::flock(fd, LOCK_SH);
  auto counters = parse_counters(read_fd(fd));
  ::close(fd);
  return counters;
}

Result<void> reset_counters(const std::string& cache_dir) {
  if (::unlink(stats_path(cache_dir).c_str()) != 0 && errno != ENOENT)
    return make_error("io", "cannot remove '" + stats_path(cache_dir) + "': " + std::strerror(errno));
  return {};
}

} // namespace ciq::cache
