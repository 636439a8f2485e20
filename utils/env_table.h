// The table of every CIQ_* environment variable (its name and what it does)
// and the plain readers of one. Split from config.h so that libciq-inject,
// a shared object inside the user's program, reads its variables through
// the same table: this file depends on libc only and is position-independent
// (library ciq_system). config.h adds what needs the rest of utils (the
// cache and spaces directories).
#pragma once

#include <string>
#include <vector>

namespace ciq {

enum class Env {
  cache_dir, spaces_dir, disable, allow_unsafe, log_level, log_file,       // everyone
  real_ptxas, real_nvcc, real_cicc, ptxas,                                 // finding the tools
  packs, remote, remote_timeout_ms, publish,                               // shared results
  controls, trace, trace_ptx, kernels, units, memo_dir, campaign_pid,      // set by the tuner for its builds
  in_ptxas, in_nvcc, in_cicc, stamps_out, nvcc_args,                       // set by a wrapper for the tool it runs
  inject_library, kernel_trace, kernel_control, kernel_trace_verbose,      // kernel timing inside a program
  cupti_library, cupti_no_fallback,                                        // which CUPTI libciq-inject loads
  capture, capture_kernels, capture_max_bytes, capture_configs,            // kernel capture inside a program
  nvml_library,                                                            // GPU state and energy (the tuner)
  replay,                                                                  // ciq-tuner run --capture
  cuda_library,                                                            // the driver ciq-replay loads (ciq-tuner: is a GPU usable)
  gpu_model, gpu_policy,                                                   // the GPU a machine without one builds for
  tuner,                                                                   // the Python package's ciq-tuner (read by tuner/python only)
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

/// Value of any environment variable (HOME, ...), or "" when unset.
std::string env_or_empty(const char* name);

} // namespace ciq
