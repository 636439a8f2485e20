// Control sets (CIQ_CONTROLS, `ciq-cache put --controls`): what parses must
// format back into text that parses to the same set.
#include "spaces/control_set.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto set = ciq::spaces::parse_control_set(text, "fuzz");
  if (!set) return 0;
  std::string formatted = ciq::spaces::format_control_set(*set);
  auto again = ciq::spaces::parse_control_set(formatted, "fuzz-again");
  if (!again || ciq::spaces::format_control_set(*again) != formatted) std::abort();
  ciq::spaces::summarise_control_set(*set);
  return 0;
}
