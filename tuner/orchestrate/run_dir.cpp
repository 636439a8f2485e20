#include "tuner/orchestrate/run_dir.h"

#include "utils/files.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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

std::vector<std::string> without_publish_password(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool value_next = false; // the previous argument was --publish: this is its URL
  for (const auto& a : args) {
    std::string name = a.substr(0, a.find('='));
    bool named = name == "--publish" || name == "-publish";
    if (value_next) out.push_back(redact_secrets(a));
    else if (named && a.size() > name.size()) out.push_back(name + "=" + redact_secrets(a.substr(name.size() + 1)));
    else out.push_back(a);
    value_next = named && a == name;
  }
  return out;
}

Result<void> save_command_line(const std::string& dir, const std::vector<std::string>& args) {
  std::string saved;
  for (const auto& a : without_publish_password(args)) saved += a + "\n";
  // write_file_atomic()'s way, but the file stays 0600 (mkstemp's mode) from
  // its first byte to its rename: no moment in which others could open it.
  std::string path = join_path(dir, "command-line");
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return make_error("io", "cannot create a temporary file next to " + path + ": " + std::strerror(errno));
  bool written = write_all(fd, saved) && ::fchmod(fd, 0600) == 0 && ::fsync(fd) == 0;
  int saved_errno = errno;
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (written) saved_errno = errno;
    ::unlink(tmp.c_str());
    return make_error("io", "cannot write " + path + ": " + std::strerror(saved_errno));
  }
  return {};
}

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

Result<void> append_whole_line(const std::string& path, const std::string& line) {
  auto opened = open_own_file(path, O_WRONLY | O_APPEND | O_CREAT);
  if (!opened) return opened.error();
  int fd = *opened;
  struct stat before {};
  bool sized = ::fstat(fd, &before) == 0;
  bool ok = write_all(fd, line + "\n") && ::fdatasync(fd) == 0;
  int saved = errno;
  if (!ok && sized) (void)!::ftruncate(fd, before.st_size); // no partial line left behind
  ::close(fd);
  if (!ok) return make_error("io", "cannot append to " + path + ": " + std::strerror(saved));
  return {};
}

Result<std::size_t> drop_partial_last_line(const std::string& path) {
  if (!path_exists(path)) return std::size_t(0);
  auto text = read_file(path);
  if (!text) return text.error();
  if (text->empty() || text->back() == '\n') return std::size_t(0);
  auto nl = text->rfind('\n');
  std::size_t keep = nl == std::string::npos ? 0 : nl + 1;
  auto opened = open_own_file(path, O_WRONLY);
  if (!opened) return opened.error();
  bool cut_off = ::ftruncate(*opened, off_t(keep)) == 0;
  int saved = errno;
  ::close(*opened);
  if (!cut_off) return make_error("io", "cannot cut the partial last line off " + path + ": " + std::strerror(saved));
  std::size_t cut = text->size() - keep;
  std::fprintf(stderr, "ciq-tuner: %s ended in a partial line (%zu bytes, written when the run stopped): cut it off\n",
               path.c_str(), cut);
  return cut;
}

Result<std::vector<EvalRecord>> load_journal(const std::string& path) {
  std::vector<EvalRecord> out;
  if (!path_exists(path)) return out;
  if (auto cut = drop_partial_last_line(path); !cut) return cut.error();
  auto text = read_file(path);
  if (!text) return text.error();
  std::size_t number = 0;
  for (std::string_view line : split(*text, '\n')) {
    ++number;
    if (trim(line).empty()) continue;
    auto r = EvalRecord::from_json(std::string(line));
    if (r) out.push_back(std::move(*r));
    else
      std::fprintf(stderr, "ciq-tuner: warning: %s line %zu is not a record (%s): skipped; its evaluation runs again\n",
                   path.c_str(), number, printable(r.error().message).c_str());
  }
  return out;
}

} // namespace ciq::tuner
