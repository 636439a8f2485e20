#include "cache/remote.h"

#include "cache/pack.h"
#include "cache/record.h"
#include "utils/config.h"
#include "utils/hash.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdlib>

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

Result<PushReport> push_cache(const std::string& cache_dir, std::string_view url, const std::vector<std::string>& raw_keys) {
  auto remote = remote_config(url, env_or_empty("CIQ_REMOTE_TIMEOUT_MS"));
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
  return push_records(**store, *remote, raw_keys);
}

Result<PushReport> push_records(const Store& store, const RemoteConfig& remote, const std::vector<std::string>& raw_keys) {
  std::vector<std::pair<std::string, std::string>> records; // hex key -> text
  if (raw_keys.empty()) {
    auto walked = store.for_each(Table::records, [&](std::string_view key, std::string_view value) {
      records.emplace_back(bytes_to_hex(key), std::string(value));
      return true;
    });
    if (!walked) return walked.error();
  } else {
    for (const auto& key : raw_keys) {
      auto text = store.get(Table::records, key);
      if (!text) return text.error();
      if (*text) records.emplace_back(bytes_to_hex(key), **text);
    }
  }

  auto client = RedisClient::connect(remote.url, remote.timeouts);
  if (!client) return client.error();
  PushReport report;
  for (const auto& [hex, text] : records) {
    auto mine = parse_record(text, "local record " + hex);
    if (!mine) continue; // unreadable locally: nothing worth sharing
    auto theirs_text = client->get(remote_record_key(hex), k_max_record_bytes);
    if (!theirs_text) return theirs_text.error();
    if (*theirs_text) {
      if (**theirs_text == text) {
        ++report.same;
        continue;
      }
      auto theirs = parse_record(**theirs_text, "remote record " + hex);
      if (theirs && !(record_merit(*mine) > record_merit(*theirs))) {
        ++report.kept_remote;
        continue;
      }
    }
    if (mine->controls.acf) {
      const std::string& digest = *mine->controls.acf;
      auto blob = store.get(Table::blobs, hex_to_bytes(digest, 32).value_or(""));
      if (!blob) return blob.error();
      if (*blob) {
        if (auto s = client->set(remote_blob_key(digest), **blob); !s) return s.error();
        ++report.blobs;
      }
    }
    if (auto s = client->set(remote_record_key(hex), text); !s) return s.error();
    ++report.pushed;
  }
  return report;
}

} // namespace ciq::cache
