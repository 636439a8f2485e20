// The tuner's controls file (CIQ_CONTROLS) names every kernel it tunes;
// CIQ_KERNELS narrows a compile to some of them.
#pragma once

#include "cache/counters.h"
#include "cache/gpu_policy.h"
#include "cache/ptx.h"
#include "spaces/control_set.h"
#include "utils/result.h"

#include <optional>
#include <string>

namespace ciq::wrapper {

/// Why an input could not be hashed: not a regular file (a pipe or device,
/// ptxas' or cicc's to read) or unreadable.
inline cache::Pass unread_input_pass(const Error& error) {
  return error.code == ciq::errc::not_regular ? cache::Pass::input_not_a_file : cache::Pass::unreadable_input;
}

/// The tuner's CIQ_CONTROLS file, parsed; std::nullopt (the reason logged
/// and in `*error`) when it cannot be read or parsed.
std::optional<spaces::ControlSet> read_controls_file(const std::string& path, std::string* error);

/// Restricts `set` to the kernels of `module` that match `glob`: their
/// directives, and the options only if at least one kernel matches.
spaces::ControlSet target_kernels(const spaces::ControlSet& set, const cache::PtxModule& module,
                                 const std::string& glob);

/// CIQ_GPU_POLICY's rule for this compile; a setting it cannot follow is
/// logged and read as `any` (the wrappers fail open).
cache::GpuRule gpu_rule();

} // namespace ciq::wrapper
