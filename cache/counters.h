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
#include <string_view>
#include <string>
#include <vector>

namespace ciq::cache {

/// Which wrapper counts: its counters' names in the file start with
/// nothing (ciq-ptxas), "unit." (ciq-cicc, the NVVM stage) or "nvcc.".
enum class Tool { ptxas, cicc, nvcc };

/// What the wrappers count. `applied`: controls from a cache entry (a hit)
/// were applied; `tuning_applied`: a tuning build's candidate (CIQ_CONTROLS)
/// was. Stats files written before tuning.applied existed count both as
/// `applied`.
enum class Counter {
  calls, hit, miss, tuning, applied, tuning_applied, rejected, quarantined, controls_failed, acf_unsupported,
  pack_hit, pack_refused, remote_hit, remote_error, remote_refused,
  lto_link, unit_user_prefix, unit_no_ciq_cicc, unit_unknown_toolkit, unit_no_spaces, // ciq-nvcc's NVVM-stage routing
  memo_builds, memo_steps_reused, memo_fallback, memo_unsuitable,     // ciq-nvcc's step memo
  deps_stamped,                                                       // ciq-nvcc: compiles whose dependency file names stamps
  applied_ptx_only,                                                   // ciq-cicc: applied to PTX nvcc embeds only (no machine code)
  gpu_refused, gpu_other_model,                                       // CIQ_GPU_POLICY (cache/gpu_policy.h), per entry
};

/// Why a wrapper ran the real tool unchanged: the one fall-back point of
/// each wrapper takes one of these (counted as passthrough.<name>).
enum class Pass {
  unparsed_args, info, no_input, several_inputs, no_target, virtual_target, debug, disabled, user_prefix,
  no_ciq_ptxas, cache_unusable, no_cache, unreadable_input, input_not_a_file, unknown_ptxas, unknown_nvcc, no_entry, tuned_default,
  no_space, rejected, no_scratch, directive_edit_failed, acf_missing, spawn_failed,
};

/// The name a counter has in the stats file, without the tool's prefix.
std::string_view counter_name(Counter counter);
std::string_view pass_name(Pass reason);

/// One call's counts, written at its end.
class Tally {
public:
  explicit Tally(Tool tool) : tool_(tool) {}
  void add(Counter counter, int times = 1) { counters_.insert(counters_.end(), std::size_t(times), counter); }
  void passed(Pass reason) { passes_.push_back(reason); }
  void merge(const Tally& other);
  /// Every count as the file names it.
  std::vector<std::string> names() const;

private:
  Tool tool_;
  std::vector<Counter> counters_;
  std::vector<Pass> passes_;
};

/// Adds one to each count of `tally`. Best effort: failures are logged only.
void bump_counters(const std::string& cache_dir, const Tally& tally);

/// All counters; an absent file gives an empty map.
Result<std::map<std::string, std::uint64_t>> read_counters(const std::string& cache_dir);

Result<void> reset_counters(const std::string& cache_dir);

} // namespace ciq::cache
