// One tuning run, start to end: discovery build (which kernels and keys
// exist), search space, baseline, search, verification of the winner
// against the default (interleaved, fresh processes, Welch's t-test), and
// shipping it to the cache with its provenance, or recording "tuned, no
// gain". Everything lands in the run directory: an append-only journal (a
// resume replays it), results.csv, the best control set and a summary.
#pragma once

#include "tuner/measure/evaluator.h"
#include "tuner/search/search.h"

#include <string>
#include <vector>

namespace ciq::tuner {

inline constexpr const char* k_tuner_version = "ciq-tuner " CIQ_VERSION;

struct TuneOptions {
  TuningSetup setup;
  std::string space = "";            // "" = the traced ptxas' space; "none" = parameters only
  std::vector<std::string> params;   // --param specs
  std::vector<std::string> seeds;    // control-set files to seed the population with
  bool occupancy_probes = true;      // seed per-kernel maxnreg at occupancy limits (occupancy.h)
  SearchConfig search;
  std::string out_dir;               // the run directory
  bool resume = false;               // continue the run in out_dir
  double min_effect = 0.01;          // smallest relative gain worth shipping
  std::size_t prefer = 0;            // several objectives: the one whose best (giving up no other) ships (--prefer)
  double alpha = 0.05;               // significance level
  int verify_runs = 10;              // interleaved runs per side when verifying
  bool allow_unsafe = false;
  std::string stages = "all";        // --stages: all, ptxas or nvcc
  std::vector<TracedUnit> units;     // the discovery build's translation units (set by the run)
  bool ship = true;                  // write the verified winner to the cache
  bool json = false;                 // last stdout line: a JSON summary
  std::string cache_dir;
  std::string acf_candidates;        // an ACF candidate set's name, or a zip/directory to import as one
  std::string publish;               // redis:// URL to upload what ships to (the team tier)
  std::string replay;                // recorded samples to answer evaluations from (see replay.h)
  bool random_search = false;        // the baseline strategy instead of the genetic search
  bool generational = false;         // generations even with --jobs > 1 (reproducible)
  std::vector<std::string> command_line; // saved for --resume
};

/// Runs the whole tuning; returns the process exit status (0: finished,
/// whether or not something shipped; 1: could not tune).
int run_tuning(TuneOptions options);

/// `dir` made absolute (its parent resolved), or `<prefix>-<date>-<time>`
/// in the current directory when empty.
std::string output_directory(std::string dir, const char* prefix);

/// The campaign's discovery: one traced default build (in
/// `<out_dir>/discovery`, through the chosen executor) and the names of the
/// kernels it compiled that `setup.kernels` selects, in build order.
Result<std::vector<std::string>> discover_kernels(TuneOptions options);

/// `ciq-tuner sample`: prints `count` random candidates of the space, one
/// canonical form per line, without running anything.
int sample_space(const TuneOptions& options, int count);

} // namespace ciq::tuner
