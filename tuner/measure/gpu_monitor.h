// The GPU's state around each benchmark run, read through NVML: the energy
// it used (the total-energy counter, read before and after) and what it ran
// under (SM and memory clocks, temperature, power draw and limit, and the
// clock-event, i.e. throttle, reasons), sampled every 20 ms while the run
// lasts. Only read: nothing here changes a clock, a limit or any setting.
//
// libnvidia-ml is loaded at run time (dlopen of "libnvidia-ml.so.1", or
// $CIQ_NVML_LIBRARY: the tests' fake), never linked: a machine without the
// driver builds and runs ciq, and simply records no GPU state. The handful
// of NVML entry points used are declared here by their documented C
// signatures (nvml.h is not part of the CUDA Toolkit on every machine).
#pragma once

#include "tuner/rundir/gpu_state.h" // GpuState: what Monitor returns, and its JSON
#include "utils/result.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ciq::tuner {

/// The GPU named as --gpus names it ("" = the first; an index; a GPU-UUID).
struct GpuIdentity {
  std::string name, driver, ecc;  // ecc: "on", "off" or "unknown"
  double power_limit_w = 0;
  unsigned long long memory_mib = 0;  // total memory; 0: NVML did not say
  unsigned cuda_cores = 0;            // NVML's core count (drivers of 2022 on); 0: not known
};

class Nvml {
public:
  /// The process' NVML, loaded and initialised on first use; null with
  /// `why` when there is none (no driver, the library cannot load or init).
  static Nvml* get(std::string* why = nullptr);

  /// Energy used since the driver loaded, in mJ; an error ("unsupported"
  /// when the GPU has no such counter).
  Result<std::uint64_t> energy_mj(const std::string& gpu);
  Result<GpuIdentity> identity(const std::string& gpu);

  /// Samples `gpu` every `period_ms` from start() until stop().
  class Monitor {
  public:
    Monitor(Nvml& nvml, std::string gpu, int period_ms = 20);
    ~Monitor();
    GpuState stop();

  private:
    void sample();
    Nvml& nvml_;
    std::string gpu_;
    void* device_ = nullptr;  // gpu_'s NVML handle, found once (null: not found)
    int period_ms_;
    std::uint64_t energy_start_ = 0;
    bool energy_ok_ = false;
    double started_ = 0;
    std::mutex mutex_;
    GpuState state_;
    double power_sum_ = 0;
    int busy_samples_ = 0;  // samples without NVML's gpu-idle reason
    std::atomic<bool> stopping_{false};
    std::thread thread_;
  };

  struct Api;  // the entry points (gpu_monitor.cpp)

private:
  explicit Nvml(Api* api) : api_(api) {}
  Result<void*> device(const std::string& gpu);
  Api* api_;
};

} // namespace ciq::tuner
