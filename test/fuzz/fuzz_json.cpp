// JSON (traces, journals, summaries, Booster Pack manifests) and the JSON
// writer: any bytes escaped as a string literal must read back.
#include "utils/json.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ciq::parse_json(text);
  auto quoted = ciq::parse_json(ciq::json_line(nlohmann::ordered_json(std::string(text))));
  if (!quoted || quoted->kind != ciq::JsonValue::Kind::string) std::abort();
  return 0;
}
