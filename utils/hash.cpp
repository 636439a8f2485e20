// XXH3-128 through libxxhash; SHA-256 and hex through libsodium (linked
// statically: nothing to load at a wrapper's start, and its SHA-256 needs no
// sodium_init()).
#include "utils/hash.h"

#include <cstring>
#include <sodium.h>
#include <xxhash.h>

namespace ciq {

Hasher::Hasher() : state_(XXH3_createState()) { XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_)); }
Hasher::~Hasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Hasher::add(std::string_view bytes) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

void Hasher::add_field(std::string_view bytes) {
  std::uint64_t n = bytes.size();
  add(std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
  add(bytes);
}

static Hash128 canonical(XXH128_hash_t h) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  Hash128 out;
  std::memcpy(out.data(), c.digest, out.size());
  return out;
}

Hash128 Hasher::digest() const { return canonical(XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_))); }

Hash128 xxh128(std::string_view bytes) { return canonical(XXH3_128bits(bytes.data(), bytes.size())); }

Sha256 sha256(std::string_view bytes) {
  Sha256 out;
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return out;
}

std::string to_hex(const std::uint8_t* data, std::size_t size) {
  std::string s(size * 2 + 1, '\0');
  sodium_bin2hex(s.data(), s.size(), data, size);
  s.pop_back(); // the terminating NUL
  return s;
}

std::string bytes_to_hex(std::string_view bytes) {
  return to_hex(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

bool from_hex(std::string_view hex, std::uint8_t* out, std::size_t size) {
  if (hex.size() != 2 * size) return false;
  std::size_t written = 0;
  const char* end = nullptr;
  return sodium_hex2bin(out, size, hex.data(), hex.size(), nullptr, &written, &end) == 0 && written == size &&
         end == hex.data() + hex.size();
}

} // namespace ciq
