// PTX as ciq-ptxas reads it: the scanner (kernels, directives, targets) and
// the normalisation that keys it.
#include "cache/ptx.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view ptx(reinterpret_cast<const char*>(data), size);
  ciq::cache::scan_ptx(ptx);
  ciq::cache::normalise_ptx(ptx);
  return 0;
}
