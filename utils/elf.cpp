#include "utils/elf.h"

#include <cstring>
#include <elf.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ciq {

namespace {

bool read_header(std::string_view image, std::uint64_t offset, Elf64_Shdr& out) {
  if (offset > image.size() || image.size() - offset < sizeof out) return false;
  std::memcpy(&out, image.data() + offset, sizeof out);
  return true;
}

Hash128 canonical(XXH128_hash_t h) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  Hash128 out;
  std::memcpy(out.data(), c.digest, out.size());
  return out;
}

// Hasher::add_field's framing (the length as 8 native bytes, then the
// bytes), so digests agree with those utils/hash.h computes.
void add_field(XXH3_state_t& state, std::string_view bytes) {
  std::uint64_t n = bytes.size();
  XXH3_128bits_update(&state, &n, sizeof n);
  XXH3_128bits_update(&state, bytes.data(), bytes.size());
}

} // namespace

bool is_elf_image(std::string_view image) {
  return image.size() >= SELFMAG && std::memcmp(image.data(), ELFMAG, SELFMAG) == 0;
}

std::optional<std::map<std::string, std::string_view>> elf_text_sections(std::string_view image) {
  Elf64_Ehdr file;
  if (!is_elf_image(image) || image.size() < sizeof file) return std::nullopt;
  std::memcpy(&file, image.data(), sizeof file);
  if (file.e_ident[EI_CLASS] != ELFCLASS64 || file.e_shentsize < sizeof(Elf64_Shdr) || file.e_shstrndx >= file.e_shnum)
    return std::nullopt;
  Elf64_Shdr names;
  if (!read_header(image, file.e_shoff + std::uint64_t(file.e_shstrndx) * file.e_shentsize, names) ||
      names.sh_offset > image.size() || image.size() - names.sh_offset < names.sh_size)
    return std::nullopt;
  std::string_view strings = image.substr(names.sh_offset, names.sh_size);
  constexpr std::string_view prefix = ".text.";
  std::map<std::string, std::string_view> text;
  for (std::uint16_t i = 0; i < file.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!read_header(image, file.e_shoff + std::uint64_t(i) * file.e_shentsize, section)) return std::nullopt;
    if (section.sh_name >= strings.size()) return std::nullopt;
    std::string_view name = strings.substr(section.sh_name);
    name = name.substr(0, name.find('\0'));
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    if (section.sh_type == SHT_NOBITS || section.sh_offset > image.size() || image.size() - section.sh_offset < section.sh_size)
      continue;
    text[std::string(name.substr(prefix.size()))] = image.substr(section.sh_offset, section.sh_size);
  }
  return text;
}

std::optional<Hash128> code_digest(std::string_view image) {
  auto text = elf_text_sections(image);
  if (!text) return std::nullopt;
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  for (const auto& [name, bytes] : *text) {
    add_field(state, ".text." + name);
    add_field(state, bytes);
  }
  return canonical(XXH3_128bits_digest(&state));
}

std::map<std::string, Hash128> kernel_code_hashes(std::string_view image) {
  std::map<std::string, Hash128> hashes;
  if (auto text = elf_text_sections(image))
    for (const auto& [name, bytes] : *text) hashes[name] = canonical(XXH3_128bits(bytes.data(), bytes.size()));
  return hashes;
}

Hash128 image_xxh128(std::string_view bytes) { return canonical(XXH3_128bits(bytes.data(), bytes.size())); }

std::string hash_hex(const Hash128& hash) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * hash.size());
  for (std::uint8_t byte : hash) {
    hex += digits[byte >> 4];
    hex += digits[byte & 15];
  }
  return hex;
}

} // namespace ciq
