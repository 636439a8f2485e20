// `ciq-tuner reverify`: whether the shipped entries still win here, after a
// driver update or on another GPU, without tuning again. For each run that
// shipped a selected entry (recorded_runs.h), it starts that run's own
// command line once more as `run --verify-controls` (remeasure.h): the
// default and the run's shipped control set, re-measured with the run's
// benchmark, interleaved, with the statistics of a run's verification. The
// cache is not changed. The end is a table, one row per kernel: kernel,
// the entries it stands for (its run's unit and module entries counted in
// its first row), recorded gain, gain now, verdict (still wins, stopped
// winning, could not measure and why).
#pragma once

#include <string>

namespace ciq::tuner {

struct ReverifyOptions {
  std::string cache_dir;  // "" = $CIQ_CACHE_DIR, else ~/.cache/ciq
  std::string kernels;    // kernel entries whose names match; "" = every entry with a recorded run
  int runs = 0;           // interleaved pairs per side (--verify-runs of the runs); 0 = each run's own
  std::string out_dir;    // the verification runs' directories; "" = ./ciq-reverify-<date>-<time>
  bool json = false;      // one JSON object on stdout instead of the table
};

/// Exit status of reverify when some entry stopped winning; 3 when none
/// did but some could not be measured. 0: every one still wins.
inline constexpr int k_stopped_winning = 1;
inline constexpr int k_not_measured = 3;

/// Runs the re-verification; the exit status as above (1 also when the
/// cache cannot be read).
int run_reverify(const ReverifyOptions& options);

} // namespace ciq::tuner
