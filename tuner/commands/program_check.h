// A campaign's last step (`campaign --check-program N`): the program built
// fresh with the cache (what the campaign shipped, merged as a build merges
// it) against built fresh without it (CIQ_DISABLE=1), N interleaved pairs
// of a build and a run, each run's GPU time from its kernel trace. What
// each kernel's verification cannot see: the shipped entries together
// (kernel entries of one module merge their module-wide options), and the
// program's whole GPU time. Measured on an H100 (llm.c, bench/RESULTS.md):
// five winners confirmed one by one; only the fresh builds measured them
// together.
#pragma once

#include "tuner/run/options.h"
#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::tuner {

struct ProgramCheck {
  std::vector<double> without_ms, with_ms;  // each run's GPU time, ms: CIQ_DISABLE=1, then the cache
  double p_value = 1;                       // Welch, one-sided: with the cache faster
  double change = 0;                        // median(with) / median(without) - 1
};

/// Runs the pairs under `dir` (pair-N-without, pair-N-with: each a
/// profiling run's traces and log) and writes `dir`/samples.csv.
Result<ProgramCheck> check_program(const TuneOptions& o, const std::string& dir, int pairs);

/// "... 51.2 -> 50.4 ms (-1.6 %, p = 0.003)": for the campaign's end.
std::string describe(const ProgramCheck& check, int pairs);

} // namespace ciq::tuner
