// The wrappers' counters (hits, misses, applied, quarantined, and each
// reason for passing a call through unchanged), kept in <cache dir>/stats as
// `name = count` lines. Updates are serialised with flock and cost a few
// tens of microseconds; they never wait more than ~20 ms for the lock (the
// update is skipped instead), and a damaged file counts as zeros, never as
// an error in a build.
#pragma once

#include "utils/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ciq::cache {

/// Adds one to each named counter. Best effort: failures are logged only.
void bump_counters(const std::string& cache_dir, const std::vector<std::string>& names);

/// All counters; an absent file gives an empty map.
Result<std::map<std::string, std::uint64_t>> read_counters(const std::string& cache_dir);

Result<void> reset_counters(const std::string& cache_dir);

} // namespace ciq::cache
