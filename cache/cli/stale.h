// `ciq-cache stale`: the entries a toolkit or GPU change has left behind,
// printed: what cache/stale.h finds (an entry made for another ptxas or
// nvcc than the one found now, or verified on another GPU model than the
// one present), grouped with counts, as text or one JSON object.
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
