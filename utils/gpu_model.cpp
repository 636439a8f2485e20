#include "utils/gpu_model.h"

#include "utils/config.h"
#include "utils/dl.h"
#include "utils/text.h"

namespace ciq {

std::optional<std::string> nvml_gpu_model(std::string& why) {
  std::string path = env(Env::nvml_library);
  if (path.empty()) path = "libnvidia-ml.so.1";
  int (*init)() = nullptr;
  int (*by_index)(unsigned, void**) = nullptr;
  int (*name)(void*, char*, unsigned) = nullptr;
  int (*shutdown)() = nullptr;
  dl::Library lib = dl::load({path}, {dl::need(init, "nvmlInit_v2"), dl::need(by_index, "nvmlDeviceGetHandleByIndex_v2"),
                                      dl::need(name, "nvmlDeviceGetName"), dl::may(shutdown, "nvmlShutdown")});
  if (!lib.handle) {
    why = lib.missing.empty() ? "NVML (" + path + ") cannot be loaded: no NVIDIA driver here" : lib.error;
    return std::nullopt;
  }
  if (init() != 0) {
    why = "NVML (" + path + ") did not start: no GPU or driver here";
    return std::nullopt;
  }
  std::optional<std::string> model;
  void* device = nullptr;
  char text[256] = {};
  if (by_index(0, &device) != 0 || name(device, text, sizeof text) != 0 || trim(text).empty()) why = "NVML sees no GPU";
  else model = std::string(trim(text));
  if (shutdown) shutdown();
  return model;
}

std::optional<GpuModel> gpu_model_here(const std::string& named, const std::string& named_from, std::string& why,
                                       const char* no_nvml_because) {
  if (!trim(named).empty()) return GpuModel{std::string(trim(named)), named_from};
  if (std::string model = env(Env::gpu_model); !trim(model).empty()) return GpuModel{std::string(trim(model)), env_name(Env::gpu_model)};
  if (no_nvml_because) {
    why = no_nvml_because;
    return std::nullopt;
  }
  if (auto model = nvml_gpu_model(why)) return GpuModel{*model, "NVML"};
  return std::nullopt;
}

} // namespace ciq
