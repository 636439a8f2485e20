// ptxas and cicc command lines as the wrappers scan them (words split at
// NUL bytes), codegen flags, and base64 (packs' blobs): what decodes
// encodes back to text that decodes to the same bytes.
#include "cache/cicc_command.h"
#include "cache/pack.h"
#include "cache/ptxas_command.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::string word;
  for (char c : text) {
    if (c == '\0') args.push_back(std::move(word)), word.clear();
    else word += c;
  }
  args.push_back(word);
  (void)ciq::cache::scan_ptxas_args(args);
  if (auto cicc = ciq::cache::scan_cicc_args(args)) (void)ciq::cache::apply_cicc_options(args, *cicc, {});
  (void)ciq::cache::parse_codegen_flags(text);
  ciq::cache::normalise_cicc_input(text);
  if (auto bytes = ciq::cache::base64_decode(text)) {
    auto back = ciq::cache::base64_decode(ciq::cache::base64_encode(*bytes));
    if (!back || *back != *bytes) std::abort();
  }
  return 0;
}
