// The run's search space from the discovery: the traced ptxas' knobs (and
// the NVVM stage's, the --param dimensions; or the replay's space), one
// more dimension for --acf-candidates, and the candidates the search starts
// from: --seed-controls files and occupancy probes (search/occupancy.h).
// `ciq-tuner sample` draws from a space built the same way, without a
// discovery.
#pragma once

#include "tuner/run/options.h"
#include "tuner/formats/kernel_trace.h"
#include "tuner/search/candidate.h"

#include <vector>

namespace ciq::tuner {

/// The space to search; sets o.setup.compiler (does it have compiler
/// knobs), o.setup.acf_cache_dir (with ACFs) and o.search.seeds. An ACF
/// set that does not fit the traced ptxas or GPU is a warning and searched
/// without; a seed that does not parse, or fits no dimension, fails.
Result<SearchSpace> build_run_space(TuneOptions& o, const std::vector<TracedModule>& discovery);

/// `ciq-tuner sample`: prints `count` random candidates of the space, one
/// canonical form per line, without running anything.
int sample_space(const TuneOptions& options, int count);

} // namespace ciq::tuner
