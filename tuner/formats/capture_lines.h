// launch.json and index-<tag>.jsonl as text: the one writer of the capture
// format that
// capture.h describes and capture.cpp reads, from the reader's own type
// (Capture). Header-only (nlohmann/json, no ciq library): libciq-inject,
// which may link no ciq library but utils' ELF part and ciq_system, writes
// its captures with it (tuner/inject/capture_writer.cpp).
#pragma once

#include "tuner/formats/capture.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq::formats {

/// launch.json's member naming the format, and the version written (the
/// reader refuses another); the same for an index-<tag>.jsonl's first line.
/// The file of one capture's launch, in the capture's directory.
inline constexpr const char* k_launch_file = "launch.json";
inline constexpr const char* k_capture_member = "ciq_capture";
inline constexpr std::uint64_t k_capture_version = 1;
inline constexpr const char* k_capture_index_member = "ciq_capture_index";
inline constexpr std::uint64_t k_capture_index_version = 1;

/// Bytes as lowercase hex, two digits each (param_bytes).
inline std::string hex_text(const std::vector<std::uint8_t>& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

/// A device address as launch.json writes it: "0x" and lowercase hex, so
/// that all 64 bits survive any JSON reader.
inline std::string address_text(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

/// launch.json's text (format 1), newline-terminated. Each allocation's
/// `file` is written as given (the writer gives its name in the capture's
/// directory; the reader makes it a path); `dir`, `has_compile` and
/// `compile` are compile.json's and the reader's, not written here.
inline std::string launch_json_text(const Capture& c) {
  using json = nlohmann::ordered_json;
  json params = json::array();
  for (const auto& p : c.params) params.push_back({{"offset", p.offset}, {"size", p.size}});
  json pointers = json::array();
  for (const auto& p : c.pointers) pointers.push_back({{"param", p.param}, {"allocation", p.allocation}, {"offset", p.offset}});
  json allocations = json::array();
  for (const auto& a : c.allocations)
    allocations.push_back({{"base", address_text(a.base)},
                           {"size", a.size},
                           {"file", a.file},
                           {"before_xxh128", a.before_xxh128},
                           {"after_xxh128", a.after_xxh128}});
  json j = {{k_capture_member, k_capture_version},
            {"kernel", c.kernel},
            {"pid", c.pid},
            {"exe", c.exe},
            {"device", c.device},
            {"device_name", c.device_name},
            {"compute_capability", json::array({c.compute_capability[0], c.compute_capability[1]})},
            {"grid", json::array({c.grid[0], c.grid[1], c.grid[2]})},
            {"block", json::array({c.block[0], c.block[1], c.block[2]})},
            {"dynamic_smem", c.dynamic_smem},
            {"launch_api", c.launch_api},
            {"code_xxh128", c.code_xxh128},
            {"params", params},
            {"param_bytes", hex_text(c.param_bytes)},
            {"pointers", pointers},
            {"allocations", allocations},
            {"config_launches", c.config_launches}};
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

/// An index-<tag>.jsonl's text: the process's line, then one line per
/// kernel and launch configuration seen (JSON lines, newline-terminated;
/// `file` is the reader's, not written).
inline std::string capture_index_text(const CaptureIndex& index) {
  using json = nlohmann::ordered_json;
  auto line = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; };
  std::string text = line({{k_capture_index_member, k_capture_index_version},
                           {"pid", index.pid},
                           {"exe", index.exe},
                           {"status", index.status},
                           {"reason", index.reason},
                           {"untracked_launches", index.untracked_launches},
                           {"graph_launches", index.graph_launches}});
  for (const auto& e : index.entries)
    text += line({{"kernel", e.kernel},
                  {"grid", json::array({e.grid[0], e.grid[1], e.grid[2]})},
                  {"block", json::array({e.block[0], e.block[1], e.block[2]})},
                  {"dynamic_smem", e.dynamic_smem},
                  {"launches", e.launches},
                  {"captured", e.captured},
                  {"refused", e.refused}});
  return text;
}

} // namespace ciq::formats
