// Where ciq keeps its state and how the environment configures it. The
// wrappers take configuration from the environment only (they must accept
// every nvcc/ptxas argument unchanged); the CLIs take the same variables and
// let options override them.
#pragma once

#include <string>

namespace ciq {

/// $CIQ_CACHE_DIR, else $XDG_CACHE_HOME/ciq, else $HOME/.cache/ciq.
std::string cache_directory();

/// True when $CIQ_DISABLE is set to something other than "", "0", "false", "no".
bool ciq_disabled();

/// Value of an environment variable, or "" when unset.
std::string env_or_empty(const char* name);

/// Directory holding the knob space files: $CIQ_SPACES_DIR, else
/// <dir of this executable>/../share/ciq/spaces.
std::string spaces_directory();

} // namespace ciq
