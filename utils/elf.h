// The code in a cubin, without its metadata: ptxas embeds its command line
// in the ELF, so two builds with different flags but identical machine code
// differ as files. The tuner compares code digests to skip benchmarking
// candidates whose code is byte-identical to one already measured.
#pragma once

#include "utils/hash.h"

#include <optional>
#include <string_view>

namespace ciq {

/// XXH3-128 over the names and contents of every `.text.*` section of a
/// 64-bit ELF image; std::nullopt when `image` is not one.
std::optional<Hash128> code_digest(std::string_view image);

} // namespace ciq
