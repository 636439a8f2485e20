// Space files (the whitelist): parse, then validate a control set parsed
// from the same bytes against it (what a hostile pack meets).
#include "spaces/space.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto space = ciq::spaces::parse_space(text, "fuzz");
  if (!space) return 0;
  for (const auto& knob : space->knobs) knob.domain();
  if (auto set = ciq::spaces::parse_control_set(text, "fuzz"))
    (void)ciq::spaces::validate_controls(*space, *set, ciq::spaces::Policy{});
  return 0;
}
