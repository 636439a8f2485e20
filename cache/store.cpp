#include "cache/store.h"

#include "cache/generation.h"
#include "cache/stamps.h"

#include "cache/writer_lock.h"
#include "utils/files.h"

#include <chrono>
#include <lmdb.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <thread>

namespace ciq::cache {

namespace {

constexpr int k_open_attempts = 20;

MDB_env* env_of(void* p) { return static_cast<MDB_env*>(p); }

Error lmdb_error(const std::string& what, int rc) {
  return make_error("lmdb", what + ": " + mdb_strerror(rc));
}

MDB_val val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }
std::string_view view(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

// Errors a concurrent creator can cause for a short while.
bool transient(int rc, const std::string& data_file) {
  if (rc == EAGAIN || rc == EBUSY || rc == MDB_READERS_FULL) return true;
  struct stat st;
  bool young = ::stat(data_file.c_str(), &st) != 0 || st.st_size < 2 * 4096;
  return young && (rc == MDB_INVALID || rc == ENOENT || rc == MDB_CORRUPTED);
}

// LMDB opens its two files with plain open(): a FIFO planted there blocked
// it for ever, and /dev/zero looked like a database being created (retried
// for a second). Anything but a regular file (or none yet) is refused.
Result<void> regular_or_absent(const std::string& db_dir) {
  for (const char* name : {"data.mdb", "lock.mdb"}) {
    std::string path = join_path(db_dir, name);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) return make_error("io", "'" + path + "' is not a regular file; the cache is unusable");
  }
  return {};
}

Result<MDB_env*> open_env(const std::string& db_dir, bool writable, std::size_t map_size) {
  std::string data_file = join_path(db_dir, "data.mdb");
  if (auto usable = regular_or_absent(db_dir); !usable) return usable.error();
  int rc = 0;
  for (int attempt = 0; attempt < k_open_attempts; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(5 * attempt));
    MDB_env* env = nullptr;
    if ((rc = mdb_env_create(&env)) != 0) return lmdb_error("cannot create an LMDB environment", rc);
    mdb_env_set_maxdbs(env, 8);
    mdb_env_set_maxreaders(env, 1022);
    if (writable) mdb_env_set_mapsize(env, map_size); // virtual; the file grows as used
    rc = mdb_env_open(env, db_dir.c_str(), (writable ? 0 : MDB_RDONLY) | MDB_NOTLS, 0644);
    if (rc == 0) {
      int dead = 0;
      mdb_reader_check(env, &dead);
      if (dead) spdlog::debug("cleared {} stale reader slot(s) in {}", dead, db_dir);
      return env;
    }
    mdb_env_close(env);
    if (!transient(rc, data_file)) break;
  }
  return lmdb_error("cannot open the cache database in '" + db_dir + "'", rc);
}

// A read transaction; retries once after another process grew the map.
Result<MDB_txn*> begin_read(MDB_env* env) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);
  if (rc == MDB_MAP_RESIZED) {
    mdb_env_set_mapsize(env, 0);
    rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);
  }
  if (rc != 0) return lmdb_error("cannot start a read transaction", rc);
  return txn;
}

// Opens a table in `txn`; std::nullopt when it does not exist yet.
Result<std::optional<MDB_dbi>> table_in(MDB_txn* txn, Table table, bool create) {
  MDB_dbi dbi;
  int rc = mdb_dbi_open(txn, std::string(table_name(table)).c_str(), create ? MDB_CREATE : 0, &dbi);
  if (rc == MDB_NOTFOUND) return std::optional<MDB_dbi>{};
  if (rc != 0) return lmdb_error("cannot open table " + std::string(table_name(table)), rc);
  return std::optional<MDB_dbi>{dbi};
}

// One write transaction over any tables: `body` gets the transaction and
// a lookup of each table's handle (created when missing); grows the map and
// retries when it fills.
// Only the holder of the database's writer lock (cache/writer_lock.h)
// begins a write transaction; `wait` bounds the wait for it.
using TableOf = std::function<Result<MDB_dbi>(Table)>;
struct Writing {
  MDB_env* env;
  const std::string& db_dir;
  std::chrono::milliseconds wait;
};
Result<void> write_tables(const Writing& w, const std::function<int(MDB_txn*, const TableOf&)>& body);

// The same over one table.
Result<void> write(const Writing& w, Table table, const std::function<int(MDB_txn*, MDB_dbi)>& body) {
  return write_tables(w, [&](MDB_txn* txn, const TableOf& table_of) {
    auto dbi = table_of(table);
    return dbi ? body(txn, *dbi) : EINVAL;
  });
}

Result<void> write_tables(const Writing& w, const std::function<int(MDB_txn*, const TableOf&)>& body) {
  auto lock = WriterLock::acquire(w.db_dir, w.wait);
  if (!lock) return lock.error();
  MDB_env* env = w.env;
  for (int attempt = 0; attempt < 8; ++attempt) {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env, nullptr, 0, &txn);
    if (rc == MDB_MAP_RESIZED) {
      mdb_env_set_mapsize(env, 0);
      rc = mdb_txn_begin(env, nullptr, 0, &txn);
    }
    if (rc != 0) return lmdb_error("cannot start a write transaction", rc);
    std::optional<Error> failed;
    TableOf table_of = [&](Table t) -> Result<MDB_dbi> {
      auto dbi = table_in(txn, t, true);
      if (!dbi) {
        failed = dbi.error();
        return dbi.error();
      }
      return **dbi;
    };
    rc = body(txn, table_of);
    if (failed) {
      mdb_txn_abort(txn);
      return *failed;
    }
    if (rc == 0) rc = mdb_txn_commit(txn);
    else mdb_txn_abort(txn);
    if (rc == MDB_MAP_FULL) {
      MDB_envinfo info;
      mdb_env_info(env, &info);
      std::size_t bigger = info.me_mapsize * 2;
      spdlog::debug("cache map full; growing it to {} bytes", bigger);
      if ((rc = mdb_env_set_mapsize(env, bigger)) != 0) return lmdb_error("cannot grow the cache map", rc);
      continue;
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return lmdb_error("cannot write to the cache", rc);
    return {};
  }
  return make_error("lmdb", "the cache map kept filling up while growing it");
}

} // namespace

std::string_view table_name(Table table) {
  switch (table) {
  case Table::records: return "records";
  case Table::blobs: return "blobs";
  case Table::quarantine: return "quarantine";
  }
  return "?";
}

bool Store::exists(const std::string& cache_dir) { return path_exists(join_path(join_path(cache_dir, "db"), "data.mdb")); }

Result<std::optional<Store>> Store::open_for_reading(const std::string& cache_dir) {
  std::string db_dir = join_path(cache_dir, "db");
  if (!exists(cache_dir)) return std::optional<Store>{};
  // Another user's entries are not this user's cache (utils/safe_open.h):
  // an error, so that the wrappers run the plain tool and ciq-cache says why.
  if (auto own = check_own_directory(db_dir); !own) return own.error();
  auto env = open_env(db_dir, false, 0);
  if (!env) return env.error();
  return std::optional<Store>{Store(*env, db_dir, false)};
}

Result<Store> Store::open_for_writing(const std::string& cache_dir, std::chrono::milliseconds write_wait,
                                      std::size_t map_size) {
  std::string db_dir = join_path(cache_dir, "db");
  if (auto r = make_own_directory(db_dir); !r) return r.error();
  auto env = open_env(db_dir, true, map_size);
  if (!env) return env.error();
  Store store(*env, db_dir, true);
  store.write_wait_ = write_wait;
  auto created = write_tables(Writing{*env, store.dir_, write_wait}, [](MDB_txn*, const TableOf& table_of) {
    for (Table t : {Table::records, Table::blobs, Table::quarantine})
      if (!table_of(t)) return EINVAL;
    return 0;
  });
  if (!created) return created.error();
  return store;
}

Store::Store(Store&& other) noexcept
    : env_(other.env_), dir_(std::move(other.dir_)), writable_(other.writable_), write_wait_(other.write_wait_) {
  other.env_ = nullptr;
}

Store::~Store() {
  if (env_) mdb_env_close(env_of(env_));
}

Result<std::optional<std::string>> Store::get(Table table, std::string_view key) const {
  auto txn = begin_read(env_of(env_));
  if (!txn) return txn.error();
  std::optional<std::string> out;
  auto dbi = table_in(*txn, table, false);
  if (dbi && *dbi) {
    MDB_val k = val(key), v;
    int rc = mdb_get(*txn, **dbi, &k, &v);
    if (rc == 0) out = std::string(view(v));
    else if (rc != MDB_NOTFOUND) {
      mdb_txn_abort(*txn);
      return lmdb_error("cannot read from the cache", rc);
    }
  }
  mdb_txn_abort(*txn);
  if (!dbi) return dbi.error();
  return out;
}

void Store::after_commit(const std::vector<std::string>& raw_keys) {
  refresh_stamps(*this, raw_keys);
  new_generation(dir_name(dir_));
}

Result<void> Store::put(Table table, std::string_view key, std::string_view value) {
  if (!writable_) return make_error("lmdb", "the cache was opened read-only");
  auto r = write(Writing{env_of(env_), dir_, write_wait_}, table, [&](MDB_txn* txn, MDB_dbi dbi) {
    MDB_val k = val(key), v = val(value);
    return mdb_put(txn, dbi, &k, &v, 0);
  });
  if (r && table != Table::blobs) after_commit({std::string(key)});
  return r;
}

Result<void> Store::apply(const std::vector<Change>& changes) {
  if (!writable_) return make_error("lmdb", "the cache was opened read-only");
  auto r = write_tables(Writing{env_of(env_), dir_, write_wait_}, [&](MDB_txn* txn, const TableOf& table_of) {
    for (const auto& c : changes) {
      auto dbi = table_of(c.table);
      if (!dbi) return EINVAL;
      MDB_val k = val(c.key);
      int rc;
      if (c.value) {
        MDB_val v = val(*c.value);
        rc = mdb_put(txn, *dbi, &k, &v, 0);
      } else {
        rc = mdb_del(txn, *dbi, &k, nullptr);
        if (rc == MDB_NOTFOUND) rc = 0;
      }
      if (rc != 0) return rc;
    }
    return 0;
  });
  if (!r) return r;
  std::vector<std::string> keys;
  for (const auto& c : changes)
    if (c.table != Table::blobs) keys.push_back(c.key);
  if (!keys.empty()) after_commit(keys);
  return r;
}

Result<void> Store::for_each(Table table,
                             const std::function<bool(std::string_view, std::string_view)>& visit) const {
  auto txn = begin_read(env_of(env_));
  if (!txn) return txn.error();
  auto dbi = table_in(*txn, table, false);
  if (!dbi || !*dbi) {
    mdb_txn_abort(*txn);
    if (!dbi) return dbi.error();
    return {};
  }
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(*txn, **dbi, &cursor);
  if (rc != 0) {
    mdb_txn_abort(*txn);
    return lmdb_error("cannot iterate over the cache", rc);
  }
  MDB_val k, v;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
    if (!visit(view(k), view(v))) break;
  mdb_cursor_close(cursor);
  mdb_txn_abort(*txn);
  if (rc != 0 && rc != MDB_NOTFOUND) return lmdb_error("cannot iterate over the cache", rc);
  return {};
}

Result<std::size_t> Store::count(Table table) const {
  auto txn = begin_read(env_of(env_));
  if (!txn) return txn.error();
  auto dbi = table_in(*txn, table, false);
  std::size_t n = 0;
  if (dbi && *dbi) {
    MDB_stat st;
    if (mdb_stat(*txn, **dbi, &st) == 0) n = st.ms_entries;
  }
  mdb_txn_abort(*txn);
  if (!dbi) return dbi.error();
  return n;
}

std::size_t Store::file_size() const {
  struct stat st;
  return ::stat(join_path(dir_, "data.mdb").c_str(), &st) == 0 ? std::size_t(st.st_size) : 0;
}

} // namespace ciq::cache
