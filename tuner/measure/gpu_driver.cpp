// Is there a usable NVIDIA GPU here (gpu_driver.h): the CUDA driver loaded
// as a program's CUDA runtime would load it (utils/cuda_driver.h, as
// ciq-replay does), initialised, its devices counted.
#include "tuner/measure/gpu_driver.h"

#include "utils/config.h"
#include "utils/cuda_driver.h"
#include "utils/files.h"

#include <mutex>

namespace ciq::tuner {

namespace {

// The driver loaded as ciq-replay loads it (utils/cuda_driver.h), asked to
// start and count its devices.
std::string check_driver() {
  const CudaLoad& load = cuda_load();
  if (!load.api) {
    if (!load.missing.empty()) return load.path + " is not a usable CUDA driver: it lacks " + load.missing;
    std::string why = "no CUDA driver (" + load.error + ")";
    if (load.path == "libcuda.so.1" && !nvidia_driver_loaded())
      why += "; no NVIDIA driver is loaded (no /proc/driver/nvidia)";
    return why;
  }
  const CudaApi& cu = *load.api;
  auto said = [&](const char* call, CUresult code) {
    const char* name = nullptr;
    if (cu.cuGetErrorName(code, &name) != CUDA_SUCCESS || !name) return std::string(call) + ": CUDA error " + std::to_string(code);
    return std::string(call) + ": " + name;
  };
  // CUDA_ERROR_NO_DEVICE (100) here is the usual "driver libraries but no
  // GPU" of a container or a build machine.
  if (CUresult r = cu.cuInit(0); r != CUDA_SUCCESS) return "the CUDA driver found no usable GPU (" + said("cuInit", r) + ")";
  int devices = 0;
  if (CUresult r = cu.cuDeviceGetCount(&devices); r != CUDA_SUCCESS)
    return "the CUDA driver cannot count the GPUs (" + said("cuDeviceGetCount", r) + ")";
  if (devices == 0) return "the CUDA driver sees no GPU";
  return "";
}

} // namespace

bool nvidia_driver_loaded() { return path_exists("/proc/driver/nvidia/version"); }

std::string no_gpu_reason() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] { reason = check_driver(); });
  return reason;
}

std::string no_gpu_message(const std::string& what, const std::string& reason) {
  return what + " on an NVIDIA GPU, and no program here can use one: " + reason +
         ". Without a GPU, tune on what ptxas reports instead (no program runs): ciq-tuner run --build CMD "
         "--objective ptxas:spill-stores (or ptxas:registers); or run this on a machine with an NVIDIA GPU and its driver";
}

} // namespace ciq::tuner
