// `ciq-cache stale`: the entries a toolkit or GPU change has left behind.
// An entry is stale for the compiler when its key was made for another
// ptxas (kernel and module entries) or nvcc (unit entries) than the one
// found now: its key names the old version, so it can no longer be found
// (a toolkit upgrade misses it silently). It is stale for the GPU when it
// was verified on another GPU model than the one present: it still applies
// (a key names the target architecture, not the GPU), but its gain was
// measured elsewhere. Entries that record no GPU (tuned with a compile-only
// objective, or shipped before ciq recorded one) are counted, not compared.
#pragma once

#include "utils/result.h"

#include <ostream>
#include <string>

namespace ciq::cache::cli {

struct StaleRequest {
  std::string gpu;  // --gpu: the GPU model to compare with ("" = $CIQ_GPU_MODEL, else NVML's first GPU)
};

/// Lists the stale entries of the cache under `cache_dir`, grouped by
/// reason and by what they were made for, with counts: text, or with
/// `json` one object. What cannot be compared (no ptxas found, no GPU
/// named or present) is said and skipped. Fails only when the cache is
/// unusable; finding stale entries is not a failure.
Result<void> list_stale(const std::string& cache_dir, const StaleRequest& request, bool json, std::ostream& out);

} // namespace ciq::cache::cli
