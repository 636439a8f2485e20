// `ciq-tuner retune`: tune again, on this toolkit and GPU, the searches
// that made cache entries. It selects entries (those `ciq-cache stale`
// lists, with --stale; those of kernels matching --kernels), finds each
// one's run from its provenance (the saved command line and the directory
// it ran in, recorded_runs.h) and starts that run afresh: the same
// arguments, a new run directory under the retune's, argv without a shell,
// one run for all the entries one run made. Each new run ships as runs do,
// to the local cache only (a run made with --publish is told how to
// publish): under this toolkit's keys (the old entries, under the old
// keys, stay), and an earlier winner stays where nothing beats the default
// now, unless --drop-losers removes it. An entry whose run cannot be run
// again (its command line missing, unreadable, or not yours: it came in a
// pack) is skipped with the reason. The end is a table, one row per
// kernel: kernel, the entries it stands for (its run's unit and module
// entries in its first row, and every entry the retune changed), old gain,
// new gain, verdict (what happened to its entries).
#pragma once

#include <string>

namespace ciq::tuner {

struct RetuneOptions {
  std::string cache_dir;     // "" = $CIQ_CACHE_DIR, else ~/.cache/ciq
  bool stale = false;        // the entries `ciq-cache stale` lists
  std::string kernels;       // kernel entries whose names match (with --stale: of those); "" = any
  std::string gpu;           // --stale: the GPU model compared with ("" = CIQ_GPU_MODEL, else NVML's first GPU)
  bool drop_losers = false;  // remove an old winner when its new run finds nothing that wins
  bool dry_run = false;      // say what would run, run nothing
  bool json = false;         // one JSON object on stdout instead of the table
  std::string out_dir;       // "" = ./ciq-retune-<date>-<time>
};

/// Runs the retune; the exit status: 0 when every selected run ran (or
/// was skipped with a reason), 1 when a run failed, the cache could not be
/// read or the --out directory made, 2 for a usage error.
int run_retune(const RetuneOptions& options);

} // namespace ciq::tuner
