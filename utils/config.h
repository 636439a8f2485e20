// Where ciq keeps its state and how the environment configures it. The
// wrappers take configuration from the environment only (they must accept
// every nvcc/ptxas argument unchanged); the CLIs take the same variables and
// let options override them.
//
// Every CIQ_* variable is named once, in the table behind Env: code asks
// for env(Env::trace), never for a spelled-out name, and `ciq-cache env`
// prints the table with the values in effect.
#pragma once

#include <string>
#include <vector>

namespace ciq {

enum class Env {
  cache_dir, spaces_dir, disable, allow_unsafe, log_level, log_file,       // everyone
  real_ptxas, real_nvcc, real_cicc, ptxas,                                 // finding the tools
  packs, remote, remote_timeout_ms, publish,                               // shared results
  controls, trace, trace_ptx, kernels, units, memo_dir, campaign_pid,      // set by the tuner for its builds
  in_ptxas, in_nvcc, in_cicc, stamps_out,                                  // set by a wrapper for the tool it runs
  inject_library, kernel_trace, kernel_control, kernel_trace_verbose,      // kernel timing inside a program
  cupti_library, cupti_no_fallback,                                        // (libciq-inject reads its own)
  capture, capture_kernels, capture_max_bytes, capture_configs,            // kernel capture inside a program
  nvml_library,                                                            // GPU state and energy (the tuner)
  replay,                                                                  // ciq-tuner run --capture
  cuda_library,                                                            // the driver ciq-replay loads
  gpu_model, gpu_policy,                                                   // the GPU a machine without one builds for
};

struct EnvVariable {
  Env id;
  const char* name;    // CIQ_...
  const char* meaning; // one line, for `ciq-cache env`
};

/// Every variable ciq reads, in the order above.
const std::vector<EnvVariable>& environment_variables();
/// The variable's name, CIQ_...
const char* env_name(Env var);
/// Its value, or "" when unset.
std::string env(Env var);
/// As a boolean: "1", "true", "yes", "on" are true; "", "0", "false", "no",
/// "off" false (any case); anything else is `unknown`. The one parser of
/// every CIQ_* flag.
bool env_flag(Env var, bool unknown);

/// $CIQ_CACHE_DIR, else $XDG_CACHE_HOME/ciq, else $HOME/.cache/ciq.
std::string cache_directory();
/// $CIQ_DISABLE as a flag; a value that is not a boolean disables too.
bool ciq_disabled();
/// $CIQ_ALLOW_UNSAFE as a flag; a value that is not a boolean allows nothing.
bool unsafe_allowed();
/// Value of any environment variable (HOME, ...), or "" when unset.
std::string env_or_empty(const char* name);
/// Directory holding the knob space files: $CIQ_SPACES_DIR, else
/// <dir of this executable>/../share/ciq/spaces.
std::string spaces_directory();

} // namespace ciq
