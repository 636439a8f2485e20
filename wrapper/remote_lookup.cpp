#include "wrapper/remote_lookup.h"

#include "cache/pack.h"
#include "cache/record.h"
#include "cache/store.h"
#include "utils/hash.h"

#include <chrono>
#include <spdlog/spdlog.h>

namespace ciq::wrapper {

namespace {

// Why `text` fetched for `hex` (a record of `kind`, for `kernel`) cannot be
// used; "" if it can.
std::string check_record(const std::string& text, const std::string& hex, const std::string& kind,
                         const std::string& kernel, const spaces::Space& space, const spaces::Policy& policy,
                         cache::Record& out) {
  auto record = cache::parse_record(text, "remote record " + hex);
  if (!record) return record.error().message;
  if (record->kind != kind || (kind == "kernel" && record->kernel != kernel))
    return "remote record " + hex + " is not the " + kind + " record it is filed under";
  if (record->controls.space.empty()) record->controls.space = space.name;
  if (record->controls.space != space.name)
    return "remote record " + hex + " is for space '" + record->controls.space + "', the running ptxas uses '" + space.name + "'";
  if (auto valid = spaces::validate_controls(space, record->controls, policy); !valid)
    return "remote record " + hex + ": " + valid.error().message;
  out = std::move(*record);
  return "";
}

struct Wanted {
  Hash128 key;
  std::string kind, kernel;
};

// Fetches the records `wanted` names, in order (a module record ends the
// list: it answers for the module), checks each, and copies the usable
// ones into the local cache.
Result<RemoteFetch> fetch_records(const cache::RemoteConfig& remote, const std::vector<Wanted>& wanted,
                                  const spaces::Space& space, const spaces::Policy& policy, const std::string& cache_dir) {
  // The whole lookup, not just each reply, is bounded: connect plus two
  // reply timeouts, however many kernels the module has, name resolution,
  // AUTH, SELECT and ACF blobs included.
  RedisTimeouts timeouts = remote.timeouts;
  timeouts.total_ms = timeouts.connect_ms + 2 * timeouts.io_ms;
  auto client = RedisClient::connect(remote.url, timeouts);
  if (!client) return client.error();
  RemoteFetch fetch;
  std::vector<std::pair<std::string, std::string>> records, blobs;
  for (const auto& w : wanted) {
    std::string hex = to_hex(w.key);
    auto text = client->get(cache::remote_record_key(hex), cache::k_max_record_bytes);
    if (!text) return text.error();
    if (!*text) continue;
    cache::Record record;
    if (auto why = check_record(**text, hex, w.kind, w.kernel, space, policy, record); !why.empty()) {
      spdlog::warn("refused an entry from {}:{}: {}", remote.url.host, remote.url.port, why);
      ++fetch.refused;
      continue;
    }
    if (record.controls.acf) {
      const std::string& digest = *record.controls.acf;
      auto blob = client->get(cache::remote_blob_key(digest), cache::k_max_blob_bytes);
      if (!blob) return blob.error();
      if (!*blob || to_hex(sha256(**blob)) != digest) {
        spdlog::warn("refused remote record {}: its ACF {} is {}", hex, digest.substr(0, 12),
                     *blob ? "damaged (sha256 mismatch)" : "missing");
        ++fetch.refused;
        continue;
      }
      blobs.emplace_back(hex_to_bytes(digest, 32).value_or(""), std::move(**blob));
    }
    records.emplace_back(digest_bytes(w.key), std::move(**text));
    // A module record answers for the whole module (lookup's order too).
    if (w.kind == "module") break;
  }
  if (records.empty()) return fetch;
  auto store = cache::Store::open_for_writing(cache_dir);
  if (!store) return store.error();
  if (!blobs.empty())
    if (auto put = store->put_many(cache::Table::blobs, blobs); !put) return put.error();
  if (auto put = store->put_many(cache::Table::records, records); !put) return put.error();
  fetch.copied = int(records.size());
  return fetch;
}

} // namespace

Result<RemoteFetch> fetch_remote(const cache::RemoteConfig& remote, const cache::PtxModule& module,
                                 const cache::KeyContext& context, const spaces::Space& space,
                                 const spaces::Policy& policy, const std::string& cache_dir) {
  std::vector<Wanted> wanted{{cache::module_key(module, context), "module", ""}};
  for (const auto& kernel : module.kernel_names()) wanted.push_back({cache::kernel_key(module, kernel, context), "kernel", kernel});
  return fetch_records(remote, wanted, space, policy, cache_dir);
}

Result<RemoteFetch> fetch_remote_unit(const cache::RemoteConfig& remote, const Hash128& unit_key, const spaces::Space& space,
                                      const spaces::Policy& policy, const std::string& cache_dir) {
  return fetch_records(remote, {{unit_key, "unit", ""}}, space, policy, cache_dir);
}

} // namespace ciq::wrapper
