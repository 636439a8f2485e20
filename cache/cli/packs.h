// `ciq-cache export`, `import` and `merge`: moving tuned results between
// caches as pack files. Everything that comes in from a pack goes through
// the validation local entries get (knobs of a known space, values in their
// domain, unsafe knobs only under the wrappers' rule: CIQ_ALLOW_UNSAFE=1,
// size limits, blob digests); a pack with anything wrong in it is refused as
// a whole and nothing is written. With `json`, each command prints JSON lines.
#pragma once

#include "utils/result.h"

#include <ostream>
#include <string>

namespace ciq::cache::cli {

struct ExportFilter {
  std::string kernels; // glob over kernel names (kernel entries, and module entries naming one)
  std::string space;   // control-set space name
  std::string gpu;     // a GPU model: entries tuned on it (tuned_on.h same_gpu_model: case and a leading "NVIDIA " ignored)
  std::string since;   // entries created on or after this date: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z] (UTC)
};

/// Whether `since` is a date export can compare with (see ExportFilter);
/// the error names the accepted forms.
Result<void> check_since(const std::string& since);

Result<void> export_pack(const std::string& cache_dir, const ExportFilter& filter, const std::string& output,
                         bool json, std::ostream& out);
Result<void> import_pack(const std::string& cache_dir, const std::string& pack_file, bool dry_run, bool json,
                         std::ostream& out);
/// `ciq-cache import-acfs PATH [--name NAME]`: an ACF candidate set.
Result<void> import_acfs(const std::string& cache_dir, const std::string& path, const std::string& name, bool json,
                         std::ostream& out);

/// `ciq-cache push URL`: every local record (and the ACF blobs they name)
/// to the team's Redis, keeping remote records with better evidence. The
/// URL's password is never printed.
Result<void> push_cache(const std::string& cache_dir, const std::string& url, bool json, std::ostream& out);
/// `ciq-cache merge A B -o C`: one line per key (in A only, added from B,
/// the same in both, replaced by B's better result, kept A's), then the
/// total. A pack with a refused entry is refused as a whole: every refused
/// key is reported with its reason and nothing is written.
Result<void> merge_packs(const std::string& a, const std::string& b, const std::string& output, bool json,
                         std::ostream& out);

} // namespace ciq::cache::cli
