#include "tuner/measure/gpu_monitor.h"

#include <algorithm>
#include <chrono>

namespace ciq::tuner {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

GpuMonitor::GpuMonitor(const Nvml& nvml, std::string gpu, int period_ms) : nvml_(nvml), gpu_(std::move(gpu)), period_ms_(period_ms) {
  if (auto d = nvml_.device(gpu_)) device_ = *d;
  auto e = nvml_.energy_mj(gpu_);
  energy_ok_ = bool(e);
  if (e) energy_start_ = *e;
  started_ = now_seconds();
  sample();
  thread_ = std::thread([this] {
    while (!stopping_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
      if (!stopping_) sample();
    }
  });
}

GpuMonitor::~GpuMonitor() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void GpuMonitor::sample() {
  if (!device_) return;
  GpuReading r = nvml_.read(device_);
  std::lock_guard lock(mutex_);
  GpuState& s = state_;
  s.read = true;
  // Clocks while the GPU works: an idle GPU (a process starting up, the
  // host's share of a run) sits at its lowest clock, which says nothing
  // about the conditions the kernels met. Idle samples count only when
  // there is no other.
  bool idle = r.has_reasons && (r.reasons & 0x1);
  if (r.has_sm && (!idle || busy_samples_ == 0)) {
    if (!idle && busy_samples_++ == 0) s.sm_mhz_min = s.sm_mhz_max = 0; // forget the idle ones
    s.sm_mhz_min = s.sm_mhz_min == 0 ? r.sm_mhz : std::min(s.sm_mhz_min, r.sm_mhz);
    s.sm_mhz_max = std::max(s.sm_mhz_max, r.sm_mhz);
  }
  if (r.has_mem) s.mem_mhz = std::max(s.mem_mhz, r.mem_mhz);
  if (r.has_temperature) s.temperature_c = std::max(s.temperature_c, r.temperature_c);
  if (r.has_power) power_sum_ += r.power_mw / 1000.0;
  if (r.has_limit) s.power_limit_w = r.power_limit_mw / 1000.0;
  if (r.has_reasons) s.reasons |= r.reasons;
  ++s.samples;
}

GpuState GpuMonitor::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  sample();
  std::lock_guard lock(mutex_);
  GpuState s = state_;
  s.seconds = now_seconds() - started_;
  if (energy_ok_)
    if (auto e = nvml_.energy_mj(gpu_); e && *e >= energy_start_) s.energy_j = double(*e - energy_start_) / 1000.0;
  s.power_w = s.samples ? power_sum_ / s.samples : 0;
  return s;
}

} // namespace ciq::tuner
