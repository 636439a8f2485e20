#include "utils/files.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace ciq {

static Error io_error(const std::string& what, const std::string& path) {
  return make_error("io", what + " '" + path + "': " + std::strerror(errno));
}

Result<std::string> read_file(const std::string& path, std::uint64_t max_bytes) {
  return read_input(path, InputRules{/*follow_links=*/true, std::nullopt, max_bytes});
}

Result<std::string> read_input(const std::string& path, const InputRules& rules) {
  auto in = open_input(path, rules);
  if (!in) return in.error();
  return read_bounded(in->fd, path, rules.max_bytes);
}

Result<void> append_file(const std::string& path, std::string_view data, bool sync) {
  auto opened = open_own_file(path, O_WRONLY | O_APPEND | O_CREAT);
  if (!opened) return opened.error();
  int fd = *opened;
  bool ok = write_all(fd, data) && (!sync || ::fdatasync(fd) == 0);
  int saved = errno;
  ::close(fd);
  if (!ok) return make_error("io", "cannot append to " + path + ": " + std::strerror(saved));
  return {};
}

Result<void> write_file_atomic(const std::string& path, std::string_view content, mode_t mode,
                               std::optional<struct timespec> mtime) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());  // 0600 until the content is in
  if (fd < 0) return io_error("cannot create a temporary file next to", path);
  struct timespec times[2] = {{0, UTIME_OMIT}, mtime.value_or(timespec{0, UTIME_NOW})};
  if (!write_all(fd, content) || (mtime && ::futimens(fd, times) != 0) || ::fsync(fd) != 0 ||
      ::fchmod(fd, mode) != 0) {
    Error e = io_error("cannot write", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = io_error("cannot rename a temporary file onto", path);
    ::unlink(tmp.c_str());
    return e;
  }
  return {};
}

Result<void> make_dirs(const std::string& path) {
  // Each level made 0755 (less the umask), not 0777: under the umask 002 of
  // a user with a group of their own (Debian's default for such users) a
  // group-writable run directory is one ciq's own checks then refuse.
  if (path.empty()) return make_error("io", "cannot create directory '': an empty name");
  if (auto made = make_levels(path, 0755); !made) return made;
  if (!is_directory(path)) return make_error("io", "cannot create directory '" + path + "': " + std::strerror(ENOTDIR));
  return {};
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::optional<std::uint64_t> free_bytes(const std::string& path) {
  std::string at = path.empty() ? "." : path;
  for (;;) {
    struct statvfs fs;
    if (::statvfs(at.c_str(), &fs) == 0) return std::uint64_t(fs.f_bavail) * fs.f_frsize;
    if (errno != ENOENT && errno != ENOTDIR) return std::nullopt;
    std::string up = dir_name(at);
    if (up == at) return std::nullopt;
    at = up;
  }
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return std::nullopt;
  std::string out(resolved);
  std::free(resolved);
  return out;
}

std::string dir_name(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string join_path(std::string_view a, std::string_view b) {
  if (a.empty() || (!b.empty() && b.front() == '/')) return std::string(b);
  std::string out(a);
  if (out.back() != '/') out += '/';
  out += b;
  return out;
}

std::optional<std::string> file_fingerprint(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

Result<std::vector<std::string>> list_directory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return make_error("io", "cannot read " + dir + ": " + std::strerror(errno));
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<ScratchDir> ScratchDir::create(std::string_view prefix, std::string_view parent) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string base = !parent.empty() ? std::string(parent) : tmpdir && *tmpdir ? tmpdir : "/tmp";
  // $TMPDIR in another user's directory: they could rename ours away (and
  // put theirs in its place) between our mkdtemp and our use.
  if (auto secure = check_secure_location(base); !secure) return secure.error();
  std::string pattern = join_path(base, std::string(prefix) + ".XXXXXX");
  if (!::mkdtemp(pattern.data())) return io_error("cannot create a scratch directory in", base);
  return ScratchDir(pattern);
}

ScratchDir::~ScratchDir() {
  if (!path_.empty()) remove_tree(path_);
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

} // namespace ciq
