// Finding the real compiler behind a wrapper without ever finding the
// wrapper itself, directly or through a loop.
#pragma once

#include "utils/config.h"
#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

/// The real tool: $<var> if set, else `name` on PATH, skipping this
/// executable. Fails when none is found or when $<var> is this wrapper.
Result<std::string> find_real_tool(Env var, const std::string& name);

/// Ends with "a loop" (fatal) when this wrapper was started, directly or
/// not, by the tool a wrapper of the same kind runs as the real one (two
/// copies of a wrapper under the tool's name on PATH, or $CIQ_REAL_* a
/// script that runs the wrapper); paths need not match, as the mark
/// travels in the environment. Otherwise marks the environment, so that
/// the real tool and its children carry the mark.
void guard_against_loops(Env mark, const char* wrapper, const std::string& real);

/// Prints "<tool>: error: <message>" to stderr and exits with 127 (the
/// status of a missing command). Only for "the real tool cannot be run".
[[noreturn]] void fatal(const char* tool, const std::string& message);

} // namespace ciq::wrapper
