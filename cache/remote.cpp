#include "cache/remote.h"

#include "cache/entries.h"

#include "cache/pack.h"
#include "cache/record.h"
#include "utils/config.h"
#include "utils/hash.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

namespace ciq::cache {

std::string remote_record_key(std::string_view hex_key) { return "ciq:1:record:" + std::string(hex_key); }
std::string remote_blob_key(std::string_view sha256_hex) { return "ciq:1:blob:" + std::string(sha256_hex); }

Result<RemoteConfig> remote_config(std::string_view url, std::string_view timeout_spec) {
  RemoteConfig config;
  auto parsed = parse_redis_url(url);
  if (!parsed) return parsed.error();
  config.url = std::move(*parsed);
  if (trim(timeout_spec).empty()) return config;
  auto parts = split(trim(timeout_spec), ',');
  auto number = [](std::string_view s, int& out) {
    std::string text(trim(s));
    char* end = nullptr;
    long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < 1 || v > 60000) return false;
    out = int(v);
    return true;
  };
  bool ok = parts.size() <= 2 && number(parts[0], config.timeouts.connect_ms);
  if (ok) ok = number(parts.size() == 2 ? parts[1] : parts[0], config.timeouts.io_ms);
  if (!ok)
    return make_error("invalid", "bad CIQ_REMOTE_TIMEOUT_MS '" + std::string(timeout_spec) +
                                     "': expected MS or CONNECT_MS,IO_MS (1..60000)");
  return config;
}

Result<PushReport> push_cache(const std::string& cache_dir, std::string_view url, const std::vector<Hash128>& keys) {
  auto remote = remote_config(url, env(Env::remote_timeout_ms));
  if (!remote) return remote.error();
  remote->timeouts.connect_ms = std::max(remote->timeouts.connect_ms, 2000);
  remote->timeouts.io_ms = std::max(remote->timeouts.io_ms, 5000);
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  if (!*store) {
    PushReport none;
    none.cache_found = false;
    return none;
  }
  return push_records(**store, *remote, keys);
}

namespace {

enum class PushOutcome { pushed, same, kept_remote };

// Compare and set: WATCH the key, read what is there, and set only if
// nobody changed it in between; if someone did, compare again with theirs.
// Two pushers thus never replace a better entry with a worse one.
Result<PushOutcome> push_one(RedisClient& client, const std::string& key, const std::string& text, const Record& mine,
                             const std::string& hex, const std::function<Result<void>()>& before_set) {
  bool blob_sent = false;
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (auto w = client.watch(key); !w) return w.error();
    auto theirs_text = client.get(key, k_max_record_bytes);
    if (!theirs_text) return theirs_text.error();
    std::optional<PushOutcome> keep;
    if (*theirs_text && **theirs_text == text) keep = PushOutcome::same;
    else if (*theirs_text && !replaces(mine, **theirs_text)) keep = PushOutcome::kept_remote;
    if (keep) {
      if (auto u = client.unwatch(); !u) return u.error();
      return *keep;
    }
    if (!blob_sent) { // a SET of another key does not disturb the WATCH
      if (auto b = before_set(); !b) return b.error();
      blob_sent = true;
    }
    auto set = client.set_if_unchanged(key, text);
    if (!set) return set.error();
    if (*set) return PushOutcome::pushed;
  }
  return make_error("redis", "the remote entry " + hex + " kept changing while pushing; try again");
}

} // namespace

Result<PushReport> push_records(const Store& store, const RemoteConfig& remote, const std::vector<Hash128>& keys) {
  std::vector<std::pair<std::string, std::string>> records; // hex key -> text
  if (keys.empty()) {
    auto walked = store.for_each(Table::records, [&](std::string_view key, std::string_view value) {
      records.emplace_back(bytes_to_hex(key), std::string(value));
      return true;
    });
    if (!walked) return walked.error();
  } else {
    for (const auto& key : keys) {
      auto text = store.get(Table::records, digest_bytes(key));
      if (!text) return text.error();
      if (*text) records.emplace_back(to_hex(key), **text);
    }
  }

  auto client = RedisClient::connect(remote.url, remote.timeouts);
  if (!client) return client.error();
  PushReport report;
  // What is shared must pass the rule every reader applies (the wrappers'
  // own policy, CIQ_ALLOW_UNSAFE included): a team server is no way round it.
  SpaceShelf shelf(spaces_directory());
  EntryRules rules;
  rules.shelf = &shelf;
  rules.policy.allow_unsafe = unsafe_allowed();
  rules.has_blob = [&](const Sha256& digest) {
    auto blob = store.get(Table::blobs, digest_bytes(digest));
    return blob && *blob;
  };
  for (const auto& [hex, text] : records) {
    Hash128 key{};
    if (!from_hex(hex, key.data(), key.size())) continue;
    auto mine = check_entry(text, key, rules);
    if (!mine) {
      report.refused.push_back(mine.error());
      continue;
    }
    // The ACF blob goes first (content-addressed: there is no race to lose).
    auto push_blob = [&]() -> Result<void> {
      if (!mine->controls.acf) return {};
      const Sha256& digest = *mine->controls.acf;
      auto blob = store.get(Table::blobs, digest_bytes(digest));
      if (!blob) return blob.error();
      if (!*blob) return {};
      if (auto s = client->set(remote_blob_key(to_hex(digest)), **blob); !s) return s.error();
      ++report.blobs;
      return {};
    };
    auto outcome = push_one(*client, remote_record_key(hex), text, *mine, hex, push_blob);
    if (!outcome) return outcome.error();
    if (*outcome == PushOutcome::same) ++report.same;
    else if (*outcome == PushOutcome::kept_remote) ++report.kept_remote;
    else ++report.pushed;
  }
  return report;
}

} // namespace ciq::cache
