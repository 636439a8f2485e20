// A small Redis client (RESP2 over TCP, hiredis's protocol code) for ciq's team tier: GET and SET of
// records and blobs, with a deadline on every step. Written for the
// wrappers' read path: connect and each reply are bounded by short
// timeouts, replies are size-limited, and any surprise is an error (the
// caller then compiles as if Redis did not exist).
//
// URL: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]   (default port 6379, db 0;
// the password ends at the URL's last '@', so it may hold '/', '@' and ':';
// its %XX escapes are decoded; the user name is ignored)
#pragma once

#include "utils/result.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisReader;

namespace ciq {

struct RedisUrl {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string password;
};

Result<RedisUrl> parse_redis_url(std::string_view url);

/// `text` with the password of every URL in it (`scheme://[user]:PASS@host`,
/// `scheme://PASS@host`) replaced by `***`: for anything printed, logged or
/// saved. A password ends at the last '@' before the next URL or the end of
/// `text` (as parse_redis_url reads it), so '/', '@', ':', spaces and %XX
/// escapes in it are hidden too. The one masker of URLs in ciq.
std::string redact_secrets(std::string_view text);

struct RedisTimeouts {
  int connect_ms = 100; // name resolution and TCP connect
  int io_ms = 250;      // each command's whole round trip
  int total_ms = 0;     // everything from connect() on (AUTH, SELECT, every command); 0 = no limit
};

class RedisClient {
public:
  /// Connects, authenticates and selects the database. A host name that is
  /// not a numeric address is resolved within connect_ms too (a resolver
  /// that does not answer in time is abandoned, not waited for).
  static Result<RedisClient> connect(const RedisUrl& url, RedisTimeouts timeouts);
  /// A client over a socket that is already connected (and takes it over):
  /// for tests and fuzzing, which talk to it through a socketpair.
  static RedisClient over_socket(int fd, RedisTimeouts timeouts);

  RedisClient(RedisClient&& other) noexcept;
  RedisClient& operator=(RedisClient&& other) noexcept;
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;
  ~RedisClient();

  /// The value of `key`, std::nullopt when absent. Values over
  /// `max_bytes` are refused (an error), not read.
  Result<std::optional<std::string>> get(std::string_view key, std::size_t max_bytes);
  Result<void> set(std::string_view key, std::string_view value);

  /// Compare-and-set: WATCH a key, read it, then set_if_unchanged() sets it
  /// only if nobody changed it since the WATCH (false: someone did; nothing
  /// was set). unwatch() when deciding not to set after all.
  Result<void> watch(std::string_view key);
  Result<void> unwatch();
  Result<bool> set_if_unchanged(std::string_view key, std::string_view value);

private:
  struct Reply {
    char type = 0; // '+', '-', ':', '$', '*', or 'n' (nil)
    std::optional<std::string> text;
    std::vector<std::string> elements; // '*': each element's type and text ("+OK")
  };
  struct ReaderFree {
    void operator()(redisReader* r) const;
  };
  RedisClient(int fd, RedisTimeouts timeouts, long long end_ms) : fd_(fd), timeouts_(timeouts), end_ms_(end_ms) {}
  Result<Reply> command(const std::vector<std::string_view>& args, std::size_t max_bytes);
  Result<Reply> read_reply(long long deadline_ms, std::size_t max_bytes);
  Result<void> send_all(std::string_view bytes, long long deadline_ms);

  int fd_ = -1;
  RedisTimeouts timeouts_;
  long long end_ms_ = 0; // steady-clock ms after which nothing more is attempted (total_ms); 0 = none
  std::unique_ptr<redisReader, ReaderFree> reader_; // hiredis's RESP parser; holds bytes read ahead
};

} // namespace ciq
