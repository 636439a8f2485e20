// Discovery: one traced build of the default (or, with no build, one
// benchmark run) says what the build compiles, with which ptxas, for which
// target, and which translation units go through ciq-nvcc. The run's search
// space is built from it (space_setup.h); a campaign lists its kernels from
// it. A resumed run reuses the discovery its first attempt completed.
#pragma once

#include "tuner/run/options.h"
#include "tuner/formats/kernel_trace.h"

#include <string>
#include <vector>

namespace ciq::tuner {

/// The modules the default build compiled (none with --space none or
/// --replay), in <out_dir>/discovery; `units` gets the translation units
/// traced through ciq-nvcc. Lists the kernels on stderr, those --kernels
/// selects starred; fails when the build fails, or when --kernels selects
/// none of them.
Result<std::vector<TracedModule>> discover(const TuneOptions& o, std::vector<TracedUnit>& units);

/// kernel-time: the kernels of `modules` that share a module with a timed
/// one (the objective's glob) but are not timed themselves; a module-wide
/// option acts on them too. Empty without a kernel-time objective, or when
/// it times every kernel.
std::vector<std::string> module_mates(const std::vector<TracedModule>& modules, const std::vector<Objective>& objectives);

/// The campaign's discovery: one traced default build (in
/// `<out_dir>/discovery`, through the chosen executor) and the names of the
/// kernels it compiled that `setup.kernels` selects, in build order.
Result<std::vector<std::string>> discover_kernels(TuneOptions options);

} // namespace ciq::tuner
