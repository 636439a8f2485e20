// The tuner's controls file (CIQ_CONTROLS) names every kernel it tunes;
// CIQ_KERNELS narrows a compile to some of them.
#pragma once

#include "cache/ptx.h"
#include "spaces/control_set.h"

#include <optional>
#include <string>

namespace ciq::wrapper {

/// The tuner's CIQ_CONTROLS file, parsed; std::nullopt (the reason logged
/// and in `*error`) when it cannot be read or parsed.
std::optional<spaces::ControlSet> read_controls_file(const std::string& path, std::string* error);

/// Restricts `set` to the kernels of `module` that match `glob`: their
/// directives, and the options only if at least one kernel matches.
spaces::ControlSet target_kernels(const spaces::ControlSet& set, const cache::PtxModule& module,
                                 const std::string& glob);

} // namespace ciq::wrapper
