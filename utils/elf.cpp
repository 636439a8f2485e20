#include "utils/elf.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace ciq {

template <typename T> static bool read_at(std::string_view image, std::size_t offset, T& out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return true;
}

std::optional<Hash128> code_digest(std::string_view image) {
  if (image.size() < 64 || image.substr(0, 4) != std::string_view("\x7f" "ELF", 4) || image[4] != 2) return std::nullopt;
  std::uint64_t shoff;
  std::uint16_t shentsize, shnum, shstrndx;
  if (!read_at(image, 0x28, shoff) || !read_at(image, 0x3A, shentsize) || !read_at(image, 0x3C, shnum) ||
      !read_at(image, 0x3E, shstrndx) || shentsize < 64 || shstrndx >= shnum)
    return std::nullopt;
  struct Section { std::uint32_t name; std::uint64_t offset, size; };
  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::size_t at = shoff + std::size_t(i) * shentsize;
    Section s;
    if (!read_at(image, at, s.name) || !read_at(image, at + 0x18, s.offset) || !read_at(image, at + 0x20, s.size))
      return std::nullopt;
    sections.push_back(s);
  }
  const Section& strtab = sections[shstrndx];
  std::vector<std::pair<std::string, std::string_view>> text;
  for (const auto& s : sections) {
    std::size_t name_at = strtab.offset + s.name;
    if (name_at >= image.size()) return std::nullopt;
    std::string name(image.data() + name_at, strnlen(image.data() + name_at, image.size() - name_at));
    if (name.rfind(".text.", 0) != 0) continue;
    if (s.offset > image.size() || image.size() - s.offset < s.size) return std::nullopt;
    text.emplace_back(name, image.substr(s.offset, s.size));
  }
  std::sort(text.begin(), text.end());
  Hasher h;
  for (const auto& [name, bytes] : text) {
    h.add_field(name);
    h.add_field(bytes);
  }
  return h.digest();
}

} // namespace ciq
