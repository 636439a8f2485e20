#include "tuner/measure/gpu_monitor.h"

#include "utils/config.h"
#include "utils/dl.h"
#include "utils/text.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace ciq::tuner {

namespace {

// NVML's C interface, as documented: results are ints (0 = success,
// 3 = not supported), devices opaque pointers.
using Device = void*;
constexpr int nvml_success = 0, nvml_not_supported = 3;
constexpr int clock_sm = 1, clock_mem = 2, sensor_gpu = 0;
struct NvmlMemory {
  unsigned long long total, free, used; // bytes (nvmlMemory_t)
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

struct Nvml::Api {
  int (*init)();
  const char* (*error_string)(int);
  int (*by_index)(unsigned, Device*);
  int (*by_uuid)(const char*, Device*);
  int (*energy)(Device, unsigned long long*);
  int (*clock)(Device, int, unsigned*);
  int (*temperature)(Device, int, unsigned*);
  int (*power)(Device, unsigned*);
  int (*power_limit)(Device, unsigned*);
  int (*reasons)(Device, unsigned long long*);
  int (*name)(Device, char*, unsigned);
  int (*driver)(char*, unsigned);
  int (*ecc)(Device, int*, int*);
  int (*memory)(Device, NvmlMemory*);
  int (*cores)(Device, unsigned*);

  std::string describe(int result) const {
    const char* text = error_string ? error_string(result) : nullptr;
    return text ? text : "NVML error " + std::to_string(result);
  }
};

Nvml* Nvml::get(std::string* why) {
  static std::once_flag once;
  static Nvml* nvml = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = env(Env::nvml_library);
    if (path.empty()) path = "libnvidia-ml.so.1";
    auto* api = new Api{};
    std::vector<dl::Symbol> table{
        dl::need(api->init, "nvmlInit_v2"),
        dl::need(api->by_index, "nvmlDeviceGetHandleByIndex_v2"),
        dl::need(api->energy, "nvmlDeviceGetTotalEnergyConsumption"),
        dl::may(api->error_string, "nvmlErrorString"),
        dl::may(api->by_uuid, "nvmlDeviceGetHandleByUUID"),
        dl::may(api->clock, "nvmlDeviceGetClockInfo"),
        dl::may(api->temperature, "nvmlDeviceGetTemperature"),
        dl::may(api->power, "nvmlDeviceGetPowerUsage"),
        dl::may(api->power_limit, "nvmlDeviceGetEnforcedPowerLimit"),
        dl::may(api->reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
        dl::may(api->name, "nvmlDeviceGetName"),
        dl::may(api->driver, "nvmlSystemGetDriverVersion"),
        dl::may(api->ecc, "nvmlDeviceGetEccMode"),
        dl::may(api->memory, "nvmlDeviceGetMemoryInfo"),
        dl::may(api->cores, "nvmlDeviceGetNumGpuCores"),
    };
    if (dl::Library lib = dl::load({path}, table); !lib.handle) {
      failure = lib.error;
      return;
    }
    if (int r = api->init(); r != nvml_success) {
      failure = "nvmlInit: " + api->describe(r);
      return;
    }
    nvml = new Nvml(api);
  });
  if (!nvml && why) *why = failure;
  return nvml;
}

Result<void*> Nvml::device(const std::string& gpu) {
  Device d = nullptr;
  int r;
  if (gpu.empty() || std::all_of(gpu.begin(), gpu.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    r = api_->by_index(gpu.empty() ? 0u : unsigned(std::strtoul(gpu.c_str(), nullptr, 10)), &d);
  } else if (api_->by_uuid) {
    r = api_->by_uuid(gpu.c_str(), &d);
  } else {
    return make_error("nvml", "cannot find GPU " + gpu + " (this NVML has no nvmlDeviceGetHandleByUUID)");
  }
  if (r != nvml_success) return make_error("nvml", "GPU " + (gpu.empty() ? std::string("0") : gpu) + ": " + api_->describe(r));
  return d;
}

Result<std::uint64_t> Nvml::energy_mj(const std::string& gpu) {
  auto d = device(gpu);
  if (!d) return d.error();
  unsigned long long mj = 0;
  int r = api_->energy(*d, &mj);
  if (r == nvml_not_supported) return make_error("unsupported", "this GPU has no total-energy counter (NVML: " + api_->describe(r) + ")");
  if (r != nvml_success) return make_error("nvml", "nvmlDeviceGetTotalEnergyConsumption: " + api_->describe(r));
  return std::uint64_t(mj);
}

Result<GpuIdentity> Nvml::identity(const std::string& gpu) {
  auto d = device(gpu);
  if (!d) return d.error();
  GpuIdentity id;
  char text[256] = {};
  if (api_->name && api_->name(*d, text, sizeof text) == nvml_success) id.name = text;
  text[0] = 0;
  if (api_->driver && api_->driver(text, sizeof text) == nvml_success) id.driver = text;
  unsigned mw = 0;
  if (api_->power_limit && api_->power_limit(*d, &mw) == nvml_success) id.power_limit_w = mw / 1000.0;
  int current = 0, pending = 0;
  id.ecc = api_->ecc && api_->ecc(*d, &current, &pending) == nvml_success ? (current ? "on" : "off") : "unknown";
  NvmlMemory memory{};
  if (api_->memory && api_->memory(*d, &memory) == nvml_success) id.memory_mib = memory.total >> 20;
  unsigned cores = 0;
  if (api_->cores && api_->cores(*d, &cores) == nvml_success) id.cuda_cores = cores;
  return id;
}

Nvml::Monitor::Monitor(Nvml& nvml, std::string gpu, int period_ms) : nvml_(nvml), gpu_(std::move(gpu)), period_ms_(period_ms) {
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

Nvml::Monitor::~Monitor() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void Nvml::Monitor::sample() {
  if (!device_) return;
  void* const* d = &device_;
  const Api& api = *nvml_.api_;
  unsigned sm = 0, mem = 0, temp = 0, mw = 0, limit = 0;
  unsigned long long reasons = 0;
  bool has_sm = api.clock && api.clock(*d, clock_sm, &sm) == nvml_success;
  bool has_mem = api.clock && api.clock(*d, clock_mem, &mem) == nvml_success;
  bool has_temp = api.temperature && api.temperature(*d, sensor_gpu, &temp) == nvml_success;
  bool has_power = api.power && api.power(*d, &mw) == nvml_success;
  bool has_limit = api.power_limit && api.power_limit(*d, &limit) == nvml_success;
  bool has_reasons = api.reasons && api.reasons(*d, &reasons) == nvml_success;
  std::lock_guard lock(mutex_);
  GpuState& s = state_;
  s.read = true;
  // Clocks while the GPU works: an idle GPU (a process starting up, the
  // host's share of a run) sits at its lowest clock, which says nothing
  // about the conditions the kernels met. Idle samples count only when
  // there is no other.
  bool idle = has_reasons && (reasons & 0x1);
  if (has_sm && (!idle || busy_samples_ == 0)) {
    if (!idle && busy_samples_++ == 0) s.sm_mhz_min = s.sm_mhz_max = 0; // forget the idle ones
    s.sm_mhz_min = s.sm_mhz_min == 0 ? sm : std::min(s.sm_mhz_min, sm);
    s.sm_mhz_max = std::max(s.sm_mhz_max, sm);
  }
  if (has_mem) s.mem_mhz = std::max(s.mem_mhz, mem);
  if (has_temp) s.temperature_c = std::max(s.temperature_c, temp);
  if (has_power) power_sum_ += mw / 1000.0;
  if (has_limit) s.power_limit_w = limit / 1000.0;
  if (has_reasons) s.reasons |= reasons;
  ++s.samples;
}

GpuState Nvml::Monitor::stop() {
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
