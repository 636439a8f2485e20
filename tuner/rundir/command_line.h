// <run dir>/command-line and working-directory: how the run was started,
// saved so that --resume (and a retune) can run it again from anywhere.
#pragma once

#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::tuner {

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

} // namespace ciq::tuner
