// The start-up the three wrappers share: find the real tool (never the
// wrapper itself), refuse a loop back into a wrapper of the same kind, and
// start the watchdog (wrapper/watchdog.h). Each wrapper describes itself in
// one `WrappedTool` and calls `start_wrapper` first thing; everything after
// it fails open. The only fatal errors of a wrapper are raised here: the
// real tool cannot be found, or it would be the wrapper itself (directly,
// through a link, or through a loop).
#pragma once

#include "utils/config.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::wrapper {

/// What a wrapper is, for its start-up.
struct WrappedTool {
  const char* wrapper;   ///< "ciq-ptxas": the log's name and the errors' prefix
  const char* tool;      ///< "ptxas": the real tool's name on PATH
  Env real_setting;      ///< CIQ_REAL_PTXAS: the real tool, named by the user
  Env loop_mark;         ///< CIQ_IN_PTXAS: set for the real tool and its children
  /// True when the caller's first argument names the real tool (nvcc's
  /// prefix form `ciq-ptxas ptxas <args>`, a launcher's `ciq-nvcc <nvcc>
  /// <args>`); that argument is then not passed on.
  bool (*names_tool)(std::string_view first);
  /// True when the setting wins over a first argument naming the tool (ptxas:
  /// nvcc names only "ptxas", found on PATH); false when the argument wins
  /// (cicc, whose path nvcc gives; a launcher's nvcc).
  bool setting_first;
};

/// A wrapper, started.
struct Started {
  std::string self;               ///< this executable, links resolved
  std::string real;               ///< the real tool, never `self`
  std::vector<std::string> args;  ///< the caller's arguments, less one naming the tool
  std::vector<std::string> plain; ///< real + args: the run as if ciq were not there
};

/// Sets up logging (silent unless CIQ_LOG_LEVEL), finds the real tool, marks
/// the environment against loops and starts the watchdog over `plain`.
/// The real tool is, in order: the setting (when `setting_first`), a path
/// or name in the first argument, the setting, the tool on PATH; a name is
/// looked up on PATH skipping this executable. Ends the process (`fatal`)
/// when none is found, when a path named by the setting or the argument is
/// this wrapper or a link to it, or when this wrapper runs under the real
/// tool of a wrapper of its kind.
Started start_wrapper(const WrappedTool& tool, int argc, char** argv);

/// Replaces this process with `real` run with `argv` (argv[0] included),
/// the watchdog stopped first (timers survive exec); `fatal` if the exec
/// fails.
[[noreturn]] void exec_real(const WrappedTool& tool, const std::string& real, const std::vector<std::string>& argv);

/// Prints "<tool>: error: <message>" to stderr and exits with 127 (the
/// status of a missing command). Only for "the real tool cannot be run".
[[noreturn]] void fatal(const char* tool, const std::string& message);

} // namespace ciq::wrapper
