#include "cache/remote.h"
#include "utils/redis.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace ciq;

TEST(RedisUrl, parts_and_defaults) {
  auto u = parse_redis_url("redis://cache.example:6380/3");
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(u->host, "cache.example");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->db, 3);
  auto d = parse_redis_url("redis://10.0.0.5");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 6379);
  EXPECT_EQ(d->db, 0);
  auto p = parse_redis_url("redis://:s3cret@h:1/0");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->password, "s3cret");
  auto slash = parse_redis_url("redis://:p/w@d@h:2/5");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(slash->password, "p/w@d");
  EXPECT_EQ(slash->host, "h");
  EXPECT_EQ(slash->db, 5);
  auto escaped = parse_redis_url("redis://user:p%40w%2Fd%3a%zz@h");
  ASSERT_TRUE(escaped.ok());
  EXPECT_EQ(escaped->password, "p@w/d:%zz"); // %XX decoded; a '%' that starts no escape kept
  EXPECT_EQ(p->host, "h");
}

TEST(RedisUrl, bad_ones_say_why) {
  EXPECT_NE(parse_redis_url("http://h:1").error().message.find("not redis://"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis://h:0").error().message.find("port"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis://h:99999").error().message.find("port"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis://h/x").error().message.find("database"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis://:1").error().message.find("no host"), std::string::npos);
}

TEST(RedisUrl, passwords_are_never_shown) {
  EXPECT_EQ(redact_secrets("redis://:secret@host:6379/0"), "redis://:***@host:6379/0");
  EXPECT_EQ(redact_secrets("redis://user:secret@host"), "redis://user:***@host");
  EXPECT_EQ(redact_secrets("redis://secret@host/2"), "redis://***@host/2");
  EXPECT_EQ(redact_secrets("redis://host:6379/0"), "redis://host:6379/0");
  EXPECT_EQ(redact_secrets("to redis://:a@b:1 and redis://:c@d/1, done"), "to redis://:***@b:1 and redis://:***@d/1, done");
  EXPECT_EQ(redact_secrets("no url here"), "no url here");
  // Passwords holding what ends a URL's parts elsewhere: all of it is hidden.
  EXPECT_EQ(redact_secrets("redis://:pa/ss@host:1/0"), "redis://:***@host:1/0");
  EXPECT_EQ(redact_secrets("redis://:p@ss:w/rd@host/0"), "redis://:***@host/0");
  EXPECT_EQ(redact_secrets("redis://user:a:b/c@host"), "redis://user:***@host");
  EXPECT_EQ(redact_secrets("redis://:p%40s%2Fs@host:6379/0"), "redis://:***@host:6379/0");
  EXPECT_EQ(redact_secrets("redis://:my pass/word@h:1 down"), "redis://:***@h:1 down");
  EXPECT_EQ(redact_secrets("bad URL 'redis://:it's/x@h:0/0': port"), "bad URL 'redis://:***@h:0/0': port");
  EXPECT_EQ(redact_secrets("--publish=redis://:s/1@a,redis://:s/2@b"), "--publish=redis://:***@a,redis://:***@b");
  // Typed wrong: one slash, or no '@' (the password where a port would be).
  EXPECT_EQ(redact_secrets("redis:/:secret@h"), "redis:/:***@h");
  EXPECT_EQ(redact_secrets("redis://:secret"), "redis://:***");
  EXPECT_EQ(redact_secrets("redis://h:s3cr3t/0"), "redis://h:***/0");
  for (const char* typo : {"redis:/:secret@h", "redis://:secret"}) {
    auto refused = parse_redis_url(typo);
    ASSERT_FALSE(refused.ok()) << typo;
    EXPECT_EQ(refused.error().message.find("secret"), std::string::npos) << refused.error().message;
  }
  auto bad = parse_redis_url("redis://:secret@host:0/0");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find("secret"), std::string::npos);
}

TEST(RemoteConfig, timeouts) {
  auto a = cache::remote_config("redis://h", "");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->timeouts.connect_ms, 100);
  EXPECT_EQ(a->timeouts.io_ms, 250);
  auto b = cache::remote_config("redis://h", "50");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->timeouts.connect_ms, 50);
  EXPECT_EQ(b->timeouts.io_ms, 50);
  auto c = cache::remote_config("redis://h", "20,400");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->timeouts.connect_ms, 20);
  EXPECT_EQ(c->timeouts.io_ms, 400);
  EXPECT_FALSE(cache::remote_config("redis://h", "fast").ok());
  EXPECT_FALSE(cache::remote_config("redis://h", "0").ok());
  EXPECT_FALSE(cache::remote_config("redis://h", "1,2,3").ok());
  EXPECT_EQ(cache::remote_record_key("ab"), "ciq:1:record:ab");
  EXPECT_EQ(cache::remote_blob_key("cd"), "ciq:1:blob:cd");
}

namespace {

// A one-shot server on loopback that reads one request and sends `reply`.
class FakeServer {
public:
  explicit FakeServer(std::string reply) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 1);
    thread_ = std::thread([this, reply] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      (void)::recv(c, buf, sizeof buf, 0);
      (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      char drain;
      while (::recv(c, &drain, 1, 0) > 0) {
      }
      ::close(c);
    });
  }
  ~FakeServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  RedisUrl url() const { return RedisUrl{"127.0.0.1", port_, 0, ""}; }

private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

Result<std::optional<std::string>> get_from(const std::string& reply, std::size_t limit = 1024) {
  FakeServer server(reply);
  auto client = RedisClient::connect(server.url(), RedisTimeouts{200, 300});
  if (!client) return client.error();
  return client->get("k", limit);
}

} // namespace

TEST(RedisClient, reads_values_and_absence) {
  auto v = get_from("$5\r\nhello\r\n");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->value_or("?"), "hello");
  auto none = get_from("$-1\r\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(RedisClient, hostile_replies_are_errors) {
  // Over the limit: refused from the length line, never read.
  auto big = get_from("$999999999\r\n", 1024);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("over the limit"), std::string::npos);
  EXPECT_FALSE(get_from("$abc\r\n").ok());
  // No CRLF after the data: hiredis skips the two bytes; the value is still
  // exactly the announced three, nothing of the framing gets into it.
  auto unframed = get_from("$3\r\nabcXY");
  ASSERT_TRUE(unframed.ok());
  EXPECT_EQ(unframed->value_or(""), "abc");
  EXPECT_FALSE(get_from("*1\r\n$1\r\na\r\n").ok()); // an array where a string belongs
  // An array header announcing a billion elements (hiredis would allocate
  // their table at once: found by the fuzzer) is refused, not allocated.
  auto huge = get_from("*1155555551\r\n:1\r\n");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("oversized"), std::string::npos) << huge.error().message;
  auto nested = get_from("*1\r\n*1155555551\r\n");
  EXPECT_FALSE(nested.ok());
  auto refused = get_from("-ERR wrong\r\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("ERR wrong"), std::string::npos);
  auto truncated = get_from("$10\r\nabc"); // the server stalls mid-value
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("timed out"), std::string::npos);
}

TEST(RedisClient, nothing_listening) {
  auto c = RedisClient::connect(RedisUrl{"127.0.0.1", 1, 0, ""}, RedisTimeouts{100, 100});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("cannot connect"), std::string::npos);
}
