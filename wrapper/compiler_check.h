// `ciq-nvcc --ciq-compiler-check`: the text ccache's `compiler_check`
// hashes into every object's key (docs/builds.md, "ccache"), so that ccache
// never hands one build an object compiled in another of ciq's modes.
//
// ccache in depend mode keys an object on the files its dependency file
// lists; ciq-nvcc lists the stamps of the cache keys a compile looked up
// (wrapper/deps.h), so an entry put or removed changes exactly the keys of
// the units it concerns. A compile that lists no stamps (CIQ_DISABLE=1, a
// cache it cannot write, another user's cache) is the hole: ccache keeps
// its plain object under a key that names only the source and headers, and
// every later lookup of that unit matches it, tuned entry or not. With this
// check the key also holds ciq's mode:
//   - ciq-nvcc's version and the real nvcc (path and file identity: what
//     ccache's default mtime check would have read, had ciq-nvcc not stood
//     in front of it);
//   - "disabled" (the object is nvcc's own), else whether this compile can
//     stamp its dependency file, and when it cannot, the cache's generation
//     (cache/generation.h): every change of that cache then changes every
//     key, the safe fallback where per-key stamps are missing;
//   - the settings that choose among entries (CIQ_ALLOW_UNSAFE,
//     CIQ_GPU_POLICY, CIQ_GPU_MODEL, CIQ_SPACES_DIR, CIQ_REAL_PTXAS), a
//     tuning candidate's controls, the packs and the remote.
// An entry's own change stays the stamps' business: the text does not move
// when an entry is put or removed in a cache this user can write, so a ship
// recompiles only the units it concerns.
#pragma once

#include <string>
#include <vector>

namespace ciq::wrapper {

/// Whether `args` (after the tool's name) ask for the compiler check only.
bool asks_compiler_check(const std::vector<std::string>& args);

/// The text for the real nvcc at `real_nvcc` and the cache in `cache_dir`,
/// in this environment. Never fails: a part it cannot read is named as such.
std::string compiler_check_text(const std::string& real_nvcc, const std::string& cache_dir);

/// Whether a compile here can make the stamps of the cache in `cache_dir`:
/// the directory (and its stamps/, where present) is a real directory this
/// user owns and may write, or it does not exist yet and its nearest
/// existing parent may be written (the wrappers create it).
bool stamps_possible(const std::string& cache_dir);

} // namespace ciq::wrapper
