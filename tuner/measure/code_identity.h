// What a candidate compiled to, as far as its objectives can see, and the
// reuse it allows: a candidate whose code digest (plus parameters) equals
// one already measured is that one, and takes its result instead of being
// benchmarked ("same-code" in the journal).
#pragma once

#include "tuner/objectives/objectives.h"
#include "tuner/rundir/journal.h"
#include "tuner/search/candidate.h"

#include <string>
#include <utility>
#include <vector>

namespace ciq::tuner {

/// The digest that identifies what a build compiled, for `objectives`.
/// When every benchmark objective is kernel-time, only the code of the
/// kernels they time counts (a candidate whose timed kernels are
/// byte-identical to a measured one's is that one, whatever it did to the
/// others); otherwise every module's code. Then ";NAME=VALUE" per entry of
/// `params`. "" when some of it is unknown (a module or timed kernel
/// without a code hash, an empty trace, timed kernels that none of the
/// modules holds: a JIT or a library compiles them): nothing is then
/// reused.
std::string code_digest(const std::vector<TracedModule>& trace, const std::vector<Objective>& objectives,
                        const std::vector<std::pair<std::string, std::string>>& params);

/// Makes `r` a reuse of `same` (an "ok" record with r's digest): its
/// evaluation and samples, status same-code, and as reason "same code as
/// evaluation N".
void reuse_same_code(EvalRecord& r, const EvalRecord& same);

} // namespace ciq::tuner
