// The GPU model this machine's results are for, as `ciq-cache stale` and
// `ciq-tuner retune --stale` compare entries with it: the one named (an
// option), else $CIQ_GPU_MODEL (how a compile machine without a GPU says
// which GPU its builds are for), else the first GPU NVML sees here. One
// answer for both tools (utils/: the cache's CLI links nothing of the
// tuner). NVML is loaded at run time (utils/nvml.h), never linked: a
// machine without the driver simply has no GPU here.
#pragma once

#include <optional>
#include <string>

namespace ciq {

struct GpuModel {
  std::string model; // e.g. "NVIDIA H100 80GB HBM3"
  std::string from;  // who said so: the option's name, "CIQ_GPU_MODEL" or "NVML"
};

/// The first GPU's name through NVML (Nvml::open of $CIQ_NVML_LIBRARY, else
/// libnvidia-ml.so.1; shut down after); std::nullopt with `why` (the
/// library missing or lacking NVML's calls, no driver, no GPU) otherwise.
std::optional<std::string> nvml_gpu_model(std::string& why);

/// `named` (trimmed; `named_from` says where it came from, e.g. "--gpu")
/// when not empty, else $CIQ_GPU_MODEL, else nvml_gpu_model(). NVML is not
/// tried when `no_nvml_because` is given (a statically linked program
/// cannot load it): `why` is then that text. std::nullopt when none names a
/// GPU, with `why` saying what was tried.
std::optional<GpuModel> gpu_model_here(const std::string& named, const std::string& named_from, std::string& why,
                                       const char* no_nvml_because = nullptr);

} // namespace ciq
