// The cache's generation (generation.h).
#include "cache/generation.h"

#include "cache/store.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/safe_open.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::cache {

namespace {

constexpr std::uint64_t k_generation_bytes = 64;

bool is_identifier(const std::string& text) {
  if (text.size() != 33 || text.back() != '\n') return false;
  for (std::size_t i = 0; i < 32; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  return true;
}

/// 32 hex digits nobody has used: the random device, the clock and the pid.
std::string fresh_identifier() {
  std::string seed;
  try {
    std::random_device device;
    for (int i = 0; i < 4; ++i) seed += std::to_string(device()) + ":";
  } catch (const std::exception&) {
    // No entropy source: the clocks and the pid below still make it new.
  }
  seed += std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ":" +
          std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + ":" +
          std::to_string(::getpid());
  return to_hex(xxh128(seed)) + "\n";
}

std::optional<std::string> read_generation(const std::string& path) {
  auto text = read_file(path, k_generation_bytes);
  if (!text || !is_identifier(*text)) return std::nullopt;
  return text->substr(0, 32);
}

/// Publishes `text` at `path` only where no file is: a reader starting a
/// generation must never replace one a writer has just made.
bool publish_if_absent(const std::string& path, const std::string& text) {
  std::string temp = path + ".XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return false;
  bool written = write_all(fd, text) && ::fchmod(fd, 0644) == 0;
  ::close(fd);
  bool linked = written && ::link(temp.c_str(), path.c_str()) == 0;
  ::unlink(temp.c_str());
  return linked;
}

} // namespace

std::string generation_path(const std::string& cache_dir) { return join_path(cache_dir, "generation"); }

void new_generation(const std::string& cache_dir) {
  std::string path = generation_path(cache_dir);
  auto written = write_file_atomic(path, fresh_identifier());
  if (written) return;
  spdlog::debug("cannot write {}: {}", path, written.error().message);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    spdlog::warn("cannot renew the cache generation {}: programs that key on `ciq-ptxas --version` (Triton) may keep "
                 "kernels compiled for the entries before",
                 path);
}

std::optional<std::string> current_generation(const std::string& cache_dir) {
  if (!Store::exists(cache_dir)) return std::nullopt;
  std::string db_dir = join_path(cache_dir, "db");
  if (!check_own_directory(db_dir)) return std::nullopt;  // not this user's: the wrappers do not read it
  std::string path = generation_path(cache_dir);
  if (auto held = read_generation(path)) return held;
  // Absent (or not ours to read): start one, unless a writer does first.
  if (publish_if_absent(path, fresh_identifier()))
    if (auto made = read_generation(path)) return made;
  if (auto held = read_generation(path)) return held;
  // A directory this user cannot write: nobody adds entries to it here
  // either, so the store file's identity changes exactly when it does.
  if (auto identity = file_fingerprint(join_path(db_dir, "data.mdb"))) return "store-" + to_hex(xxh128(*identity));
  return std::nullopt;
}

} // namespace ciq::cache
