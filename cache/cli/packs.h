// `ciq-cache export`, `import` and `merge`: moving tuned results between
// caches as pack files. Everything that comes in from a pack goes through
// the validation local entries get (knobs of a known space, values in their
// domain, no unsafe knobs, size limits, blob digests); a pack with anything
// wrong in it is refused as a whole and nothing is written.
#pragma once

#include "utils/result.h"

#include <ostream>
#include <string>

namespace ciq::cache::cli {

struct ExportFilter {
  std::string kernels; // glob over kernel names (kernel entries, and module entries naming one)
  std::string space;   // control-set space name
  std::string gpu;     // substring of the provenance's gpu
  std::string since;   // entries created on or after this date (YYYY-MM-DD...)
};

Result<void> export_pack(const std::string& cache_dir, const ExportFilter& filter, const std::string& output,
                         std::ostream& out);
Result<void> import_pack(const std::string& cache_dir, const std::string& pack_file, bool dry_run, bool json,
                         std::ostream& out);
/// `ciq-cache import-acfs PATH [--name NAME]`: an ACF candidate set.
Result<void> import_acfs(const std::string& cache_dir, const std::string& path, const std::string& name, std::ostream& out);

/// `ciq-cache push URL`: every local record (and the ACF blobs they name)
/// to the team's Redis, keeping remote records with better evidence.
Result<void> push_cache(const std::string& cache_dir, const std::string& url, std::ostream& out);
Result<void> merge_packs(const std::string& a, const std::string& b, const std::string& output, std::ostream& out);

} // namespace ciq::cache::cli
