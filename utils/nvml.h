// NVIDIA's management library, the one way ciq asks what a GPU is and what
// state it is in: its name, driver, memory and cores (the provenance of a
// shipped entry, `ciq-cache stale`'s comparison, retune's), its energy
// counter and the clocks, temperature and power a benchmark ran under
// (tuner/measure/gpu_monitor.h samples them). Only read: nothing here
// changes a clock, a limit or any setting.
//
// libnvidia-ml is loaded at run time (dlopen of $CIQ_NVML_LIBRARY, else
// "libnvidia-ml.so.1"; the tests' fake is test/nvml/fake_nvml.c), never
// linked: a machine without the driver builds and runs ciq and simply has
// no GPU here. The entry points used are declared by their documented C
// signatures (nvml.h is not part of the CUDA Toolkit on every machine).
#pragma once

#include "utils/result.h"

#include <cstdint>
#include <memory>
#include <string>

namespace ciq {

/// What a GPU is, as NVML says; a field NVML does not answer stays empty/0.
struct GpuIdentity {
  std::string name, driver, ecc;      // ecc: "on", "off" or "unknown"
  double power_limit_w = 0;
  unsigned long long memory_mib = 0;  // total memory; 0: NVML did not say
  unsigned cuda_cores = 0;            // NVML's core count (drivers of 2022 on); 0: not known
};

/// One reading of a GPU's state; `has_*` false where NVML did not answer.
struct GpuReading {
  unsigned sm_mhz = 0, mem_mhz = 0, temperature_c = 0, power_mw = 0, power_limit_mw = 0;
  unsigned long long reasons = 0; // clock-event (throttle) reasons; bit 0: the GPU is idle
  bool has_sm = false, has_mem = false, has_temperature = false, has_power = false, has_limit = false,
       has_reasons = false;
};

class Nvml {
public:
  /// The process' NVML ($CIQ_NVML_LIBRARY or libnvidia-ml.so.1 as it was at
  /// the first call), loaded and initialised once; null with `why` when
  /// there is none.
  static Nvml* get(std::string* why = nullptr);

  /// NVML from `path`, loaded and initialised now (nvmlShutdown when the
  /// object goes; the library stays loaded: NVML does not promise that
  /// unloading it is safe). Null with `why`: "NVML (PATH) cannot be
  /// loaded: no NVIDIA driver here", "PATH lacks nvmlInit_v2, ..." or
  /// "NVML (PATH) did not start (nvmlInit: ...): no GPU or driver here".
  static std::unique_ptr<Nvml> open(const std::string& path, std::string& why);

  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// The GPU named as --gpus names it ("" = the first; an index; a
  /// GPU-UUID): NVML's handle, or an error saying which GPU NVML refused.
  Result<void*> device(const std::string& gpu) const;
  Result<GpuIdentity> identity(const std::string& gpu) const;
  /// Energy used since the driver loaded, in mJ; an error ("unsupported"
  /// when the GPU or this NVML has no such counter).
  Result<std::uint64_t> energy_mj(const std::string& gpu) const;
  /// The state of `device` (from device()) now.
  GpuReading read(void* device) const;

  struct Api; // the entry points (nvml.cpp)

private:
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

} // namespace ciq
