#include "utils/gpu_model.h"

#include "utils/config.h"
#include "utils/nvml.h"
#include "utils/text.h"

namespace ciq {

std::optional<std::string> nvml_gpu_model(std::string& why) {
  std::string path = env(Env::nvml_library);
  auto nvml = Nvml::open(path.empty() ? "libnvidia-ml.so.1" : path, why);
  if (!nvml) return std::nullopt;
  auto id = nvml->identity("");
  if (!id || trim(id->name).empty()) {
    why = "NVML sees no GPU";
    return std::nullopt;
  }
  return std::string(trim(id->name));
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
