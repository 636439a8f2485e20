// The run directory as one tuner's own: a lock (flock on <dir>/lock, which
// names the holder's pid and host) so that two tuners never write the same
// journal and evaluation directories.
#pragma once

#include "utils/result.h"

#include <string>

namespace ciq::tuner {

/// Takes <dir>/lock for the life of this process (the descriptor is not
/// inherited by the commands the tuner runs). Fails ("locked") when another
/// live process holds it, naming that process' pid and host. A lock file a
/// dead process left (the kernel dropped its flock) is taken over, with a
/// line on stderr saying whose it was. release_run_directory() empties it
/// at a normal end.
Result<void> lock_run_directory(const std::string& dir);
void release_run_directory();

} // namespace ciq::tuner
