// Pack files (shared in git, CIQ_PACKS): parse, and a pack that parses
// formats back into one that parses with the same entries.
#include "cache/pack.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto pack = ciq::cache::parse_pack(text, "fuzz");
  if (!pack) return 0;
  auto again = ciq::cache::parse_pack(ciq::cache::format_pack(*pack), "fuzz-again");
  if (!again || again->entries != pack->entries) std::abort();
  return 0;
}
