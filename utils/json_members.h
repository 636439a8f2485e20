// Reading members of a JSON object that ciq's files hold (kernel traces and
// captures from libciq-inject, the compile trace, profile.json): absent or
// mistyped members read as absent, never throw, and integers keep all 64
// bits (nlohmann/json; utils/json.h keeps numbers as doubles). Header-only:
// the readers are below and beside each other (cache/, tuner/formats/,
// tuner/rundir/).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq::json_members {

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

/// Member `key` as a number (any JSON number); `fallback` when absent or not one.
inline double number_member(const json& object, const char* key, double fallback = 0) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

/// Member `key` when it is `true`; false otherwise.
inline bool bool_member(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

/// Member `key` as a list of strings (an element that is not one reads as
/// ""); empty when absent or not an array.
inline std::vector<std::string> strings_member(const json& object, const char* key) {
  std::vector<std::string> out;
  if (auto it = object.find(key); it != object.end() && it->is_array())
    for (const auto& v : *it) out.push_back(v.is_string() ? v.get<std::string>() : std::string());
  return out;
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

} // namespace ciq::json_members
