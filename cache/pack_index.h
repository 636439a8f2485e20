// A pack's index: the pack parsed and checked once per content (path,
// inode, size, mtime) into an LMDB store under <cache dir>/packs/<id>,
// which compiles then read like the local cache.
//
// Bounded, once, clean: a compile indexes a small pack itself (at most
// k_inline_pack_bytes: tens of milliseconds); a larger one is indexed once,
// by a detached process of its own, while compiles go on without it (a
// 271 MB pack cost 5.2 s in every compile and was never finished, the
// watchdog stopping each attempt). One builder at a time (a lock per
// index); it builds aside and renames into place, so readers never see
// half an index, and removes what a killed builder left.
#pragma once

#include "utils/result.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ciq::cache {

inline constexpr std::uint64_t k_inline_pack_bytes = 8u << 20;

/// The directory of `pack`'s index in `cache_dir`, built first if needed;
/// std::nullopt while it is being built elsewhere (a miss for now). Fails
/// when the pack is unreadable or malformed, or the index cannot be made.
Result<std::optional<std::string>> pack_index(const std::string& cache_dir, const std::string& pack);

} // namespace ciq::cache
