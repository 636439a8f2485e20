// The control channel of a resident program (a --bench-server, timed per
// request; inject.cpp's header says what it is for): a FIFO the user owns,
// read by a thread of libciq-inject, one command a line. `cut DIR` is the
// only command; a line longer than 8 KiB is dropped, so memory stays bounded
// whatever is written. The first process to start CUDA with the variable
// set takes the channel (an flock on <fifo>.lock, held until it dies).
#pragma once

#include <functional>
#include <string>
#include <sys/types.h>

namespace ciq::inject {

using Command = std::function<void(const std::string& dir)>;
using Logger = std::function<void(const std::string&)>;

/// Takes the control channel at `path` unless another process has it, and
/// calls `on_cut(DIR)` for each `cut DIR` line read in process `owner`, on
/// a thread that blocks every signal and ends with the process. The FIFO
/// and its lock must be the user's own and closed to everyone else
/// (safe_open.h): a channel another user could write to, or a path that is
/// not a FIFO (/dev/stdin, /dev/zero), is refused, and the program runs
/// with an exit trace only. `say` reports (verbose mode).
void start_control(const std::string& path, pid_t owner, Command on_cut, Logger say);

} // namespace ciq::inject
