// Cache records (the store, packs, Redis): a record that parses formats
// back into text that parses to the same record.
#include "cache/record.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = ciq::cache::parse_record(text, "fuzz");
  if (!record) return 0;
  std::string formatted = ciq::cache::format_record(*record);
  auto again = ciq::cache::parse_record(formatted, "fuzz-again");
  if (!again || ciq::cache::format_record(*again) != formatted) std::abort();
  ciq::cache::record_merit(*record);
  return 0;
}
