// The GPU's state around each benchmark run, read through NVML
// (utils/nvml.h): the energy it used (the total-energy counter, read before
// and after) and what it ran under (SM and memory clocks, temperature,
// power draw and limit, and the clock-event, i.e. throttle, reasons),
// sampled every 20 ms while the run lasts. Only read: nothing here changes
// a clock, a limit or any setting. A machine without the driver simply
// records no GPU state.
#pragma once

#include "tuner/rundir/gpu_state.h" // GpuState: what Monitor returns, and its JSON
#include "utils/nvml.h"
#include "utils/result.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ciq::tuner {

/// Samples a GPU (named as --gpus names it: "" = the first; an index; a
/// GPU-UUID) every `period_ms` from construction until stop(), on a thread
/// of its own, and reads its energy counter at both ends.
class GpuMonitor {
public:
  GpuMonitor(const Nvml& nvml, std::string gpu, int period_ms = 20);
  ~GpuMonitor();
  GpuState stop();

private:
  void sample();
  const Nvml& nvml_;
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

} // namespace ciq::tuner
