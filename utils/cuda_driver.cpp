// Loading the CUDA driver API (cuda_driver.h).
#include "utils/cuda_driver.h"

#include "utils/config.h"
#include "utils/dl.h"

#include <mutex>

namespace ciq {

const CudaLoad& cuda_load() {
  static std::once_flag once;
  static CudaLoad load;
  std::call_once(once, [] {
    std::string path = env(Env::cuda_library);
    if (path.empty()) path = "libcuda.so.1";
    load.path = path;
    auto* loaded = new CudaApi{};
    // The entry points cuda.h's macros name (the _v2 ABI where there is one).
    dl::Library lib = dl::load({path}, {
        dl::need(loaded->cuInit, "cuInit"),
        dl::need(loaded->cuDriverGetVersion, "cuDriverGetVersion"),
        dl::need(loaded->cuGetErrorName, "cuGetErrorName"),
        dl::need(loaded->cuGetErrorString, "cuGetErrorString"),
        dl::need(loaded->cuDeviceGetCount, "cuDeviceGetCount"),
        dl::need(loaded->cuDeviceGet, "cuDeviceGet"),
        dl::need(loaded->cuDeviceGetName, "cuDeviceGetName"),
        dl::need(loaded->cuDeviceGetAttribute, "cuDeviceGetAttribute"),
        dl::need(loaded->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        dl::need(loaded->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
        dl::need(loaded->cuCtxSetCurrent, "cuCtxSetCurrent"),
        dl::need(loaded->cuMemAlloc, "cuMemAlloc_v2"),
        dl::need(loaded->cuMemFree, "cuMemFree_v2"),
        dl::need(loaded->cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
        dl::need(loaded->cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
        dl::need(loaded->cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
        dl::need(loaded->cuMemsetD8Async, "cuMemsetD8Async"),
        dl::need(loaded->cuModuleLoadDataEx, "cuModuleLoadDataEx"),
        dl::need(loaded->cuModuleUnload, "cuModuleUnload"),
        dl::need(loaded->cuModuleGetFunction, "cuModuleGetFunction"),
        dl::need(loaded->cuFuncSetAttribute, "cuFuncSetAttribute"),
        dl::need(loaded->cuLaunchKernel, "cuLaunchKernel"),
        dl::need(loaded->cuStreamCreate, "cuStreamCreate"),
        dl::need(loaded->cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
        dl::need(loaded->cuStreamSynchronize, "cuStreamSynchronize"),
        dl::need(loaded->cuEventCreate, "cuEventCreate"),
        dl::need(loaded->cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
        dl::need(loaded->cuEventRecord, "cuEventRecord"),
        dl::need(loaded->cuEventSynchronize, "cuEventSynchronize"),
        dl::need(loaded->cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    });
    if (!lib.handle) {
      load.error = lib.error;
      load.missing = lib.missing;
      delete loaded;
      return;
    }
    load.api = loaded;
  });
  return load;
}

Result<const CudaApi*> load_cuda() {
  const CudaLoad& load = cuda_load();
  if (load.api) return load.api;
  return make_error("no-driver",
                    load.missing.empty()
                        ? "cannot load the CUDA driver (" + load.error +
                              "): replaying a kernel needs a machine with an NVIDIA GPU and its driver (`ciq-replay plan` needs neither)"
                        : load.path + " is not a usable CUDA driver: it lacks " + load.missing +
                              " (a driver older than ciq supports?)");
}

std::string cuda_error(const CudaApi& api, const char* call, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName(code, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.cuGetErrorString(code, &text) != CUDA_SUCCESS) text = nullptr;
  std::string out = std::string(call) + ": " + (name ? name : "CUDA error " + std::to_string(code));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

} // namespace ciq
