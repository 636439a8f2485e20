// Where ciq keeps its state and how the environment configures it. The
// wrappers take configuration from the environment only (they must accept
// every nvcc/ptxas argument unchanged); the CLIs take the same variables and
// let options override them.
//
// Every CIQ_* variable is named once, in the table behind Env
// (env_table.h): code asks for env(Env::trace), never for a spelled-out
// name, and `ciq-cache env` prints the table with the values in effect.
#pragma once

#include "utils/env_table.h"

#include <string>

namespace ciq {

/// $CIQ_CACHE_DIR, else $XDG_CACHE_HOME/ciq, else $HOME/.cache/ciq.
std::string cache_directory();
/// $CIQ_DISABLE as a flag; a value that is not a boolean disables too.
bool ciq_disabled();
/// $CIQ_ALLOW_UNSAFE as a flag; a value that is not a boolean allows nothing.
bool unsafe_allowed();
/// Directory holding the knob space files: $CIQ_SPACES_DIR, else
/// <dir of this executable>/../share/ciq/spaces.
std::string spaces_directory();

} // namespace ciq
