// Redis replies as the wrappers' read path meets them: whatever bytes a
// server sends, GET (with its size limit) and the compare-and-set exchange
// end with a value or an error, never a crash or a wait past the deadline.
#include "utils/redis.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sys/socket.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 32768) return 0; // what fits in a socket buffer unread
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) std::abort();
  if (size && ::write(fds[1], data, size) != ssize_t(size)) std::abort();
  ::shutdown(fds[1], SHUT_WR); // the "server" has said all it will say
  auto client = ciq::RedisClient::over_socket(fds[0], ciq::RedisTimeouts{100, 50, 200});
  auto got = client.get("ciq:key", 1024);
  if (got && *got && (*got)->size() > 1024) std::abort(); // the limit held
  (void)client.set_if_unchanged("ciq:key", "value");
  ::close(fds[1]);
  return 0;
}
