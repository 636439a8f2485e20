#include "cache/cli/present_gpu.h"

#include "utils/config.h"
#include "utils/text.h"

#include <dlfcn.h>

namespace ciq::cache::cli {

namespace {

// The first GPU's name through NVML (its documented C entry points).
std::optional<std::string> nvml_model(std::string& why) {
#ifdef CIQ_STATIC_EXECUTABLE
  why = "this ciq-cache is linked statically (CIQ_PORTABLE) and cannot load NVML";
  return std::nullopt;
#else
  std::string path = env(Env::nvml_library);
  if (path.empty()) path = "libnvidia-ml.so.1";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    why = "NVML (" + path + ") cannot be loaded: no NVIDIA driver here";
    return std::nullopt;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(handle, "nvmlInit_v2"));
  auto by_index = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(handle, "nvmlDeviceGetHandleByIndex_v2"));
  auto name = reinterpret_cast<int (*)(void*, char*, unsigned)>(dlsym(handle, "nvmlDeviceGetName"));
  auto shutdown = reinterpret_cast<int (*)()>(dlsym(handle, "nvmlShutdown"));
  std::optional<std::string> model;
  void* device = nullptr;
  char text[256] = {};
  if (!init || !by_index || !name) why = path + " lacks nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetName";
  else if (init() != 0) why = "NVML (" + path + ") did not start: no GPU or driver here";
  else {
    if (by_index(0, &device) != 0 || name(device, text, sizeof text) != 0 || !*text) why = "NVML sees no GPU";
    else model = std::string(trim(text));
    if (shutdown) shutdown();
  }
  // The library stays loaded: NVML does not promise that unloading it is safe.
  return model;
#endif
}

} // namespace

std::optional<PresentGpu> present_gpu(const std::string& named, std::string& why) {
  if (!trim(named).empty()) return PresentGpu{std::string(trim(named)), "--gpu"};
  if (std::string model = env(Env::gpu_model); !trim(model).empty()) return PresentGpu{std::string(trim(model)), env_name(Env::gpu_model)};
  if (auto model = nvml_model(why)) return PresentGpu{*model, "NVML"};
  return std::nullopt;
}

} // namespace ciq::cache::cli
