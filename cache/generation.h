// The cache's generation: one short file, <cache dir>/generation, holding
// an identifier (32 hex digits) that every committed write to the store's
// records or quarantine tables replaces with a fresh random one. It lets a
// program that keys its own cache on the compiler's identity (Triton keys
// every kernel on the text of `ptxas --version`) see, for the price of one
// small file read, that what ciq would apply may have changed, where the
// per-key stamps (cache/stamps.h) would need the PTX and a lookup.
//
// Why a fresh random identifier and not a digest of the entries: a program
// that read the generation before a write may go on compiling, after it,
// with the new entries under the old identifier (Triton reads the version
// once per process). A digest would come back when the entries do (a put,
// then its rm) and hand the next run those kernels; an identifier that is
// never used again cannot. The price: storing the same controls again is a
// new generation too, so such programs compile their kernels once more.
#pragma once

#include <optional>
#include <string>

namespace ciq::cache {

/// <cache dir>/generation.
std::string generation_path(const std::string& cache_dir);

/// After a committed write to the store in <cache dir>/db: gives the cache
/// a new generation. Never fails; when the file cannot be rewritten it is
/// removed (the next reader then starts a new one), and when that fails too
/// a warning says that programs may keep kernels compiled for the entries
/// before.
void new_generation(const std::string& cache_dir);

/// The generation of the cache in `cache_dir`: std::nullopt when the cache
/// holds no store (nothing to apply). A store without the file (made by an
/// older ciq, or the file was removed) gets a new generation here; when the
/// directory cannot be written (a shared read-only cache, which nobody
/// writes either), the store file's identity stands in for it.
std::optional<std::string> current_generation(const std::string& cache_dir);

} // namespace ciq::cache
