// Build-dependency stamps: one small file per cache key,
// <cache dir>/stamps/<key hex>, whose content changes exactly when what the
// local cache answers under that key changes (an entry put, replaced,
// removed, quarantined). ciq-nvcc names the stamps of the keys a compile
// looked up in the compile's dependency file (wrapper/deps.h), so that
// make, ninja and ccache's depend mode rebuild exactly the translation
// units whose entries changed, the way they rebuild for a changed header.
//
// Who writes them:
//   - a wrapper asked for dependencies (CIQ_STAMPS_OUT) makes the stamp of
//     each key it looked up, holding what it found (stamp_for_lookup);
//   - every committed write to the store's records or quarantine tables
//     rewrites the stamps that exist for the keys it touched
//     (refresh_stamps, called by Store), so ciq-cache put/rm/import/merge,
//     a tuner's ship, retune and a wrapper's quarantine all reach builds.
// A stamp is rewritten (a new file renamed over it: a new mtime) only when
// its content differs, so an unchanged entry dirties nothing. A stamp that
// cannot be made (a read-only or absent cache directory) is simply not
// named: no build fails for it, none is dirty on every run for it.
//
// What a stamp does not follow: packs (CIQ_PACKS) are named in dependency
// files as whole files, and entries a remote (CIQ_REMOTE) answers reach
// builds through the local copy a read-through makes.
#pragma once

#include "cache/store.h"
#include "utils/hash.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::cache {

/// The name, under <cache dir>/stamps/, of the dependency a unit compiled
/// by a tuning build names: it never exists, so the next build compiles
/// the unit again (wrapper/deps.h); `ciq-cache doctor` reads it as such.
inline constexpr std::string_view k_tuning_build_stamp = "compiled-with-other-controls";

/// <cache dir>/stamps/<32 hex digits>.
std::string stamp_path(const std::string& cache_dir, const Hash128& key);

/// The content of a stamp for the record text a lookup finds under a key
/// (std::nullopt: none, or quarantined).
std::string stamp_text(const std::optional<std::string>& record);

/// Makes the stamp of `key` hold `text` when it is absent (dated when the
/// cache last changed, not now: see first_stamp_time in stamps.cpp); an existing
/// stamp is left alone when it holds `text`, and otherwise rewritten with
/// `current` (what the store holds now: the stamp lagged behind a write
/// that could not refresh it). Returns the stamp's path, or std::nullopt
/// when it cannot be made (the reason is logged at debug level).
std::optional<std::string> stamp_for_lookup(const std::string& cache_dir, const Hash128& key, const std::string& text,
                                            const std::string& current);

/// After a committed write to `store` (whose directory is <cache dir>/db):
/// rewrites the existing stamps of `raw_keys` (the tables' 16-byte keys)
/// whose content no longer matches the store. Never fails; a stamp it
/// cannot rewrite is removed, so that the next build rebuilds and remakes it.
void refresh_stamps(const Store& store, const std::vector<std::string>& raw_keys);

/// The content a stamp should have for `key` in `store` now.
std::string current_stamp_text(const Store& store, std::string_view raw_key);

} // namespace ciq::cache
