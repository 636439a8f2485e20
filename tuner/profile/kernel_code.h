// Per-kernel code identity from a cubin: the tuner's "same code" test for
// one kernel, and the link between a kernel the program ran and the code
// ptxas wrote. ptxas puts each function's machine code in its own ELF
// section `.text.<mangled name>`; hashing that section's bytes names the
// kernel's instructions and nothing else (not the command line ptxas embeds,
// not the other kernels of the module). Functions a kernel calls have
// sections, and hashes, of their own; launch attributes kept in
// `.nv.info.<name>` are not covered.
//
// Compiled into both ciq_kernel_trace and libciq-inject (the injection
// library hashes each module the driver loads), so it depends on nothing
// but <elf.h> and xxHash (inlined: no library to link into the .so).
#pragma once

#include "utils/hash.h"

#include <map>
#include <string>
#include <string_view>

namespace ciq::profile {

/// True when `image` starts with the ELF magic (a cubin); PTX, fatbins and
/// anything else are not ELF.
bool is_elf_image(std::string_view image);

/// XXH3-128 of each `.text.<name>` section's bytes of the 64-bit ELF
/// `image`, keyed by <name> (the mangled function name). Empty when `image`
/// is not a well-formed ELF64 or holds no such section; a section whose
/// bytes lie outside the image is left out.
std::map<std::string, Hash128> kernel_code_hashes(std::string_view image);

/// XXH3-128 of all of `bytes` (a module's identity), in the canonical
/// byte order utils/hash.h uses.
Hash128 image_xxh128(std::string_view bytes);

/// Lowercase hex of a digest, as the trace and the cache write it.
std::string hash_hex(const Hash128& hash);

} // namespace ciq::profile
