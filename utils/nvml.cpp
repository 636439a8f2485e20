#include "utils/nvml.h"

#include "utils/config.h"
#include "utils/dl.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace ciq {

namespace {

// NVML's C interface, as documented: results are ints (0 = success,
// 3 = not supported), devices opaque pointers.
using Device = void*;
constexpr int nvml_success = 0, nvml_not_supported = 3;
constexpr int clock_sm = 1, clock_mem = 2, sensor_gpu = 0;
struct NvmlMemory {
  unsigned long long total, free, used; // bytes (nvmlMemory_t)
};

} // namespace

struct Nvml::Api {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*by_index)(unsigned, Device*) = nullptr;
  int (*by_uuid)(const char*, Device*) = nullptr;
  int (*energy)(Device, unsigned long long*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*temperature)(Device, int, unsigned*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*power_limit)(Device, unsigned*) = nullptr;
  int (*reasons)(Device, unsigned long long*) = nullptr;
  int (*name)(Device, char*, unsigned) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
  int (*ecc)(Device, int*, int*) = nullptr;
  int (*memory)(Device, NvmlMemory*) = nullptr;
  int (*cores)(Device, unsigned*) = nullptr;

  std::string describe(int result) const {
    const char* text = error_string ? error_string(result) : nullptr;
    return text ? text : "NVML error " + std::to_string(result);
  }
};

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  if (api_->shutdown) api_->shutdown();
}

std::unique_ptr<Nvml> Nvml::open(const std::string& path, std::string& why) {
  auto api = std::make_unique<Api>();
  Api& a = *api;
  std::vector<dl::Symbol> table{
      dl::need(a.init, "nvmlInit_v2"),
      dl::need(a.by_index, "nvmlDeviceGetHandleByIndex_v2"),
      dl::may(a.shutdown, "nvmlShutdown"),
      dl::may(a.error_string, "nvmlErrorString"),
      dl::may(a.by_uuid, "nvmlDeviceGetHandleByUUID"),
      dl::may(a.energy, "nvmlDeviceGetTotalEnergyConsumption"),
      dl::may(a.clock, "nvmlDeviceGetClockInfo"),
      dl::may(a.temperature, "nvmlDeviceGetTemperature"),
      dl::may(a.power, "nvmlDeviceGetPowerUsage"),
      dl::may(a.power_limit, "nvmlDeviceGetEnforcedPowerLimit"),
      dl::may(a.reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
      dl::may(a.name, "nvmlDeviceGetName"),
      dl::may(a.driver, "nvmlSystemGetDriverVersion"),
      dl::may(a.ecc, "nvmlDeviceGetEccMode"),
      dl::may(a.memory, "nvmlDeviceGetMemoryInfo"),
      dl::may(a.cores, "nvmlDeviceGetNumGpuCores"),
  };
  if (dl::Library lib = dl::load({path}, table); !lib.handle) {
    why = lib.missing.empty() ? "NVML (" + path + ") cannot be loaded: no NVIDIA driver here" : lib.error;
    return nullptr;
  }
  if (int r = a.init(); r != nvml_success) {
    why = "NVML (" + path + ") did not start (nvmlInit: " + a.describe(r) + "): no GPU or driver here";
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml* Nvml::get(std::string* why) {
  static std::once_flag once;
  static Nvml* nvml = nullptr; // never destroyed: threads may sample it until exit
  static std::string failure;
  std::call_once(once, [] {
    std::string path = env(Env::nvml_library);
    nvml = open(path.empty() ? "libnvidia-ml.so.1" : path, failure).release();
  });
  if (!nvml && why) *why = failure;
  return nvml;
}

Result<void*> Nvml::device(const std::string& gpu) const {
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

Result<std::uint64_t> Nvml::energy_mj(const std::string& gpu) const {
  auto d = device(gpu);
  if (!d) return d.error();
  if (!api_->energy) return make_error("unsupported", "this NVML has no nvmlDeviceGetTotalEnergyConsumption");
  unsigned long long mj = 0;
  int r = api_->energy(*d, &mj);
  if (r == nvml_not_supported) return make_error("unsupported", "this GPU has no total-energy counter (NVML: " + api_->describe(r) + ")");
  if (r != nvml_success) return make_error("nvml", "nvmlDeviceGetTotalEnergyConsumption: " + api_->describe(r));
  return std::uint64_t(mj);
}

Result<GpuIdentity> Nvml::identity(const std::string& gpu) const {
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

GpuReading Nvml::read(void* device) const {
  const Api& a = *api_;
  GpuReading r;
  r.has_sm = a.clock && a.clock(device, clock_sm, &r.sm_mhz) == nvml_success;
  r.has_mem = a.clock && a.clock(device, clock_mem, &r.mem_mhz) == nvml_success;
  r.has_temperature = a.temperature && a.temperature(device, sensor_gpu, &r.temperature_c) == nvml_success;
  r.has_power = a.power && a.power(device, &r.power_mw) == nvml_success;
  r.has_limit = a.power_limit && a.power_limit(device, &r.power_limit_mw) == nvml_success;
  r.has_reasons = a.reasons && a.reasons(device, &r.reasons) == nvml_success;
  return r;
}

} // namespace ciq
