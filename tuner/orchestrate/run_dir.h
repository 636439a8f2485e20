// The run directory as one tuner's own: a lock (flock on <dir>/lock, which
// names the holder's pid and host) so that two tuners never write the same
// journal, and the journal's lines, appended so that a failed write leaves
// no partial line behind and read back so that a partial last line (a run
// killed mid-write) is cut off instead of glued to the next record.
#pragma once

#include "tuner/measure/evaluator.h"
#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::tuner {

/// Takes <dir>/lock for the life of this process (the descriptor is not
/// inherited by the commands the tuner runs). Fails ("locked") when another
/// live process holds it, naming that process' pid and host. A lock file a
/// dead process left (the kernel dropped its flock) is taken over, with a
/// line on stderr saying whose it was. release_run_directory() empties it
/// at a normal end.
Result<void> lock_run_directory(const std::string& dir);
void release_run_directory();

/// Appends `line` and a newline to `path` and syncs it. On failure (disk
/// full, EIO) whatever part of the line reached the file is cut off again,
/// so the file still ends in a whole line; the error names the file.
Result<void> append_whole_line(const std::string& path, const std::string& line);

/// Cuts a partial last line (no newline at the end) off `path`, saying so on
/// stderr; returns the bytes cut (0 when the file ends in a newline, is
/// empty or absent).
Result<std::size_t> drop_partial_last_line(const std::string& path);

/// `args` with the password of every --publish URL masked (***, as
/// redact_secrets() writes it): what may be saved or passed on where others
/// can read it (a file, a child's argv). A --publish so masked takes its
/// password from CIQ_PUBLISH, or from --publish given again.
std::vector<std::string> without_publish_password(const std::vector<std::string>& args);

/// Writes <dir>/command-line, one argument per line, for --resume: the
/// arguments as given, but without_publish_password(), and readable by its
/// owner only (0600), because the commands in it (--build, --bench) may hold
/// tokens of their own that must be saved as given for --resume to rerun them.
Result<void> save_command_line(const std::string& dir, const std::vector<std::string>& args);

/// The journal's records, oldest first, after drop_partial_last_line();
/// an absent journal gives none. A whole line that does not parse is
/// skipped with a warning (its evaluation runs again).
Result<std::vector<EvalRecord>> load_journal(const std::string& path);

} // namespace ciq::tuner
