#include "tuner/inject/capture_writer.h"

#include "tuner/formats/capture_lines.h"

#include "utils/env_table.h"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ciq::inject {

namespace {


// cuda.h's values for `extra` (this file builds without the toolkit):
// CU_LAUNCH_PARAM_END, CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE.
constexpr std::uintptr_t param_end = 0x00, param_buffer_pointer = 0x01, param_buffer_size = 0x02;
constexpr std::size_t max_extra_entries = 64;  // a well-formed list has three pairs at most

std::uint64_t layout_end(const std::vector<ParamSlot>& layout) {
  std::uint64_t end = 0;
  for (const auto& p : layout) end = std::max(end, p.offset + p.size);
  return end;
}

std::uint64_t word_at(const std::vector<std::uint8_t>& bytes, std::uint64_t offset) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, sizeof value);  // little-endian, as the GPU's
  return value;
}



/// A plain count: digits, then at most one of K, M, G, T (powers of 1024).
bool parse_size(const std::string& text, std::uint64_t& out) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) return false;
  unsigned shift = 0;
  std::string suffix = text.substr(digits);
  if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else if (!suffix.empty()) return false;
  std::uint64_t value = std::stoull(text.substr(0, digits));
  if (shift && value > (UINT64_MAX >> shift)) return false;
  out = value << shift;
  return true;
}

} // namespace

std::optional<std::vector<std::uint8_t>> params_from_pointers(const std::vector<ParamSlot>& layout,
                                                              void* const* kernel_params) {
  std::vector<std::uint8_t> bytes(layout_end(layout), 0);
  if (layout.empty()) return bytes;
  if (!kernel_params) return std::nullopt;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (!kernel_params[i]) return std::nullopt;
    std::memcpy(bytes.data() + layout[i].offset, kernel_params[i], layout[i].size);
  }
  return bytes;
}

std::optional<std::vector<std::uint8_t>> params_from_extra(const std::vector<ParamSlot>& layout, void* const* extra,
                                                           std::string& why) {
  const void* buffer = nullptr;
  const std::size_t* size = nullptr;
  for (std::size_t i = 0; extra && i < 2 * max_extra_entries; i += 2) {
    auto key = reinterpret_cast<std::uintptr_t>(extra[i]);
    if (key == param_end) break;
    if (key == param_buffer_pointer) buffer = extra[i + 1];
    else if (key == param_buffer_size) size = static_cast<const std::size_t*>(extra[i + 1]);
  }
  std::uint64_t end = layout_end(layout);
  if (!buffer || !size) {
    why = "the launch passes its parameters neither in kernelParams nor as CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE";
    return std::nullopt;
  }
  if (*size < end) {
    why = "the parameter buffer passed in `extra` holds " + std::to_string(*size) + " bytes; the kernel's parameters need " +
          std::to_string(end);
    return std::nullopt;
  }
  const auto* begin = static_cast<const std::uint8_t*>(buffer);
  return std::vector<std::uint8_t>(begin, begin + end);
}

LaunchMemory find_launch_memory(const std::vector<ParamSlot>& layout, const std::vector<std::uint8_t>& params,
                                const FindAllocation& find) {
  LaunchMemory memory;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const ParamSlot& slot = layout[i];
    if (slot.offset + slot.size > params.size()) {
      memory.refusal = "parameter " + std::to_string(i) + " lies outside the parameter buffer";
      return memory;
    }
    if (slot.size == 8) {
      std::uint64_t value = word_at(params, slot.offset);
      if (value == 0) continue;
      auto found = find(value);
      if (!found) continue;
      if (!found->refusal.empty()) {
        memory.refusal = found->refusal + " (param " + std::to_string(i) + ")";
        return memory;
      }
      auto same = std::find_if(memory.allocations.begin(), memory.allocations.end(),
                               [&](const FoundAllocation& a) { return a.base == found->base; });
      std::uint32_t index = std::uint32_t(same - memory.allocations.begin());
      if (same == memory.allocations.end()) {
        memory.allocations.push_back({found->base, found->size});
        memory.bytes += found->size;
      }
      memory.pointers.push_back({std::uint32_t(i), index, value - found->base});
    } else if (slot.size > 8) {
      // Words at 8-byte-aligned offsets of the buffer: where a structure
      // (or a CUtensorMap) keeps a pointer member.
      for (std::uint64_t at = (slot.offset + 7) / 8 * 8; at + 8 <= slot.offset + slot.size; at += 8) {
        std::uint64_t value = word_at(params, at);
        if (value == 0 || !find(value)) continue;
        memory.refusal = "a pointer inside a structure parameter (param " + std::to_string(i) + ", " +
                         std::to_string(slot.size) + " bytes, at byte " + std::to_string(at - slot.offset) +
                         "): its allocation cannot be relocated on replay";
        return memory;
      }
    }
  }
  return memory;
}

std::string memory_file_name(std::size_t i) { return "mem-" + std::to_string(i) + ".bin"; }

std::string render_launch(const LaunchRecord& r) {
  formats::Capture c = r;
  c.grid = r.config.grid;
  c.block = r.config.block;
  c.dynamic_smem = r.config.dynamic_smem;
  c.pointers = r.memory.pointers;
  c.allocations.clear();
  for (std::size_t i = 0; i < r.memory.allocations.size(); ++i)
    c.allocations.push_back({r.memory.allocations[i].base, r.memory.allocations[i].size, memory_file_name(i),
                             i < r.before_xxh128.size() ? r.before_xxh128[i] : "",
                             i < r.after_xxh128.size() ? r.after_xxh128[i] : ""});
  return formats::launch_json_text(c);
}

StreamDigest::StreamDigest() : state_(XXH3_createState()) {
  if (state_) XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}
StreamDigest::~StreamDigest() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void StreamDigest::add(const void* data, std::size_t size) {
  if (state_) XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, size);
}
std::string StreamDigest::hex() const {
  if (!state_) return "";
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_)));
  return formats::hex_text(std::vector<std::uint8_t>(canonical.digest, canonical.digest + sizeof canonical.digest));
}

bool parse_capture_settings(const char* kernels, const char* max_bytes, const char* configs, CaptureSettings& out,
                            std::string& why) {
  out = CaptureSettings();
  if (!kernels) {
    why = std::string(env_name(Env::capture_kernels)) + " is not set: name the kernels to capture (mangled, separated by commas)";
    return false;
  }
  for (std::string_view rest = kernels; !rest.empty();) {
    std::size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    if (!name.empty()) out.kernels.emplace(name);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (max_bytes && *max_bytes && !parse_size(max_bytes, out.max_bytes)) {
    why = std::string(env_name(Env::capture_max_bytes)) + "=" + max_bytes + " is not a size (bytes, or a number with K, M, G or T)";
    return false;
  }
  if (configs && *configs) {
    std::uint64_t n = 0;
    std::string text = configs;
    if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9 || (n = std::stoull(text)) == 0) {
      why = std::string(env_name(Env::capture_configs)) + "=" + text + " is not a positive whole number";
      return false;
    }
    out.max_configs = std::uint32_t(n);
  }
  return true;
}

CaptureTable::Entry* CaptureTable::find_or_add(std::string_view kernel, const LaunchConfig& config) {
  auto by_kernel = entries_.find(kernel);
  if (by_kernel != entries_.end()) {
    if (auto it = by_kernel->second.find(config); it != by_kernel->second.end()) return &it->second;
  }
  if (count_ >= max_entries) return nullptr;
  if (by_kernel == entries_.end()) by_kernel = entries_.emplace(std::string(kernel), std::map<LaunchConfig, Entry>()).first;
  ++count_;
  return &by_kernel->second[config];
}

CaptureTable::Offer CaptureTable::count_launch(std::string_view kernel, const LaunchConfig& config) {
  Entry* e = find_or_add(kernel, config);
  if (!e) {
    ++untracked_launches_;
    return Offer::counted;
  }
  ++e->launches;
  if (e->decided) return Offer::counted;
  e->decided = true;
  auto done = captured_per_kernel_.find(kernel);
  if (done != captured_per_kernel_.end() && done->second >= settings_.max_configs) {
    e->refused = std::to_string(settings_.max_configs) + " configurations of this kernel are captured already (" + env_name(Env::capture_configs) + "=" +
                 std::to_string(settings_.max_configs) + ")";
    return Offer::refused;
  }
  return Offer::capture;
}

void CaptureTable::count_refused(std::string_view kernel, const LaunchConfig& config, const std::string& why) {
  Entry* e = find_or_add(kernel, config);
  if (!e) {
    ++untracked_launches_;
    return;
  }
  ++e->launches;
  if (e->decided) return;
  e->decided = true;
  e->refused = why;
}

void CaptureTable::captured(std::string_view kernel, const LaunchConfig& config, const std::string& name) {
  Entry* e = find_or_add(kernel, config);
  if (!e) return;
  e->captured = name;
  e->refused.clear();
  ++captured_per_kernel_[std::string(kernel)];
  captures_.push_back({std::string(kernel), config, name});
}

void CaptureTable::refused(std::string_view kernel, const LaunchConfig& config, const std::string& why) {
  if (Entry* e = find_or_add(kernel, config)) e->refused = why;
}

const CaptureTable::Entry* CaptureTable::entry(std::string_view kernel, const LaunchConfig& config) const {
  auto by_kernel = entries_.find(kernel);
  if (by_kernel == entries_.end()) return nullptr;
  auto it = by_kernel->second.find(config);
  return it == by_kernel->second.end() ? nullptr : &it->second;
}

std::string CaptureTable::render_index(std::int64_t pid, const std::string& exe, const std::string& status,
                                       const std::string& reason) const {
  formats::CaptureIndex index;
  index.pid = pid;
  index.exe = exe;
  index.status = status;
  index.reason = reason;
  index.untracked_launches = untracked_launches_;
  index.graph_launches = graph_launches_;
  for (const auto& [kernel, configs] : entries_)
    for (const auto& [config, e] : configs)
      index.entries.push_back({kernel, config.grid, config.block, config.dynamic_smem, e.launches, e.captured, e.refused});
  return formats::capture_index_text(index);
}

} // namespace ciq::inject
