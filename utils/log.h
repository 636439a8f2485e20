// Logging set-up shared by all ciq binaries (spdlog). The wrappers are
// silent by default and never write to stdout, which belongs to ptxas and
// nvcc; CIQ_LOG_LEVEL (trace, debug, info, warn, error, off) raises the level
// on stderr and CIQ_LOG_FILE sends the log to a file instead (appended, with
// the process id, so parallel compiles can be told apart).
#pragma once

#include <spdlog/spdlog.h>
#include <string_view>

namespace ciq {

/// Configures the default logger from the environment. `default_level` is
/// used when CIQ_LOG_LEVEL is unset ("off" for wrappers, "info" for the CLIs).
void setup_logging(std::string_view program, std::string_view default_level);

} // namespace ciq
