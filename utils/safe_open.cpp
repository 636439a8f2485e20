#include "utils/safe_open.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ciq {
namespace {

std::string quoted(const std::string& path) { return "'" + path + "'"; }

std::string dir_of(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

Error io_error(const std::string& what, const std::string& path, int error = errno) {
  return make_error("io", what + " " + quoted(path) + ": " + std::strerror(error));
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
  return text;
}


/// "" when `st` (of something at `path`, opened or looked up) is the
/// effective user's and, for `no_group_other_write`, writable by nobody
/// else; otherwise why not, for an "unsafe" error.
std::string foreign_reason(const struct stat& st, const std::string& what, bool no_group_other_write) {
  if (st.st_uid != ::geteuid())
    return what + " belongs to user id " + std::to_string(st.st_uid) + ", not to this user (" +
           std::to_string(::geteuid()) + ")";
  if (no_group_other_write && (st.st_mode & (S_IWGRP | S_IWOTH)))
    return what + " is " + writable_by_others(st.st_mode) + "; 'chmod go-w' it if it is yours";
  return {};
}

/// Clears O_NONBLOCK: callers of open_own_file expect ordinary blocking I/O
/// on the regular file they get.
void make_blocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

Result<int> refuse(int fd, const char* code, const std::string& message) {
  ::close(fd);
  return make_error(code, message);
}

} // namespace

/// Why a directory on the way to one of ciq's own could let another user
/// replace what lies below it ("" when it cannot): it must be the effective
/// user's or root's, and writable by others only when sticky (/tmp), where
/// nobody may rename another user's entries. `itself`: `path` is the
/// directory asked about, not one above it (the message says which).
static std::string unsafe_ancestor(const std::string& path, bool itself) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};  // vanished: the check of `dir` itself reports it
  std::string what = quoted(path) + (itself ? "" : ", above it,");
  std::string threat = itself ? "could change what is in it" : "could move it and put another directory in its place";
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return what + " belongs to user id " + std::to_string(st.st_uid) + ", who " + threat;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return what + " is " + writable_by_others(st.st_mode) + " and not sticky, so they " +
           threat;
  return {};
}

/// Every symbolic link met on the way to `dir` (as written, each prefix
/// looked at without following its last part) must be the user's or root's:
/// another user could point theirs elsewhere at any moment.
static std::string foreign_link_on_the_way(const std::string& dir) {
  for (std::size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    struct stat link {};
    if (!prefix.empty() && ::lstat(prefix.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != ::geteuid() &&
        link.st_uid != 0)
      return quoted(prefix) + " is a symbolic link made by user id " + std::to_string(link.st_uid) +
             ", who could point it elsewhere";
    if (slash == std::string::npos) return {};
  }
}

/// "" when nobody but the user (and root) can change what `dir`, an existing
/// directory, means: no other user's link on the way as written, and the
/// directory itself and every one above it (links resolved) passes
/// unsafe_ancestor(). Otherwise why not. `itself`: `dir` is the directory
/// asked about (false: the deepest existing level above one to be made).
static std::string insecure_location(const std::string& dir, bool itself) {
  if (std::string why = foreign_link_on_the_way(dir); !why.empty()) return why;
  char* resolved = ::realpath(dir.c_str(), nullptr);
  if (!resolved) return quoted(dir) + " cannot be resolved: " + std::strerror(errno);
  std::string up(resolved);
  std::free(resolved);
  for (;; itself = false) {
    if (std::string why = unsafe_ancestor(up, itself); !why.empty()) return why;
    if (up == "/") return {};
    std::size_t slash = up.rfind('/');
    up = slash == 0 ? "/" : up.substr(0, slash);
  }
}

const char* const k_refusal = ": ciq keeps its files only in directories no other user can change; "
                              "name a new path or one of your own";

Result<void> check_secure_location(const std::string& dir) {
  if (std::string why = insecure_location(dir, true); !why.empty()) return make_error(ciq::errc::unsafe, why + k_refusal);
  return {};
}

Result<void> check_place_to_make(const std::string& path) {
  std::string existing = path;
  for (struct stat st {}; ::stat(existing.c_str(), &st) != 0 && existing != dir_of(existing);) existing = dir_of(existing);
  if (std::string why = insecure_location(existing, existing == path); !why.empty()) return make_error(ciq::errc::unsafe, why + k_refusal);
  return {};
}

std::string writable_by_others(unsigned mode) {
  if (!(mode & (S_IWGRP | S_IWOTH))) return "";
  return std::string("writable by ") + ((mode & S_IWOTH) ? "other users" : "its group") + " (mode " + mode_text(mode) + ")";
}

Result<void> check_own_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return io_error("cannot look at directory", dir);
  if (!S_ISDIR(st.st_mode)) return make_error(ciq::errc::unsafe, quoted(dir) + " is not a directory");
  if (std::string why = foreign_reason(st, quoted(dir), true); !why.empty()) return make_error(ciq::errc::unsafe, why + k_refusal);
  return check_secure_location(dir);
}

Result<void> make_levels(const std::string& path, mode_t mode) {
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string level = path.substr(0, slash);
    if (!level.empty() && ::mkdir(level.c_str(), mode) != 0 && errno != EEXIST) {
      int saved = errno;
      struct stat st {};
      if (::stat(level.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return io_error("cannot create directory", level, saved);
    }
    if (slash == std::string::npos) break;
  }
  return {};
}

Result<void> make_own_directory(const std::string& dir, mode_t mode) {
  if (dir.empty()) return make_error("io", "an empty directory name");
  // Nothing is made in a place another user controls.
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    if (auto secure = check_place_to_make(dir); !secure) return secure;
  if (auto made = make_levels(dir, mode); !made) return made;
  return check_own_directory(dir);
}

Result<int> create_new_file(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), (flags & ~O_TRUNC) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd >= 0) return fd;
  if (errno == EEXIST) return make_error(ciq::errc::exists, quoted(path) + " already exists");
  return io_error("cannot create", path);
}

std::string new_process_tag() {
  std::uint64_t bits = 0;
  bool drawn = ::getrandom(&bits, sizeof bits, GRND_NONBLOCK) == ssize_t(sizeof bits);
  if (!drawn) {
    int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    drawn = fd >= 0 && ::read(fd, &bits, sizeof bits) == ssize_t(sizeof bits);
    if (fd >= 0) ::close(fd);
  }
  if (!drawn) {  // no entropy source: the clock and an address still part two processes of one pid
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    bits = std::uint64_t(now.tv_sec) * 1000000007u ^ std::uint64_t(now.tv_nsec) ^ std::uint64_t(std::uintptr_t(&now)) << 20;
  }
  char text[48];
  std::snprintf(text, sizeof text, "%ld-%016llx", long(::getpid()), static_cast<unsigned long long>(bits));
  return text;
}

Result<void> rename_new(const std::string& temporary, const std::string& path) {
#ifdef SYS_renameat2
  constexpr unsigned rename_noreplace = 1;  // <linux/fs.h>'s RENAME_NOREPLACE; a system call: glibc before 2.28 has no wrapper
  if (::syscall(SYS_renameat2, AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), rename_noreplace) == 0) return {};
  if (errno == EEXIST) return make_error(ciq::errc::exists, quoted(path) + " already exists");
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return io_error("cannot rename a file onto", path);
#endif
  // A file system (or kernel) without RENAME_NOREPLACE: a hard link fails
  // on anything already there, a dangling link included.
  if (::link(temporary.c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) return make_error(ciq::errc::exists, quoted(path) + " already exists");
    return io_error("cannot link a file to", path);
  }
  ::unlink(temporary.c_str());
  return {};
}

Result<int> open_own_file(const std::string& path, int flags, mode_t mode) {
  // O_TRUNC only after the checks: never truncate someone else's file.
  int fd = ::open(path.c_str(), (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == ELOOP)
      return make_error(ciq::errc::unsafe, quoted(path) + " is a symbolic link: ciq does not write through links there; remove it");
    return io_error("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refuse(fd, "io", "cannot look at " + quoted(path) + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refuse(fd, ciq::errc::not_regular, quoted(path) + " is not a regular file (a FIFO, device or directory was put there)");
  if (std::string why = foreign_reason(st, quoted(path), false); !why.empty())
    return refuse(fd, ciq::errc::unsafe, why + ": ciq does not write into other users' files; remove it");
  if (st.st_nlink != 1)
    return refuse(fd, ciq::errc::unsafe, quoted(path) + " has " + std::to_string(st.st_nlink) +
                                    " hard links: ciq writes only files with one name; remove it");
  if ((flags & O_TRUNC) && ::ftruncate(fd, 0) != 0) return refuse(fd, "io", "cannot truncate " + quoted(path) + ": " + std::strerror(errno));
  make_blocking(fd);
  return fd;
}

Result<int> open_own_fifo(const std::string& path, int flags) {
  // Looked at before opening: opening a device can have effects of its own.
  struct stat before {};
  if (::lstat(path.c_str(), &before) != 0) return io_error("cannot look at", path);
  if (!S_ISFIFO(before.st_mode))
    return make_error(ciq::errc::unsafe, quoted(path) + " is not a FIFO" + (S_ISLNK(before.st_mode) ? " (a symbolic link)" : ""));
  int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open the FIFO", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refuse(fd, "io", "cannot look at " + quoted(path) + ": " + std::strerror(errno));
  if (!S_ISFIFO(st.st_mode) || st.st_ino != before.st_ino || st.st_dev != before.st_dev)
    return refuse(fd, ciq::errc::unsafe, quoted(path) + " changed while it was opened");
  if (std::string why = foreign_reason(st, quoted(path), true); !why.empty()) return refuse(fd, ciq::errc::unsafe, why);
  if (st.st_mode & (S_IRGRP | S_IROTH))
    return refuse(fd, ciq::errc::unsafe, quoted(path) + " is readable by other users (mode " + mode_text(st.st_mode) + ")");
  return fd;
}

Result<int> open_log_destination(const std::string& path) {
  int nofollow = O_NOFOLLOW;
  struct stat link {}, target {};
  // A file (to be) written there: only where no other user can change what
  // the path means (no new file of ours in their directory, nothing through
  // their links). Streams (/dev/stderr, the user's FIFO) are looked at below.
  bool stream = ::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode);
  if (!stream)
    if (auto secure = check_secure_location(dir_of(path)); !secure) return secure.error();
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    if (link.st_uid != ::geteuid() && link.st_uid != 0)
      return make_error(ciq::errc::unsafe, quoted(path) + " is a symbolic link made by user id " + std::to_string(link.st_uid) +
                                      ": not followed");
    nofollow = 0;  // /dev/stderr, or the user's own link
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | nofollow, 0644);
  if (fd < 0) return io_error("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refuse(fd, "io", "cannot look at " + quoted(path) + ": " + std::strerror(errno));
  if (S_ISREG(st.st_mode)) {
    if (std::string why = foreign_reason(st, quoted(path), false); !why.empty()) return refuse(fd, ciq::errc::unsafe, why);
    if (st.st_nlink != 1) return refuse(fd, ciq::errc::unsafe, quoted(path) + " has more than one hard link");
    make_blocking(fd);
    return fd;
  }
  if (S_ISCHR(st.st_mode)) return fd;  // a terminal, /dev/null; stays non-blocking
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    // Someone else's FIFO would hand them the log (argv, paths, kernels).
    if (std::string why = foreign_reason(st, quoted(path), false); !why.empty()) return refuse(fd, ciq::errc::unsafe, why);
    return fd;  // stays non-blocking
  }
  return refuse(fd, ciq::errc::unsafe, quoted(path) + " is neither a file nor a stream");
}

Result<int> open_regular_file(const std::string& path, int flags, struct stat* st) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) return io_error("cannot open", path);
  struct stat own {};
  struct stat& s = st ? *st : own;
  if (::fstat(fd, &s) != 0 || !S_ISREG(s.st_mode))
    return refuse(fd, ciq::errc::not_regular, quoted(path) + " is not a regular file");
  return fd;
}

/// What a non-regular file is, for "not-regular" errors.
static const char* kind_of(mode_t mode) {
  return S_ISLNK(mode) ? "a symbolic link" : S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO"
       : S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "not a plain file";
}

Result<InputFile> open_input(const std::string& path, const InputRules& rules) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (rules.follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT) return make_error(ciq::errc::absent, "cannot open " + quoted(path) + ": " + std::strerror(error));
    // O_NOFOLLOW on a link: ELOOP (EMLINK on some BSDs).
    if (!rules.follow_links && (error == ELOOP || error == EMLINK))
      return make_error(ciq::errc::not_regular, quoted(path) + " is not a regular file (a symbolic link: not followed)");
    return io_error("cannot open", path, error);
  }
  InputFile in;
  in.fd = fd;
  // Each refusal closes the descriptor it checked.
  if (::fstat(fd, &in.st) != 0) return refuse(fd, "io", "cannot look at " + quoted(path) + ": " + std::strerror(errno)).error();
  if (!S_ISREG(in.st.st_mode))
    return refuse(fd, ciq::errc::not_regular, quoted(path) + " is not a regular file (" + kind_of(in.st.st_mode) + ")").error();
  std::uint64_t size = std::uint64_t(in.st.st_size);
  if (rules.size && size != *rules.size)
    return refuse(fd, "wrong-size", quoted(path) + " holds " + std::to_string(size) + " bytes, not " + std::to_string(*rules.size)).error();
  if (size > rules.max_bytes)
    return refuse(fd, "too-large", quoted(path) + " holds " + std::to_string(size) + " bytes, more than " +
                                       std::to_string(rules.max_bytes)).error();
  return in;
}

Result<std::string> read_bounded(int fd, const std::string& path, std::uint64_t max_bytes) {
  std::string content;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    if (std::uint64_t(st.st_size) > max_bytes) {
      ::close(fd);
      return make_error("too-large", quoted(path) + " holds " + std::to_string(st.st_size) + " bytes, more than " +
                                         std::to_string(max_bytes));
    }
    content.reserve(std::size_t(st.st_size));
  }
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = io_error("cannot read", path);
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    if (content.size() + std::size_t(n) > max_bytes) {  // grew while read, or a size-less /proc file
      ::close(fd);
      return make_error("too-large", quoted(path) + " holds more than " + std::to_string(max_bytes) + " bytes");
    }
    content.append(buffer, std::size_t(n));
  }
  ::close(fd);
  return content;
}

} // namespace ciq
