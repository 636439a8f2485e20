// Build-dependency stamps (stamps.h).
#include "cache/stamps.h"

#include "cache/generation.h"
#include "cache/record.h"
#include "cache/tuned_on.h"
#include "spaces/control_set.h"
#include "utils/files.h"
#include "utils/safe_open.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::cache {

namespace {

constexpr std::uint64_t k_stamp_bytes = 256;  // a stamp is one short line

std::string stamps_dir(const std::string& cache_dir) { return join_path(cache_dir, "stamps"); }

/// What the stamp at `path` holds; std::nullopt when it is absent or not
/// a small regular file of ours (read_file opens without waiting).
std::optional<std::string> read_stamp(const std::string& path) {
  auto text = read_file(path, k_stamp_bytes);
  if (!text) return std::nullopt;
  return std::move(*text);
}

bool write_stamp(const std::string& path, const std::string& text,
                 std::optional<struct timespec> mtime = std::nullopt) {
  if (auto w = write_file_atomic(path, text, 0644, mtime); !w) {
    spdlog::debug("cannot write the stamp {}: {}", path, w.error().message);
    return false;
  }
  return true;
}

/// The modification time of a stamp made by a lookup (the key's first):
/// when the cache last changed (its generation file's mtime), or long ago
/// for a cache that never held a store. Not the moment it is made: that is
/// during the compile, and ninja 1.12 and later rebuild, on the next run,
/// an object whose inputs changed after its command started, so every
/// first build would compile its CUDA once more (measured on an H100 with
/// torch's load_inline and pip's ninja: the run after the first compiled
/// again, and no run after that). The state a new stamp describes is the
/// cache as it has stood since its last write; if an entry changed while
/// its stamp was absent, that write is newer than any object built before,
/// which then rebuilds, as it must.
std::optional<struct timespec> first_stamp_time(const std::string& cache_dir) {
  struct stat st;
  if (::stat(generation_path(cache_dir).c_str(), &st) == 0) return st.st_mtim;
  return timespec{86400, 0};  // 1970-01-02: older than any object; ninja reads mtime 0 as "missing"
}

} // namespace

std::string stamp_path(const std::string& cache_dir, const Hash128& key) {
  return join_path(stamps_dir(cache_dir), to_hex(key));
}

std::string stamp_text(const std::optional<std::string>& record) {
  if (!record) return "ciq no entry\n";
  // What the lookup acts on: the kind (a module entry answers for its
  // kernels), the controls, and the GPU model CIQ_GPU_POLICY compares; not
  // when or by what the entry was made, so storing the same controls again
  // rebuilds nothing.
  std::string applied = *record;
  if (auto r = parse_record(*record, "stamp"))
    applied = std::string(kind_name(r->kind)) + "\n" + spaces::control_set_digest(r->controls) + "\n" + tuned_on(*r).gpu_model;
  return "ciq entry " + to_hex(xxh128(applied)) + "\n";
}

std::string current_stamp_text(const Store& store, std::string_view raw_key) {
  auto record = store.get(Table::records, raw_key);
  if (!record || !*record) return stamp_text(std::nullopt);
  auto mark = store.get(Table::quarantine, raw_key);
  if (!mark || *mark) return stamp_text(std::nullopt);
  return stamp_text(*record);
}

std::optional<std::string> stamp_for_lookup(const std::string& cache_dir, const Hash128& key, const std::string& text,
                                            const std::string& current) {
  std::string path = stamp_path(cache_dir, key);
  if (auto held = read_stamp(path)) {
    if (*held == text) return path;
    return write_stamp(path, current) ? std::optional<std::string>(path) : std::nullopt;
  }
  if (!is_directory(stamps_dir(cache_dir)))
    if (auto made = make_own_directory(stamps_dir(cache_dir)); !made) {
      spdlog::debug("no build stamps: {}", made.error().message);
      return std::nullopt;
    }
  return write_stamp(path, text, first_stamp_time(cache_dir)) ? std::optional<std::string>(path) : std::nullopt;
}

void refresh_stamps(const Store& store, const std::vector<std::string>& raw_keys) {
  std::string dir = stamps_dir(dir_name(store.directory()));
  if (raw_keys.empty() || !is_directory(dir)) return;
  for (const auto& raw : raw_keys) {
    if (raw.size() != 16) continue;  // a blob's key: no stamp
    std::string path = join_path(dir, bytes_to_hex(raw));
    auto held = read_stamp(path);
    if (!held) continue;  // never compiled with dependencies asked for
    std::string now = current_stamp_text(store, raw);
    if (*held == now) continue;
    if (!write_stamp(path, now) && ::unlink(path.c_str()) != 0)
      spdlog::warn("cannot update the build stamp {}: builds may keep objects compiled for the entry before", path);
  }
}

} // namespace ciq::cache
