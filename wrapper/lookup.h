// The tuner's controls file (CIQ_CONTROLS) names every kernel it tunes;
// CIQ_KERNELS narrows a compile to some of them.
#pragma once

#include "cache/ptx.h"
#include "spaces/control_set.h"

#include <string>

namespace ciq::wrapper {

/// Restricts `set` to the kernels of `module` that match `glob`: their
/// directives, and the options only if at least one kernel matches.
spaces::ControlSet target_kernels(const spaces::ControlSet& set, const cache::PtxModule& module,
                                 const std::string& glob);

} // namespace ciq::wrapper
