// Building the search space of a run: the compiler knobs of the space of
// the ptxas that compiled the traced kernels (only safety classes the run
// allows: `numerics` needs a --check, `unsafe` needs --allow-unsafe),
// per-kernel directives for the kernels --kernels selects, the knobs of
// the NVVM stage (nvcc space) when the build went through ciq-nvcc and
// the targeted kernels' translation units were traced, and the
// application parameters.
#pragma once

#include "spaces/space.h"
#include "tuner/search/candidate.h"
#include "tuner/objectives/objectives.h"

#include <string>
#include <vector>

namespace ciq::tuner {

struct SpaceRequest {
  std::string space_name;              // "" = from the trace; "none" = no compiler knobs
  std::vector<std::string> params;     // --param specs
  std::string kernels;                 // glob; "" = every traced kernel
  bool have_check = false;
  bool allow_unsafe = false;
  std::string stages = "all";          // "all", "ptxas" (no NVVM-stage knobs) or "nvcc" (no ptxas knobs)
  std::vector<TracedUnit> units;       // the discovery build's translation units
  // `run --separately`: with several targeted kernels, only kernel-local
  // knobs (each kernel's directives); the module-wide ptxas options and the
  // NVVM stage's knobs act on every targeted kernel a candidate compiles,
  // so they are left out (named in SearchSpace::shared_left_out).
  bool separately = false;
};

/// The traced kernels `glob` selects (all when empty), by name, sorted.
std::vector<std::string> targeted_kernels(const std::vector<TracedModule>& trace, const std::string& glob);

/// `trace` is the discovery build's (may be empty when space_name names a
/// space or is "none").
Result<SearchSpace> build_search_space(const SpaceRequest& request, const std::vector<TracedModule>& trace);

/// Adds the knobs of `compiler` (a ptxas space) to `space`, which holds no
/// dimensions yet: its options, and its directives for each traced kernel
/// `request.kernels` selects. Nothing the space file says ptxas refuses or
/// ignores is proposed (see ptxas-13.space's header): values below a knob's
/// floor are not searched; a [conflict] becomes an Exclusion that leaves
/// its `excludes` knob at the default; and from `trace` (each kernel's
/// declared block size, the target's SM) a knob that `needs` a block size
/// is offered only where the PTX declares one or another dimension sets
/// it, and a blocks-per-SM knob only with values that fit. With an empty
/// trace nothing is known of the PTX, and those knobs keep their domains.
void add_compiler_knobs(SearchSpace& space, const spaces::Space& compiler, const SpaceRequest& request,
                        const std::vector<TracedModule>& trace);

} // namespace ciq::tuner
