// CIQ_PACKS=a.ciqpack:b.ciqpack lets the wrappers consult pack files on a
// local miss without importing them. Each pack is parsed and checked once
// per content (path, inode, size, mtime) into a read-only LMDB index under
// <cache dir>/packs/; later compiles only open that index. Entries found
// there are validated against the running ptxas' space before they are
// applied, exactly as local entries are.
#pragma once

#include "cache/store.h"
#include "utils/result.h"

#include <optional>
#include <string>

namespace ciq::wrapper {

struct PackIndex {
  std::string directory; // the index's cache directory (for quarantine marks)
  cache::Store store;
};

/// The index of `pack_path`, built now if this content has none yet.
/// Fails when the pack is unreadable or refused (bad checksum, ...).
Result<PackIndex> open_pack_index(const std::string& cache_dir, const std::string& pack_path);

} // namespace ciq::wrapper
