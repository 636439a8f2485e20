#include "spaces/control_set.h"

#include "utils/hash.h"
#include "utils/text.h"

#include <algorithm>
#include <vector>

namespace ciq::spaces {

ControlSet ControlSet::for_kernel(const std::string& kernel) const {
  ControlSet out;
  out.space = space;
  out.options = options;
  out.acf = acf;
  if (auto it = kernels.find(kernel); it != kernels.end()) out.kernels.emplace(kernel, it->second);
  return out;
}

ControlSet ControlSet::ptxas_stage() const {
  ControlSet out = *this;
  out.nvcc_space.clear();
  out.nvcc.clear();
  return out;
}

ControlSet ControlSet::nvcc_stage() const {
  ControlSet out;
  out.space = nvcc_space;
  out.options = nvcc;
  return out;
}

static constexpr std::string_view k_nvcc_prefix = "nvcc.";

static bool valid_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '$' || c == '.'))
      return false;
  return true;
}

static Result<void> add_pair(ControlSet& set, std::string_view key, std::string_view value) {
  if (value.empty()) return make_error("parse", "no value for '" + std::string(key) + "'");
  if (value.find_first_of(" \t\n\"'") != std::string_view::npos)
    return make_error("parse", "value of '" + std::string(key) + "' must be one word, got '" + std::string(value) + "'");
  if (starts_with(key, k_nvcc_prefix)) {
    std::string_view knob = key.substr(k_nvcc_prefix.size());
    if (!valid_name(knob) || knob.find('.') != std::string_view::npos)
      return make_error("parse", "'" + std::string(key) + "' is not nvcc.KNOB");
    set.nvcc[std::string(knob)] = std::string(value);
    return {};
  }
  auto colon = key.rfind(':');
  if (colon == std::string_view::npos) {
    if (!valid_name(key)) return make_error("parse", "'" + std::string(key) + "' is not a knob name");
    set.options[std::string(key)] = std::string(value);
    return {};
  }
  std::string_view kernel = key.substr(0, colon), knob = key.substr(colon + 1);
  if (!valid_name(kernel) || !valid_name(knob))
    return make_error("parse", "'" + std::string(key) + "' is not KERNEL:KNOB");
  set.kernels[std::string(kernel)][std::string(knob)] = std::string(value);
  return {};
}

Result<void> add_assignment(ControlSet& set, std::string_view assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos)
    return make_error("parse", "expected KNOB=VALUE or KERNEL:KNOB=VALUE, got '" + std::string(assignment) + "'");
  return add_pair(set, trim(assignment.substr(0, eq)), trim(assignment.substr(eq + 1)));
}

Result<ControlSet> parse_control_set(std::string_view text, std::string_view origin) {
  auto lines = parse_key_values(text, origin);
  if (!lines) return lines.error();
  ControlSet set; // the format line is optional, so hand-written sets stay short
  for (const auto& kv : *lines) {
    auto where = std::string(origin) + ":" + std::to_string(kv.line) + ": ";
    if (!kv.section.empty()) return make_error("parse", where + "unexpected section [" + kv.section + "]");
    if (kv.key == "format") {
      if (kv.value != k_controls_format)
        return make_error("parse", where + "unsupported format '" + kv.value + "' (expected " +
                                       std::string(k_controls_format) + ")");
    } else if (kv.key == "space") {
      if (!valid_name(kv.value)) return make_error("parse", where + "bad space name '" + kv.value + "'");
      set.space = kv.value;
    } else if (kv.key == "nvcc-space") {
      if (!valid_name(kv.value)) return make_error("parse", where + "bad space name '" + kv.value + "'");
      set.nvcc_space = kv.value;
    } else if (kv.key == "acf") {
      std::string_view v = kv.value;
      if (starts_with(v, "sha256:")) v.remove_prefix(7);
      set.acf = parse_digest<32>(v);
      if (!set.acf) return make_error("parse", where + "acf must be sha256:<64 hex digits>, got '" + kv.value + "'");
    } else if (auto r = add_pair(set, kv.key, kv.value); !r) {
      return make_error("parse", where + r.error().message);
    }
  }
  return set;
}

std::string format_control_set(const ControlSet& set) {
  std::string out = format_key_value("format", k_controls_format) + "\n";
  if (!set.space.empty()) out += format_key_value("space", set.space) + "\n";
  for (const auto& [knob, value] : set.options) out += format_key_value(knob, value) + "\n";
  for (const auto& [kernel, knobs] : set.kernels)
    for (const auto& [knob, value] : knobs) out += format_key_value(kernel + ":" + knob, value) + "\n";
  if (set.acf) out += format_key_value("acf", "sha256:" + to_hex(*set.acf)) + "\n";
  if (!set.nvcc_space.empty()) out += format_key_value("nvcc-space", set.nvcc_space) + "\n";
  for (const auto& [knob, value] : set.nvcc) out += format_key_value(std::string(k_nvcc_prefix) + knob, value) + "\n";
  return out;
}

std::string control_set_digest(const ControlSet& set) {
  if (set.empty()) return "default";
  std::vector<std::string> lines;
  for (const auto& [knob, value] : set.options) lines.push_back("o " + knob + "=" + value);
  for (const auto& [kernel, knobs] : set.kernels)
    for (const auto& [knob, value] : knobs) lines.push_back("d " + kernel + ":" + knob + "=" + value);
  for (const auto& [knob, value] : set.nvcc) lines.push_back("n " + knob + "=" + value);
  if (set.acf) lines.push_back("a sha256:" + to_hex(*set.acf));
  std::sort(lines.begin(), lines.end());  // std::string compares as unsigned bytes (char_traits<char>)
  std::string joined;
  for (const auto& line : lines) joined += (joined.empty() ? "" : "\n") + line;
  return to_hex(sha256(joined)).substr(0, 16);
}

std::string summarise_control_set(const ControlSet& set) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  for (const auto& [knob, value] : set.options) add(knob + "=" + value);
  for (const auto& [kernel, knobs] : set.kernels)
    for (const auto& [knob, value] : knobs) add(kernel + ":" + knob + "=" + value);
  if (set.acf) add("acf=" + to_hex(*set.acf).substr(0, 12));
  for (const auto& [knob, value] : set.nvcc) add(std::string(k_nvcc_prefix) + knob + "=" + value);
  return out.empty() ? "(defaults)" : out;
}

} // namespace ciq::spaces
