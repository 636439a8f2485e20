// Is there a usable NVIDIA GPU here (gpu_driver.h): the CUDA driver loaded
// as a program's CUDA runtime would load it (utils/dl.h, as ciq-replay
// does), initialised, its devices counted.
#include "tuner/measure/gpu_driver.h"

#include "utils/config.h"
#include "utils/dl.h"
#include "utils/files.h"

#include <mutex>

namespace ciq::tuner {

namespace {

std::string check_driver() {
  std::string path = env(Env::cuda_library);
  if (path.empty()) path = "libcuda.so.1";
  int (*init)(unsigned) = nullptr;
  int (*count)(int*) = nullptr;
  int (*error_name)(int, const char**) = nullptr;
  dl::Library lib = dl::load({path}, {dl::need(init, "cuInit"), dl::need(count, "cuDeviceGetCount"),
                                      dl::may(error_name, "cuGetErrorName")});
  if (!lib.handle) {
    if (!lib.missing.empty()) return path + " is not a usable CUDA driver: it lacks " + lib.missing;
    std::string why = "no CUDA driver (" + lib.error + ")";
    if (path == "libcuda.so.1" && !nvidia_driver_loaded())
      why += "; no NVIDIA driver is loaded (no /proc/driver/nvidia)";
    return why;
  }
  auto said = [&](const char* call, int code) {
    const char* text = nullptr;
    if (!error_name || error_name(code, &text) != 0 || !text) return std::string(call) + ": CUDA error " + std::to_string(code);
    return std::string(call) + ": " + text;
  };
  // CUDA_ERROR_NO_DEVICE (100) here is the usual "driver libraries but no
  // GPU" of a container or a build machine.
  if (int r = init(0); r != 0) return "the CUDA driver found no usable GPU (" + said("cuInit", r) + ")";
  int devices = 0;
  if (int r = count(&devices); r != 0) return "the CUDA driver cannot count the GPUs (" + said("cuDeviceGetCount", r) + ")";
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
