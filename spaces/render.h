// Turning a validated control set into what ptxas sees: extra command-line
// options, and per-kernel performance directives written into a copy of the
// PTX (replacing any value of the same directive already there).
#pragma once

#include "spaces/control_set.h"
#include "spaces/space.h"
#include "utils/result.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::spaces {

struct Directive {
  std::string keyword; // ".maxnreg"
  std::string line;    // ".maxnreg 128"
};

struct RenderedControls {
  std::vector<std::string> options;                         // appended to ptxas' argv
  std::map<std::string, std::vector<Directive>> directives; // by kernel name
};

/// Renders `set`, which must have passed validate_controls() for `space`.
RenderedControls render_controls(const Space& space, const spaces::ControlSet& set);

/// Returns `ptx` with the directives written into the named kernels'
/// headers. Kernels that are not in `ptx` are skipped and not listed in
/// `applied`. Fails when a kernel header cannot be found intact.
Result<std::string> apply_directives(std::string_view ptx,
                                     const std::map<std::string, std::vector<Directive>>& directives,
                                     std::vector<std::string>* applied = nullptr);

} // namespace ciq::spaces
