#include "wrapper/pack_index.h"

#include "cache/pack.h"
#include "cache/record.h"
#include "utils/files.h"
#include "utils/hash.h"

#include <cstdio>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

// Keys and digests were checked by parse_pack.
std::string raw(const std::string& hex, std::size_t size) { return hex_to_bytes(hex, size).value_or(""); }

// Parses `pack_path` into a fresh store at `dir` (built aside, then renamed
// into place so concurrent compiles never see half an index).
Result<void> build_index(const std::string& pack_path, const std::string& dir) {
  auto text = read_file(pack_path);
  if (!text) return text.error();
  auto pack = cache::parse_pack(*text, pack_path);
  if (!pack) return pack.error();
  std::string aside = dir + ".building." + std::to_string(::getpid());
  remove_tree(aside);
  {
    auto store = cache::Store::open_for_writing(aside);
    if (!store) return store.error();
    std::vector<std::pair<std::string, std::string>> records, blobs;
    for (const auto& [key, record] : pack->entries) {
      if (!cache::parse_record(record, "entry " + key)) {
        spdlog::warn("{}: skipping unreadable entry {}", pack_path, key);
        continue;
      }
      records.emplace_back(raw(key, 16), record);
    }
    for (const auto& [digest, bytes] : pack->blobs) blobs.emplace_back(raw(digest, 32), bytes);
    if (auto r = store->put_many(cache::Table::records, records); !r) return r;
    if (auto r = store->put_many(cache::Table::blobs, blobs); !r) return r;
  }
  if (std::rename(aside.c_str(), dir.c_str()) != 0) {
    remove_tree(aside); // another compile published the same index first
    if (!is_directory(dir)) return make_error("io", "cannot publish the index of " + pack_path);
  }
  spdlog::debug("indexed {} ({} entries)", pack_path, pack->entries.size());
  return {};
}

} // namespace

Result<PackIndex> open_pack_index(const std::string& cache_dir, const std::string& pack_path) {
  auto fingerprint = file_fingerprint(pack_path);
  if (!fingerprint) return make_error("io", "cannot stat pack '" + pack_path + "'");
  std::string id = to_hex(xxh128(real_path(pack_path).value_or(pack_path) + "\n" + *fingerprint));
  std::string dir = join_path(join_path(cache_dir, "packs"), id);
  if (!cache::Store::exists(dir)) {
    if (auto made = make_dirs(join_path(cache_dir, "packs")); !made) return made.error();
    if (auto built = build_index(pack_path, dir); !built) return built.error();
  }
  auto store = cache::Store::open_for_reading(dir);
  if (!store) return store.error();
  if (!*store) return make_error("io", "the index of " + pack_path + " is missing");
  return PackIndex{dir, std::move(**store)};
}

} // namespace ciq::wrapper
