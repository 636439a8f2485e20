// The Redis team tier: records and ACF blobs under fixed keys in one Redis
// database, shared by a team.
//
//   ciq:1:record:<32 hex digits of the cache key>  -> record text (ciq-record/1)
//   ciq:1:blob:<64 hex digits of its sha256>       -> the blob's bytes
//
// Writers (`ciq-cache push`, `ciq-tuner run --publish`) upload local entries,
// keeping a remote record whose evidence is better. Readers (the wrappers,
// with CIQ_REMOTE) validate what they fetch exactly like a local entry and
// copy it into the local cache.
#pragma once

#include "cache/store.h"
#include "utils/hash.h"
#include "utils/redis.h"
#include "utils/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::cache {

std::string remote_record_key(std::string_view hex_key);
std::string remote_blob_key(std::string_view sha256_hex);

struct RemoteConfig {
  RedisUrl url;
  RedisTimeouts timeouts;
};

/// From a URL and a timeout spec "MS" (both steps) or "CONNECT_MS,IO_MS"
/// (empty: the defaults, 100 and 250 ms).
Result<RemoteConfig> remote_config(std::string_view url, std::string_view timeout_spec);

struct PushReport {
  bool cache_found = true; // false: there is no local cache, nothing was sent
  int pushed = 0;       // records written
  int kept_remote = 0;  // the remote record was better
  int same = 0;         // the remote record was identical
  int blobs = 0;        // blobs written
  /// Local records not sent, each with why: the wrappers would refuse them
  /// (check_entry with their policy: an `unsafe` knob without
  /// CIQ_ALLOW_UNSAFE=1, a knob outside its space, a missing ACF blob).
  std::vector<Error> refused;
};

/// Uploads the records under `keys` (all records when empty) and the
/// ACF blobs they name. A remote record with better evidence stays; a
/// record the wrappers would refuse here is not sent (PushReport::refused).
Result<PushReport> push_records(const Store& store, const RemoteConfig& remote, const std::vector<Hash128>& keys);

/// `ciq-cache push` and `ciq-tuner --publish`: push_records from the cache
/// at `cache_dir` to `url`, with upload timeouts (CIQ_REMOTE_TIMEOUT_MS,
/// raised to at least 2 s to connect and 5 s a reply: nobody waits on a
/// compile, and blobs may be large).
Result<PushReport> push_cache(const std::string& cache_dir, std::string_view url, const std::vector<Hash128>& keys);

} // namespace ciq::cache
