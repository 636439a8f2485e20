// Where ciq keeps its state and how the environment configures it. The
// wrappers take configuration from the environment only (they must accept
// every nvcc/ptxas argument unchanged); the CLIs take the same variables and
// let options override them.
#pragma once

#include <string>

namespace ciq {

/// $CIQ_CACHE_DIR, else $XDG_CACHE_HOME/ciq, else $HOME/.cache/ciq.
std::string cache_directory();

/// A boolean environment variable: "1", "true", "yes", "on" are true; "",
/// "0", "false", "no", "off" false (any case); anything else is `unknown`.
bool env_flag(const char* name, bool unknown);

/// $CIQ_DISABLE as a flag; a value that is not a boolean disables too.
bool ciq_disabled();

/// $CIQ_ALLOW_UNSAFE as a flag; a value that is not a boolean allows nothing.
bool unsafe_allowed();

/// Value of an environment variable, or "" when unset.
std::string env_or_empty(const char* name);

/// Directory holding the knob space files: $CIQ_SPACES_DIR, else
/// <dir of this executable>/../share/ciq/spaces.
std::string spaces_directory();

} // namespace ciq
