// The wrappers' two guarantees when something inside ciq goes wrong: a
// crash never breaks the build, and ciq's own work never hangs it.
//
// One budget bounds all of ciq's own work in a call (argument scanning,
// lookups, quarantine marks, traces, counters), before and after the real
// tool; the real tool's own run, and the writing of its output, are not
// counted (they may take as long as they need). When the budget runs out,
// or ciq crashes (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), the process
// either runs the real tool plain (exec; before the caller got any output)
// or, once the output has been written, ends the way that tool ended: it
// never runs the tool a second time over output already given.
#pragma once

#include "utils/process.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::wrapper {

/// Budget for all of a wrapper's own work in one call; a lookup takes
/// milliseconds, and the slow faults (a stopped writer, a damaged file)
/// are bounded well below this inside the cache layer.
inline constexpr unsigned k_watchdog_ms = 5000;

/// From now on a fatal signal or an exhausted budget execs `real` with
/// `argv` (argv[0] included); starts the budget.
void start_watchdog(const std::string& real, const std::vector<std::string>& argv);

/// The real tool is about to run (or to receive its output): stops the clock.
void pause_watchdog();
/// ciq's own work again: the rest of the budget (never under 250 ms).
void resume_watchdog();
/// Before an exec: nothing may fire in the program that replaces us.
void stop_watchdog();

/// Gives the caller the real tool's output (`result.out` on stdout, `err`
/// on stderr) with the clock stopped (the reader sets the pace); from then
/// on a crash or an exhausted budget ends the process like `result`,
/// without rerunning the tool over output already given.
void give_output(const RunResult& result, std::string_view err);

/// run_process for the real tool: the budget is paused while it runs.
Result<RunResult> run_real_tool(const RunOptions& options);

} // namespace ciq::wrapper
