// One writer at a time, and never an unbounded wait for it. LMDB serialises
// writers with a mutex in lock.mdb that cannot be tried with a time limit:
// a writer stopped mid-transaction (a `ciq-cache put` under SIGSTOP) left
// every later writer, a compile's quarantine mark included, blocked for
// ever. So every ciq writer first takes this advisory lock beside the
// database (flock on <db>/writer.lock, which records the holder's pid and
// program), trying for a bounded time; only its holder begins an LMDB write
// transaction. Writers outside ciq (mdb_load) do not take it: the wrappers'
// watchdog still bounds those.
#pragma once

#include "utils/result.h"

#include <chrono>
#include <string>

namespace ciq::cache {

/// A compile's writes (a quarantine mark, a read-through copy) are never
/// worth waiting for; people's commands (ciq-cache, the tuner) wait longer
/// and say whom they wait for.
inline constexpr std::chrono::milliseconds k_brief_write_wait{100};
inline constexpr std::chrono::milliseconds k_patient_write_wait{10000};

class WriterLock {
public:
  /// Takes the lock of the database in `db_dir`, waiting at most `wait`
  /// (past a second, saying on the log whom it waits for). Fails with
  /// code "busy" naming the holder when the wait runs out, "io" when the
  /// lock file cannot be used (not a regular file, unwritable).
  static Result<WriterLock> acquire(const std::string& db_dir, std::chrono::milliseconds wait);

  WriterLock(WriterLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  WriterLock& operator=(WriterLock&&) = delete;
  WriterLock(const WriterLock&) = delete;
  ~WriterLock();

private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_;
};

} // namespace ciq::cache
