// `run --resume DIR` and `campaign --resume DIR` before parsing: the run's
// saved command line (rundir/command_line.h's one reader), what was given
// now after it, and the process moved to the run's working directory.
#pragma once

#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::tuner {

/// `args` (the whole argv) with --resume DIR (or --resume=DIR), found by
/// the one argument filter, replaced by the original command line
/// re-parsed, then what was given now (DIR made absolute); this process
/// then runs in the run's working directory (checked to be no other
/// user's). `args` unchanged without --resume. Fails when DIR is no run
/// directory, its commands could run as another user prepared them, or
/// what is given now would change what the run searches or how it scores
/// (--space, --objective, --kernels, ...: a new run's options).
Result<std::vector<std::string>> with_saved_command_line(std::vector<std::string> args);

} // namespace ciq::tuner
