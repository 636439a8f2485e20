// Reading members of the JSON that libciq-inject writes (kernel traces and
// captures), for their two readers in tuner/formats/ only: absent or
// mistyped members read as absent, never throw, and integers keep all 64
// bits (nlohmann/json; utils/json.h keeps numbers as doubles).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ciq::formats::detail {

using json = nlohmann::json;

/// Member `key` as an unsigned count; `fallback` when absent or not one.
inline std::uint64_t unsigned_member(const json& object, const char* key, std::uint64_t fallback = 0) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) return fallback;  // nlohmann: every integer >= 0
  return it->get<std::uint64_t>();
}

/// Member `key` into `out` when it is an unsigned integer; false otherwise.
inline bool read_unsigned(const json& object, const char* key, std::uint64_t& out) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) return false;
  out = it->get<std::uint64_t>();
  return true;
}

inline std::string string_member(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// [x, y, z] of non-negative integers that fit 32 bits; false when it is not that.
inline bool read_dims(const json& object, const char* key, std::array<std::uint32_t, 3>& out) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array() || it->size() != 3) return false;
  for (std::size_t i = 0; i < 3; ++i) {
    const json& v = (*it)[i];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > UINT32_MAX) return false;
    out[i] = static_cast<std::uint32_t>(v.get<std::uint64_t>());
  }
  return true;
}

} // namespace ciq::formats::detail
