// The LMDB store under <cache dir>/db: tables of records (by key), ACF blobs
// (by sha256) and quarantine marks (by key). Readers open it read-only and
// use short transactions; writers grow the map when it fills. A store that
// is being created by another process at the same moment is retried, not
// reported. LMDB must live on a local disk (never NFS).
#pragma once

#include "cache/writer_lock.h"
#include "utils/result.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ciq::cache {

enum class Table { records, blobs, quarantine };

/// One change of a batch: put `value` under `key`, or remove `key` when
/// `value` is empty (absent keys are fine).
struct Change {
  Table table;
  std::string key;
  std::optional<std::string> value;
};

class Store {
public:
  /// Whether `cache_dir` holds a store (without opening it).
  static bool exists(const std::string& cache_dir);
  /// Opens an existing store read-only; std::nullopt when there is none
  /// (a miss, not an error). Errors mean the store exists but is unusable.
  static Result<std::optional<Store>> open_for_reading(const std::string& cache_dir);
  /// Opens (creating it and its tables when needed) for reading and writing.
  /// Each write first waits at most `write_wait` for another process's
  /// write to end (cache/writer_lock.h), then fails with code "busy".
  /// `map_size` is the initial virtual size; writes grow it as needed.
  static Result<Store> open_for_writing(const std::string& cache_dir,
                                        std::chrono::milliseconds write_wait = k_patient_write_wait,
                                        std::size_t map_size = std::size_t(1) << 30);

  Store(Store&& other) noexcept;
  Store& operator=(Store&&) = delete;
  Store(const Store&) = delete;
  ~Store();

  /// Value under `key`; std::nullopt on a miss.
  Result<std::optional<std::string>> get(Table table, std::string_view key) const;
  Result<void> put(Table table, std::string_view key, std::string_view value);
  /// Puts and removes in any tables, in one transaction (all or nothing).
  Result<void> apply(const std::vector<Change>& changes);
  /// Calls `visit` for every entry in key order inside one read transaction;
  /// stops early when it returns false.
  Result<void> for_each(Table table,
                        const std::function<bool(std::string_view key, std::string_view value)>& visit) const;
  /// Number of entries in a table.
  Result<std::size_t> count(Table table) const;
  /// Size of the data file in bytes.
  std::size_t file_size() const;

  const std::string& directory() const { return dir_; }

private:
  /// After a committed write to the records or quarantine tables under
  /// `raw_keys`: the keys' build stamps (cache/stamps.h) and the cache's
  /// generation (cache/generation.h) follow it.
  void after_commit(const std::vector<std::string>& raw_keys);
  Store(void* env, std::string dir, bool writable) : env_(env), dir_(std::move(dir)), writable_(writable) {}
  void* env_;
  std::string dir_;
  bool writable_;
  std::chrono::milliseconds write_wait_ = k_patient_write_wait;
};

std::string_view table_name(Table table);

} // namespace ciq::cache
