// Content hashes. XXH3-128 names PTX text and cache keys (fast, not
// cryptographic: a key collision only costs a wrong lookup that the space
// validation still guards). SHA-256 names ACF blobs, which are shared between
// people and must not be forgeable.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ciq {

using Hash128 = std::array<std::uint8_t, 16>;
using Sha256 = std::array<std::uint8_t, 32>;

/// Incremental XXH3-128. Feed fields with add_field() so that ("ab","c") and
/// ("a","bc") hash differently.
class Hasher {
public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void add(std::string_view bytes);
  void add_field(std::string_view bytes); // bytes plus a length prefix
  Hash128 digest() const;

private:
  void* state_;
};

Hash128 xxh128(std::string_view bytes);
Sha256 sha256(std::string_view bytes);

std::string to_hex(const std::uint8_t* data, std::size_t size);
template <std::size_t N> std::string to_hex(const std::array<std::uint8_t, N>& a) {
  return to_hex(a.data(), N);
}
/// Parses exactly 2*N hex digits; false on anything else.
bool from_hex(std::string_view hex, std::uint8_t* out, std::size_t size);

// Store keys are raw digest bytes; people and files see them as hex.

/// A digest's bytes as a string (an LMDB key).
template <std::size_t N> std::string digest_bytes(const std::array<std::uint8_t, N>& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), N);
}
/// Hex of raw key bytes.
std::string bytes_to_hex(std::string_view bytes);
/// The digest `hex` spells; std::nullopt unless it is exactly 2 * N hex
/// digits. Keys are parsed once, where text enters; inside they stay typed.
template <std::size_t N> std::optional<std::array<std::uint8_t, N>> parse_digest(std::string_view hex) {
  std::array<std::uint8_t, N> d{};
  if (!from_hex(hex, d.data(), N)) return std::nullopt;
  return d;
}

} // namespace ciq
