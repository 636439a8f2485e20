// The code in a cubin, without its metadata. ptxas puts each function's
// machine code in its own ELF section `.text.<mangled name>` and embeds its
// command line elsewhere in the file, so two builds with different flags but
// identical machine code differ as files and agree here. The tuner compares
// these digests to skip benchmarking candidates whose code is byte-identical
// to one already measured (the whole module's, or only its targeted
// kernels'), and libciq-inject names the code each kernel ran by the same
// per-kernel hash.
//
// Built as its own small library (ciq_elf: position-independent, xxHash
// inlined, no other ciq code) because the injection library, a shared
// object loaded into the user's program, compiles it in too. Reads section
// headers with <elf.h>'s Elf64 types, copying each out with memcpy (an image
// handed over by the driver need not be aligned); nothing NVIDIA-specific
// is decoded. Functions a kernel calls have sections, and hashes, of their
// own; launch attributes kept in `.nv.info.<name>` are not covered.
#pragma once

#include "utils/hash.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ciq {

/// True when `image` starts with the ELF magic (a cubin); PTX, fatbins and
/// anything else are not ELF.
bool is_elf_image(std::string_view image);

/// The bytes of each `.text.<name>` section of the 64-bit ELF `image`,
/// keyed by <name> (the mangled function name); std::nullopt when `image`
/// is not a well-formed ELF64 (headers or names outside the image). A
/// section whose bytes lie outside the image is left out.
std::optional<std::map<std::string, std::string_view>> elf_text_sections(std::string_view image);

/// XXH3-128 over the names and contents of every `.text.*` section, in
/// name order; std::nullopt when `image` is not a well-formed ELF64.
std::optional<Hash128> code_digest(std::string_view image);

/// XXH3-128 of each kernel's `.text.<name>` bytes, keyed by <name>; empty
/// when `image` is not a well-formed ELF64 or holds no such section.
std::map<std::string, Hash128> kernel_code_hashes(std::string_view image);

/// XXH3-128 of all of `bytes` (a module's identity), in the canonical
/// byte order utils/hash.h uses.
Hash128 image_xxh128(std::string_view bytes);

/// Lowercase hex of a digest, as the traces and the cache write it.
std::string hash_hex(const Hash128& hash);

} // namespace ciq
