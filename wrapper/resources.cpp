#include "wrapper/resources.h"

#include "utils/text.h"

#include <algorithm>
#include <cstdlib>

namespace ciq::wrapper {

namespace {

// The number just before `unit` in `line` ("84 bytes spill stores"); -1 if absent.
long number_before(std::string_view line, std::string_view unit) {
  auto pos = line.find(unit);
  if (pos == std::string_view::npos || pos < 2) return -1;
  std::size_t end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  std::size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(line[start - 1]))) --start;
  if (start == end) return -1;
  return std::strtol(std::string(line.substr(start, end - start)).c_str(), nullptr, 10);
}

std::string quoted_name(std::string_view line) {
  auto a = line.find('\'');
  auto b = a == std::string_view::npos ? a : line.find('\'', a + 1);
  if (b == std::string_view::npos) return {};
  return std::string(line.substr(a + 1, b - a - 1));
}

bool is_verbose_line(std::string_view line) {
  return starts_with(line, "ptxas info    :") ||
         (starts_with(line, "    ") && line.find("bytes stack frame") != std::string_view::npos);
}

} // namespace

std::map<std::string, KernelResources> parse_resources(std::string_view text) {
  std::map<std::string, KernelResources> out;
  std::string entry, properties_of;
  for (std::string_view line : split(text, '\n')) {
    if (line.find("Compiling entry function") != std::string_view::npos) {
      entry = quoted_name(line);
      out[entry];
    } else if (auto p = line.find("Function properties for "); p != std::string_view::npos) {
      properties_of = std::string(trim(line.substr(p + 24)));
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      if (properties_of == entry && !entry.empty()) {
        auto& r = out[entry];
        r.stack = number_before(line, "bytes stack frame");
        r.spill_stores = number_before(line, "bytes spill stores");
        r.spill_loads = number_before(line, "bytes spill loads");
      }
    } else if (line.find("Used ") != std::string_view::npos && !entry.empty()) {
      auto& r = out[entry];
      r.registers = number_before(line, "registers");
      if (long b = number_before(line, "barriers"); b >= 0) r.barriers = b;
      if (long s = number_before(line, "bytes smem"); s >= 0) r.shared = s;
    } else if (auto t = line.find("Compile time = "); t != std::string_view::npos && !entry.empty()) {
      out[entry].compile_ms = std::strtod(std::string(line.substr(t + 15)).c_str(), nullptr);
    }
  }
  return out;
}

std::vector<std::string> compiler_warnings(std::string_view output, std::string_view tool) {
  std::vector<std::string> out;
  for (std::string_view line : split(output, '\n')) {
    auto at = line.find("warning");
    if (at == std::string_view::npos || is_verbose_line(line)) continue;
    std::string text = std::string(tool) + " " + std::string(trim(line.substr(at)));
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  }
  return out;
}

std::string strip_verbose_lines(std::string_view output) {
  std::string out;
  auto lines = split(output, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_verbose_line(lines[i])) continue;
    out.append(lines[i]);
    if (i + 1 < lines.size()) out += '\n';
  }
  return out;
}

} // namespace ciq::wrapper
