// Finding the real compiler behind a wrapper without ever finding the
// wrapper itself, and the last-resort handler that turns a crash inside ciq
// into a plain run of the real tool.
#pragma once

#include "utils/config.h"
#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

/// The real tool: $<var> if set, else `name` on PATH, skipping this
/// executable. Fails when none is found or when $<var> is this wrapper.
Result<std::string> find_real_tool(Env var, const std::string& name);

/// From now on, a fatal signal in this process (SIGSEGV, SIGBUS, SIGILL,
/// SIGFPE, SIGABRT) execs `real` with `argv` instead of crashing, so a bug
/// in ciq or a damaged cache file cannot break a build. So does SIGALRM: the
/// wrapper arms alarm() as a watchdog while it looks things up, so nothing
/// (a damaged database, a hung probe) can make it hang a build either.
void exec_on_crash(const std::string& real, const std::vector<std::string>& argv);

/// The watchdog's limit for a wrapper's own work (a lookup takes milliseconds).
inline constexpr unsigned k_watchdog_seconds = 5;

/// Prints "<tool>: error: <message>" to stderr and exits with 127 (the
/// status of a missing command). Only for "the real tool cannot be run".
[[noreturn]] void fatal(const char* tool, const std::string& message);

} // namespace ciq::wrapper
