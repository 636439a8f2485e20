#include "cache/pack_index.h"

#include "cache/entries.h"
#include "cache/pack.h"
#include "cache/store.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/text.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ciq::cache {

namespace {

// Parses `pack` and stores its entries and blobs in `dir`, built aside
// and renamed into place. The caller holds the index's lock: anything
// left aside under this id was left by a builder that died.
Result<void> build(const std::string& pack_path, const std::string& dir) {
  std::string packs = dir_name(dir), id = base_name(dir);
  if (auto names = list_directory(packs))
    for (const auto& name : *names)
      if (starts_with(name, id + ".building.")) remove_tree(join_path(packs, name));
  auto text = read_file(pack_path);
  if (!text) return text.error();
  auto pack = parse_pack(*text, pack_path);
  if (!pack) return pack.error();
  text->clear();
  std::string aside = dir + ".building." + std::to_string(::getpid());
  {
    auto store = Store::open_for_writing(aside);
    if (!store) {
      remove_tree(aside);
      return store.error();
    }
    // Entries are checked when they are looked up, against the space of
    // the compiler asking; here they are only stored.
    std::vector<std::pair<Hash128, std::string>> records(pack->entries.begin(), pack->entries.end());
    if (auto w = write_entries(*store, records, pack->blobs); !w) {
      remove_tree(aside);
      return w;
    }
  }
  if (std::rename(aside.c_str(), dir.c_str()) != 0) {
    remove_tree(aside);
    if (!is_directory(dir)) return make_error("io", "cannot publish the index of " + pack_path);
  }
  spdlog::debug("indexed {} ({} entries)", pack_path, pack->entries.size());
  return {};
}

// The index's lock, taken without waiting; -1 when another process holds it.
int try_lock(const std::string& dir) {
  auto opened = open_regular_file(dir + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW);
  if (!opened) return -1;
  if (::flock(*opened, LOCK_EX | LOCK_NB) != 0) {
    ::close(*opened);
    return -1;
  }
  return *opened;
}

// Builds the index in a detached process (its own session, quiet, niced,
// ten minutes at most) and returns at once. Double fork: the compile
// neither waits for it nor leaves a zombie.
void build_detached(const std::string& pack_path, const std::string& dir) {
  pid_t child = ::fork();
  if (child < 0) return;
  if (child > 0) {
    ::waitpid(child, nullptr, 0);
    return;
  }
  if (::fork() != 0) ::_exit(0);
  ::setsid();
  itimerval none{};
  ::setitimer(ITIMER_REAL, &none, nullptr); // the wrapper's watchdog is not ours
  for (int sig : {SIGALRM, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGHUP, SIGPIPE}) std::signal(sig, SIG_DFL);
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3 && null >= 0; ++fd) ::dup2(null, fd); // never hold the build's pipes open
  ::setpriority(PRIO_PROCESS, 0, 10);
  ::alarm(600);
  int lock = try_lock(dir);
  if (lock < 0) ::_exit(0); // another process builds it
  if (!is_directory(dir)) (void)build(pack_path, dir);
  ::_exit(0);
}

} // namespace

Result<std::optional<std::string>> pack_index(const std::string& cache_dir, const std::string& pack) {
  std::string packs = join_path(cache_dir, "packs");
  auto fingerprint = file_fingerprint(pack);
  if (!fingerprint) return make_error("io", "cannot stat pack '" + pack + "'");
  std::string dir = join_path(packs, to_hex(xxh128(real_path(pack).value_or(pack) + "\n" + *fingerprint)));
  if (Store::exists(dir)) return std::optional<std::string>{dir};
  if (auto made = make_own_directory(packs); !made) return made.error();
  struct stat st {};
  if (::stat(pack.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error("io", "pack '" + pack + "' is not a regular file");
  if (std::uint64_t(st.st_size) > k_inline_pack_bytes) {
    spdlog::info("indexing {} ({} MiB) in the background; it answers once indexed", pack, st.st_size >> 20);
    build_detached(pack, dir);
    return std::optional<std::string>{};
  }
  int lock = try_lock(dir);
  if (lock < 0) return std::optional<std::string>{}; // being indexed elsewhere
  auto built = Store::exists(dir) ? Result<void>{} : build(pack, dir);
  ::close(lock);
  if (!built) return built.error();
  return std::optional<std::string>{dir};
}

} // namespace ciq::cache
