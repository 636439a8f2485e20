// Loading the CUDA driver API (driver.h).
#include "tuner/replay/driver.h"

#include "utils/config.h"

#include <dlfcn.h>
#include <mutex>
#include <type_traits>

namespace ciq::replay {

Result<const CudaApi*> load_cuda() {
  static std::once_flag once;
  static CudaApi* api = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = env(Env::cuda_library);
    if (path.empty()) path = "libcuda.so.1";
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      failure = "cannot load the CUDA driver (" + (e ? std::string(e) : path) +
                "): replaying a kernel needs a machine with an NVIDIA GPU and its driver (`ciq-replay plan` needs neither)";
      return;
    }
    auto* loaded = new CudaApi{};
    std::string missing;
    // The entry points cuda.h's macros name (the _v2 ABI where there is one).
    auto need = [&](auto& fn, const char* name, const char* older = nullptr) {
      void* sym = dlsym(handle, name);
      if (!sym && older) sym = dlsym(handle, older);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
      if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    need(loaded->cuInit, "cuInit");
    need(loaded->cuDriverGetVersion, "cuDriverGetVersion");
    need(loaded->cuGetErrorName, "cuGetErrorName");
    need(loaded->cuGetErrorString, "cuGetErrorString");
    need(loaded->cuDeviceGetCount, "cuDeviceGetCount");
    need(loaded->cuDeviceGet, "cuDeviceGet");
    need(loaded->cuDeviceGetName, "cuDeviceGetName");
    need(loaded->cuDeviceGetAttribute, "cuDeviceGetAttribute");
    need(loaded->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    need(loaded->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
    need(loaded->cuCtxSetCurrent, "cuCtxSetCurrent");
    need(loaded->cuMemAlloc, "cuMemAlloc_v2");
    need(loaded->cuMemFree, "cuMemFree_v2");
    need(loaded->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    need(loaded->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    need(loaded->cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    need(loaded->cuMemsetD8Async, "cuMemsetD8Async");
    need(loaded->cuModuleLoadDataEx, "cuModuleLoadDataEx");
    need(loaded->cuModuleUnload, "cuModuleUnload");
    need(loaded->cuModuleGetFunction, "cuModuleGetFunction");
    need(loaded->cuFuncSetAttribute, "cuFuncSetAttribute");
    need(loaded->cuLaunchKernel, "cuLaunchKernel");
    need(loaded->cuStreamCreate, "cuStreamCreate");
    need(loaded->cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
    need(loaded->cuStreamSynchronize, "cuStreamSynchronize");
    need(loaded->cuEventCreate, "cuEventCreate");
    need(loaded->cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
    need(loaded->cuEventRecord, "cuEventRecord");
    need(loaded->cuEventSynchronize, "cuEventSynchronize");
    need(loaded->cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    if (!missing.empty()) {
      failure = path + " is not a usable CUDA driver: it lacks " + missing + " (a driver older than ciq supports?)";
      delete loaded;
      dlclose(handle);
      return;
    }
    api = loaded;  // lives as long as the process, like the driver
  });
  if (!api) return make_error("no-driver", failure);
  return static_cast<const CudaApi*>(api);
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

} // namespace ciq::replay
