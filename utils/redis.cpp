// The RESP protocol (command encoding, reply parsing) is hiredis's; the
// socket, every deadline and the size limits are ours, because hiredis's
// blocking API bounds each read() rather than a whole reply, and resolves
// names without a deadline. Measured: against a server that answers every
// command after 1.5 s (lit remote-redis-bound.test) the lookup ends within
// its bound of connect + two replies (3.3 s), where per-command timeouts
// would let AUTH, SELECT and GET take 4.5 s; a server that drips one byte
// every 50 ms (the fault matrix) never trips a per-read timeout at all.
#include "utils/redis.h"

#include "utils/text.h"

#include <hiredis/hiredis.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nss.h>
#include <poll.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ciq {

namespace {

long long now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// printable(): the text of a server reply must not act on a terminal.
Error redis_error(const std::string& message) { return make_error("redis", printable(message)); }

// Waits until `fd` is ready for `events` or the deadline passes.
Result<void> wait_for(int fd, short events, long long deadline_ms, const char* what) {
  while (true) {
    long long left = deadline_ms - now_ms();
    if (left <= 0) return redis_error(std::string("timed out ") + what);
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, int(left));
    if (r > 0) return {};
    if (r < 0 && errno != EINTR) return redis_error(std::string("poll: ") + std::strerror(errno));
  }
}

bool parse_int(std::string_view s, long long& out) {
  if (s.empty() || s.size() > 19) return false;
  std::string text(s);
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

// %XX escapes decoded, as in any URL's credentials (a '%' that starts no
// escape stays as it is: a password written raw keeps working).
std::string percent_decoded(std::string_view text) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) && hex(text[i + 2])) {
      out += char(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

} // namespace

std::string redact_secrets(std::string_view text) {
  // A password may hold '/', '@', ':' and '%' (parse_redis_url splits the
  // credentials at the URL's last '@'), so a URL's credentials end at the
  // last '@' before the next URL (its scheme) or the end of the text, not at
  // the first '/' or space. Where a text holds a URL without credentials and
  // a stray '@' later, more is hidden than needed: never less.
  auto is_scheme_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'; };
  // A URL typed wrong is hidden the same way: `redis:/:PW@h` (one slash) is
  // a scheme too, and `redis://:PW` (no '@') has a password where a port
  // would be: what follows a ':' there is hidden unless it is all digits.
  auto slashes = [&](std::size_t s) { return text.compare(s, 3, "://") == 0 ? std::size_t(3) : std::size_t(2); };
  std::string out;
  std::size_t at = 0;
  std::size_t scheme = text.find(":/");
  while (scheme != std::string_view::npos) {
    std::size_t start = scheme + slashes(scheme);
    std::size_t next = text.find(":/", start);
    std::size_t end = next == std::string_view::npos ? text.size() : next;
    while (next != std::string_view::npos && end > start && is_scheme_char(text[end - 1])) --end; // the next URL's scheme
    out.append(text.substr(at, start - at));
    std::string_view rest = text.substr(start, end - start);
    if (auto amp = rest.rfind('@'); amp != std::string_view::npos) {
      std::string_view credentials = rest.substr(0, amp);
      auto colon = credentials.find(':'); // user:password, :password, or password alone
      out.append(colon == std::string_view::npos ? std::string_view() : credentials.substr(0, colon + 1));
      out.append("***");
      out.append(rest.substr(amp));
    } else if (auto colon = rest.substr(0, rest.find('/')).find(':');
               colon != std::string_view::npos &&
               rest.substr(colon + 1, rest.substr(colon + 1).find('/')).find_first_not_of("0123456789") != std::string_view::npos) {
      out.append(rest.substr(0, colon + 1));  // not a port: perhaps a password that lost its '@'
      out.append("***");
      auto slash = rest.find('/', colon);
      if (slash != std::string_view::npos) out.append(rest.substr(slash));
    } else {
      out.append(rest);
    }
    at = end;
    scheme = next;
  }
  out.append(text.substr(at));
  return out;
}

Result<RedisUrl> parse_redis_url(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return redis_error("bad Redis URL '" + redact_secrets(url) + "': " + why + " (expected redis://[:PASSWORD@]HOST[:PORT][/DB])");
  };
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) return bad("not redis://");
  std::string_view rest = url.substr(scheme.size());
  RedisUrl out;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view auth = rest.substr(0, at);
    if (auto colon = auth.find(':'); colon != std::string_view::npos) auth = auth.substr(colon + 1);
    out.password = percent_decoded(auth);
    rest = rest.substr(at + 1);
  }
  std::string_view hostport = rest;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    long long n = 0;
    if (!db.empty()) {
      if (!parse_int(db, n) || n < 0 || n > 1000000) return bad("the database must be a number");
      out.db = int(n);
    }
  }
  if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
    long long n = 0;
    if (!parse_int(hostport.substr(colon + 1), n) || n < 1 || n > 65535) return bad("the port must be 1..65535");
    out.port = int(n);
    hostport = hostport.substr(0, colon);
  }
  if (hostport.empty()) return bad("no host");
  out.host = std::string(hostport);
  return out;
}

namespace {

// A statically linked ciq tool (the wrappers; every tool of a CIQ_PORTABLE
// build: no dynamic loader, AT_BASE 0) looks host names up in /etc/hosts and
// DNS only, the two sources glibc has built in. Otherwise glibc would dlopen
// the other NSS modules /etc/nsswitch.conf names (mdns4_minimal, resolve,
// sss, ...), which work in a static program only when they come from the
// very glibc it was linked with (the linker's getaddrinfo warning), and may
// crash it on another machine. A dynamically linked tool keeps the host's
// configuration.
void use_built_in_host_lookup() {
  static const bool once = [] {
    if (::getauxval(AT_BASE) == 0) ::__nss_configure_lookup("hosts", "files dns");
    return true;
  }();
  (void)once;
}

// getaddrinfo has no timeout of its own: numeric addresses need no
// resolver; names go through getaddrinfo_a, waited for until the deadline.
// On timeout the request is abandoned (its memory too: the resolver thread
// may still write to it; the wrapper process ends soon anyway).
Result<addrinfo*> resolve(const std::string& host, const std::string& port, long long deadline_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) == 0) return found;
  use_built_in_host_lookup();
  struct Request {
    std::string host, port;
    addrinfo hints{};
    gaicb cb{};
  };
  auto* req = new Request{host, port, {}, {}};
  req->hints.ai_family = AF_UNSPEC;
  req->hints.ai_socktype = SOCK_STREAM;
  req->cb.ar_name = req->host.c_str();
  req->cb.ar_service = req->port.c_str();
  req->cb.ar_request = &req->hints;
  gaicb* list[1] = {&req->cb};
  if (int r = ::getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr); r != 0) {
    delete req;
    return redis_error("cannot resolve " + host + ": " + ::gai_strerror(r));
  }
  while (true) {
    long long left = deadline_ms - now_ms();
    if (left <= 0) {
      if (::gai_cancel(&req->cb) == EAI_CANCELED) delete req; // else abandoned, see above
      return redis_error("resolving " + host + " took longer than the connect timeout");
    }
    timespec ts{time_t(left / 1000), long(left % 1000) * 1000000L};
    int r = ::gai_suspend(list, 1, &ts);
    if (r == EAI_AGAIN || r == EAI_INTR) continue;
    break;
  }
  int r = ::gai_error(&req->cb);
  found = req->cb.ar_result;
  delete req;
  if (r != 0) return redis_error("cannot resolve " + host + ": " + ::gai_strerror(r));
  return found;
}

} // namespace

Result<RedisClient> RedisClient::connect(const RedisUrl& url, RedisTimeouts timeouts) {
  long long start = now_ms();
  long long end = timeouts.total_ms > 0 ? start + timeouts.total_ms : 0;
  long long deadline = start + timeouts.connect_ms;
  if (end && end < deadline) deadline = end;
  std::string port = std::to_string(url.port);
  auto resolved = resolve(url.host, port, deadline);
  if (!resolved) return resolved.error();
  addrinfo* found = *resolved;
  std::string last = "no address";
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      bool failed = errno != EINPROGRESS;
      if (!failed) {
        auto ready = wait_for(fd, POLLOUT, deadline, "connecting");
        int err = 0;
        socklen_t len = sizeof err;
        if (!ready) {
          last = ready.error().message;
          failed = true;
        } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
          last = std::strerror(err ? err : errno);
          failed = true;
        }
      } else {
        last = std::strerror(errno);
      }
      if (failed) {
        ::close(fd);
        fd = -1;
      }
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return redis_error("cannot connect to " + url.host + ":" + port + ": " + last);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  RedisClient client(fd, timeouts, end);
  if (!url.password.empty()) {
    auto r = client.command({"AUTH", url.password}, 1024);
    if (!r) return r.error();
    if (r->type == '-') {
      // A server may quote the command's arguments in its error ("unknown
      // command 'AUTH', with args beginning with: '<password>'"): never
      // print the password.
      std::string said = r->text.value_or("");
      for (std::size_t at; !url.password.empty() && (at = said.find(url.password)) != std::string::npos;)
        said.replace(at, url.password.size(), "***");
      return redis_error("AUTH refused: " + said);
    }
  }
  if (url.db != 0) {
    std::string db = std::to_string(url.db);
    auto r = client.command({"SELECT", db}, 1024);
    if (!r) return r.error();
    if (r->type == '-') return redis_error("SELECT " + db + " refused: " + r->text.value_or(""));
  }
  return client;
}

RedisClient RedisClient::over_socket(int fd, RedisTimeouts timeouts) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return RedisClient(fd, timeouts, timeouts.total_ms ? now_ms() + timeouts.total_ms : 0);
}

RedisClient::RedisClient(RedisClient&& other) noexcept
    : fd_(other.fd_), timeouts_(other.timeouts_), end_ms_(other.end_ms_), reader_(std::move(other.reader_)) {
  other.fd_ = -1;
}

RedisClient& RedisClient::operator=(RedisClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    timeouts_ = other.timeouts_;
    end_ms_ = other.end_ms_;
    reader_ = std::move(other.reader_);
    other.fd_ = -1;
  }
  return *this;
}

RedisClient::~RedisClient() {
  if (fd_ >= 0) ::close(fd_);
}

void RedisClient::ReaderFree::operator()(redisReader* r) const { redisReaderFree(r); }

Result<void> RedisClient::send_all(std::string_view bytes, long long deadline_ms) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(std::size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto w = wait_for(fd_, POLLOUT, deadline_ms, "sending"); !w) return w;
      continue;
    }
    return redis_error(std::string("send: ") + std::strerror(errno));
  }
  return {};
}

Result<RedisClient::Reply> RedisClient::command(const std::vector<std::string_view>& args, std::size_t max_bytes) {
  if (fd_ < 0) return redis_error("not connected");
  long long deadline = now_ms() + timeouts_.io_ms;
  if (end_ms_ && end_ms_ < deadline) deadline = end_ms_;
  if (deadline <= now_ms()) return redis_error("out of time: the whole exchange is limited to " + std::to_string(timeouts_.total_ms) + " ms");
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (auto a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  char* formatted = nullptr;
  int length = redisFormatCommandArgv(&formatted, int(argv.size()), argv.data(), lengths.data());
  if (length < 0) return redis_error("cannot format the command");
  std::string request(formatted, std::size_t(length));
  redisFreeCommand(formatted);
  auto fail = [&](Error e) {
    ::close(fd_); // the stream is out of step now: never reuse it
    fd_ = -1;
    return e;
  };
  if (auto s = send_all(request, deadline); !s) return fail(s.error());
  auto reply = read_reply(deadline, max_bytes);
  if (!reply) return fail(reply.error());
  return reply;
}

namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

} // namespace

// hiredis allocates an array reply's element table as soon as it reads the
// header ("*1155555551" is 9 GB; found by test/fuzz/fuzz_redis). ciq only
// ever gets small arrays (EXEC's), so the reader refuses larger ones first.
namespace {

constexpr int k_max_array = 16;

const redisReplyObjectFunctions* bounded_functions(const redisReplyObjectFunctions* defaults) {
  static void* (*create_array)(const redisReadTask*, int) = defaults->createArray;
  static redisReplyObjectFunctions bounded = [&] {
    redisReplyObjectFunctions f = *defaults;
    f.createArray = [](const redisReadTask* task, int elements) -> void* {
      return elements < 0 || elements > k_max_array ? nullptr : create_array(task, elements);
    };
    return f;
  }();
  return &bounded;
}

} // namespace

Result<RedisClient::Reply> RedisClient::read_reply(long long deadline, std::size_t max_bytes) {
  if (!reader_) {
    reader_.reset(redisReaderCreate());
    if (!reader_) return redis_error("out of memory");
    reader_->fn = const_cast<redisReplyObjectFunctions*>(bounded_functions(reader_->fn));
  }
  // What may arrive for one reply: the value and its framing. A server that
  // announces (or sends) more is refused before it is all read.
  std::size_t limit = max_bytes + 64, received = 0;
  while (true) {
    void* out = nullptr;
    if (redisReaderGetReply(reader_.get(), &out) != REDIS_OK)
      return redis_error(std::string("malformed or oversized reply: ") + reader_->errstr);
    if (out) {
      std::unique_ptr<redisReply, ReplyFree> r(static_cast<redisReply*>(out));
      Reply reply;
      switch (r->type) {
      case REDIS_REPLY_STATUS: reply.type = '+'; break;
      case REDIS_REPLY_ERROR: reply.type = '-'; break;
      case REDIS_REPLY_INTEGER: reply.type = ':'; reply.text = std::to_string(r->integer); return reply;
      case REDIS_REPLY_STRING: reply.type = '$'; break;
      case REDIS_REPLY_NIL: reply.type = 'n'; return reply; // an absent key, or EXEC after a watched key changed
      case REDIS_REPLY_ARRAY: // only EXEC's: a few simple replies
        reply.type = '*';
        reply.text = "";
        for (std::size_t i = 0; i < r->elements; ++i) {
          const redisReply* e = r->element[i];
          char type = e->type == REDIS_REPLY_STATUS ? '+' : e->type == REDIS_REPLY_ERROR ? '-' : '?';
          reply.elements.push_back(type + std::string(e->str ? e->str : "", e->str ? e->len : 0));
        }
        return reply;
      default: return redis_error("unexpected reply type " + std::to_string(r->type));
      }
      if (r->len > max_bytes)
        return redis_error("reply of " + std::to_string(r->len) + " bytes is over the limit of " + std::to_string(max_bytes));
      reply.text = std::string(r->str, r->len);
      return reply;
    }
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) {
      // A value announced over the limit is refused from its length line,
      // without waiting for (or reading) the rest.
      if (received == 0 && chunk[0] == '$') {
        std::string_view head(chunk, std::size_t(n));
        if (auto eol = head.find("\r\n"); eol != std::string_view::npos)
          if (auto announced = parse_integer(head.substr(1, eol - 1)); announced && *announced > 0 &&
                                                                        std::size_t(*announced) > max_bytes)
            return redis_error("reply of " + std::to_string(*announced) + " bytes is over the limit of " +
                               std::to_string(max_bytes));
      }
      received += std::size_t(n);
      if (received > limit)
        return redis_error("reply of over " + std::to_string(received) + " bytes is over the limit of " + std::to_string(max_bytes));
      if (redisReaderFeed(reader_.get(), chunk, std::size_t(n)) != REDIS_OK) return redis_error("out of memory");
      continue;
    }
    if (n == 0) return redis_error("the server closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return redis_error(std::string("recv: ") + std::strerror(errno));
    if (auto w = wait_for(fd_, POLLIN, deadline, "waiting for the reply"); !w) return w.error();
  }
}

Result<std::optional<std::string>> RedisClient::get(std::string_view key, std::size_t max_bytes) {
  auto r = command({"GET", key}, max_bytes);
  if (!r) return r.error();
  if (r->type == '-') return redis_error("GET refused: " + r->text.value_or(""));
  if (r->type == 'n') return std::optional<std::string>();
  if (r->type != '$') return redis_error("unexpected reply to GET");
  return r->text;
}

Result<void> RedisClient::watch(std::string_view key) {
  auto r = command({"WATCH", key}, 1024);
  if (!r) return r.error();
  if (r->type != '+') return redis_error("WATCH refused: " + r->text.value_or(""));
  return {};
}

Result<void> RedisClient::unwatch() {
  auto r = command({"UNWATCH"}, 1024);
  if (!r) return r.error();
  if (r->type != '+') return redis_error("UNWATCH refused: " + r->text.value_or(""));
  return {};
}

Result<bool> RedisClient::set_if_unchanged(std::string_view key, std::string_view value) {
  for (auto step : {std::vector<std::string_view>{"MULTI"}, std::vector<std::string_view>{"SET", key, value}}) {
    auto r = command(step, 1024);
    if (!r) return r.error();
    if (r->type == '-') return redis_error(std::string(step[0]) + " refused: " + r->text.value_or(""));
  }
  auto r = command({"EXEC"}, 1024);
  if (!r) return r.error();
  if (r->type == 'n') return false; // the watched key changed: nothing was set
  if (r->type != '*') return redis_error("EXEC refused: " + r->text.value_or(""));
  if (r->elements.size() != 1 || r->elements[0] != "+OK") return redis_error("SET inside MULTI failed");
  return true;
}

Result<void> RedisClient::set(std::string_view key, std::string_view value) {
  auto r = command({"SET", key, value}, 1024);
  if (!r) return r.error();
  if (r->type == '-') return redis_error("SET refused: " + r->text.value_or(""));
  return {};
}

} // namespace ciq
