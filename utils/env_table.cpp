#include "utils/env_table.h"

#include <cctype>
#include <cstdlib>

namespace ciq {

const std::vector<EnvVariable>& environment_variables() {
  static const std::vector<EnvVariable> table{
      {Env::cache_dir, "CIQ_CACHE_DIR", "the cache directory (default $XDG_CACHE_HOME/ciq or ~/.cache/ciq)"},
      {Env::spaces_dir, "CIQ_SPACES_DIR", "the knob space files (default <prefix>/share/ciq/spaces)"},
      {Env::disable, "CIQ_DISABLE", "1: the wrappers run the real tools unchanged and count nothing"},
      {Env::allow_unsafe, "CIQ_ALLOW_UNSAFE", "1: apply entries whose knobs may change numerics or correctness"},
      {Env::log_level, "CIQ_LOG_LEVEL", "off, error, warn, info, debug (wrappers: off)"},
      {Env::log_file, "CIQ_LOG_FILE", "append the log here instead of stderr (level debug unless set)"},
      {Env::real_ptxas, "CIQ_REAL_PTXAS", "the ptxas ciq-ptxas runs (default: ptxas on PATH, not ciq's)"},
      {Env::real_nvcc, "CIQ_REAL_NVCC", "the nvcc ciq-nvcc runs (default: nvcc on PATH, not ciq's)"},
      {Env::real_cicc, "CIQ_REAL_CICC", "the cicc ciq-cicc runs when nvcc does not name it"},
      {Env::ptxas, "CIQ_PTXAS", "the ciq-ptxas that ciq-nvcc puts in front of ptxas"},
      {Env::packs, "CIQ_PACKS", "pack files consulted read-only on a local miss, ':'-separated"},
      {Env::remote, "CIQ_REMOTE", "the team's Redis, redis://[:password@]host[:port][/db], read on a miss"},
      {Env::remote_timeout_ms, "CIQ_REMOTE_TIMEOUT_MS", "MS or CONNECT_MS,IO_MS for CIQ_REMOTE (default 100,250)"},
      {Env::publish, "CIQ_PUBLISH", "ciq-tuner: the --publish URL with its password, for a --publish given with *** in its place (as run directories keep it)"},
      {Env::controls, "CIQ_CONTROLS", "tuning builds: the candidate's control set, applied instead of the cache"},
      {Env::trace, "CIQ_TRACE", "write a JSON record of every ptxas and cicc step into this directory"},
      {Env::trace_ptx, "CIQ_TRACE_PTX", "1: with CIQ_TRACE, ciq-ptxas also keeps each module's PTX there (ptx/<module key>.ptx), for kernel replay"},
      {Env::kernels, "CIQ_KERNELS", "tuning builds: apply CIQ_CONTROLS only to kernels matching this glob"},
      {Env::units, "CIQ_UNITS", "tuning builds: apply NVVM-stage controls only to these unit keys (',')"},
      {Env::memo_dir, "CIQ_MEMO_DIR", "tuning builds: ciq-nvcc reuses the nvcc steps a candidate leaves alone"},
      {Env::campaign_pid, "CIQ_CAMPAIGN_PID", "set by ciq-tuner campaign, retune and reverify: their runs end when they die"},
      {Env::in_ptxas, "CIQ_IN_PTXAS", "set by ciq-ptxas for the ptxas it runs: a ciq-ptxas under it is a loop"},
      {Env::in_nvcc, "CIQ_IN_NVCC", "set by ciq-nvcc for the nvcc it runs: a ciq-nvcc under it is a loop"},
      {Env::in_cicc, "CIQ_IN_CICC", "set by ciq-cicc for the cicc it runs: a ciq-cicc under it is a loop"},
      {Env::stamps_out, "CIQ_STAMPS_OUT", "set by ciq-nvcc when the compile writes a dependency file: ciq-ptxas and ciq-cicc list there the cache stamps of the keys they looked up"},
      {Env::nvcc_args, "CIQ_NVCC_ARGS", "set by ciq-nvcc for the nvcc it runs: that nvcc's command line (a JSON array), from which ciq-cicc asks nvcc's plan whether a unit's PTX becomes machine code"},
      {Env::inject_library, "CIQ_INJECT_LIBRARY", "ciq-tuner profile: libciq-inject.so (default <prefix>/lib/libciq-inject.so)"},
      {Env::kernel_trace, "CIQ_KERNEL_TRACE", "libciq-inject: write the program's kernel timing into this directory"},
      {Env::kernel_control, "CIQ_KERNEL_CONTROL", "libciq-inject: a FIFO whose `cut DIR` commands write the kernels timed so far (a resident benchmark's, per request)"},
      {Env::kernel_trace_verbose, "CIQ_KERNEL_TRACE_VERBOSE", "1: libciq-inject says on stderr what it loaded and wrote"},
      {Env::cupti_library, "CIQ_CUPTI_LIBRARY", "libciq-inject: the libcupti to load first"},
      {Env::cupti_no_fallback, "CIQ_CUPTI_NO_FALLBACK", "1: libciq-inject tries only CIQ_CUPTI_LIBRARY"},
      {Env::capture, "CIQ_CAPTURE", "libciq-inject: capture launches of CIQ_CAPTURE_KERNELS into this directory, for replay"},
      {Env::capture_kernels, "CIQ_CAPTURE_KERNELS", "libciq-inject: the mangled kernel names to capture (',')"},
      {Env::capture_max_bytes, "CIQ_CAPTURE_MAX_BYTES", "libciq-inject: refuse a launch whose allocations total more (default 4G; K, M, G, T)"},
      {Env::capture_configs, "CIQ_CAPTURE_CONFIGS", "libciq-inject: launch configurations captured per kernel, the first launch of each (default 4)"},
      {Env::nvml_library, "CIQ_NVML_LIBRARY", "ciq-tuner, ciq-cache stale: the NVML library to load for energy and the GPU's state and model (default libnvidia-ml.so.1)"},
      {Env::replay, "CIQ_REPLAY", "ciq-tuner run --capture: the kernel replayer to start (default ciq-replay beside ciq-tuner)"},
      {Env::cuda_library, "CIQ_CUDA_LIBRARY", "ciq-replay, and ciq-tuner's check for a usable GPU before a profile, a campaign or a kernel-time run: the CUDA driver library to load (default libcuda.so.1)"},
      {Env::gpu_model, "CIQ_GPU_MODEL", "ciq-cache stale: the GPU model entries should have been verified on, where NVML finds no GPU (a compile machine), e.g. 'NVIDIA H100 80GB HBM3'; the wrappers' CIQ_GPU_POLICY compares with it"},
      {Env::gpu_policy, "CIQ_GPU_POLICY", "any (default): apply entries verified on any GPU of the target; same: only those verified on CIQ_GPU_MODEL's model; warn: apply, log and count the others"},
      {Env::tuner, "CIQ_TUNER", "the Python package (ciq.tune): the ciq-tuner to run (default: the one on PATH; tuner= overrides)"},
  };
  return table;
}

const char* env_name(Env var) { return environment_variables()[std::size_t(var)].name; }

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string env(Env var) { return env_or_empty(env_name(var)); }

bool env_flag(Env var, bool unknown) {
  std::string v = env(var);
  for (auto& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return unknown;
}

} // namespace ciq
