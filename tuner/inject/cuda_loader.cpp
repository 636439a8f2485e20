#include "tuner/inject/cuda_loader.h"

#include <dlfcn.h>

namespace ciq::inject {

namespace {

template <typename F> void resolve(void* handle, const char* symbol, F& out, std::string* missing) {
  out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!out && missing) *missing += (missing->empty() ? "" : ", ") + std::string(symbol);
}

} // namespace

bool load_cuda_driver(CudaDriver& d, std::string& reason) {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    reason = why ? why : "libcuda.so.1 cannot be loaded";
    return false;
  }
  std::string missing;
  resolve(handle, "cuFuncGetParamInfo", d.func_get_param_info, &missing);
  resolve(handle, "cuKernelGetParamInfo", d.kernel_get_param_info, nullptr);
  resolve(handle, "cuFuncGetModule", d.func_get_module, nullptr);
  resolve(handle, "cuMemGetAddressRange_v2", d.mem_get_address_range, &missing);
  resolve(handle, "cuPointerGetAttribute", d.pointer_get_attribute, &missing);
  resolve(handle, "cuStreamIsCapturing", d.stream_is_capturing, &missing);
  resolve(handle, "cuStreamIsCapturing_ptsz", d.stream_is_capturing_ptsz, nullptr);
  resolve(handle, "cuCtxSynchronize", d.ctx_synchronize, &missing);
  resolve(handle, "cuMemcpyDtoH_v2", d.memcpy_dtoh, &missing);
  resolve(handle, "cuCtxGetDevice", d.ctx_get_device, &missing);
  resolve(handle, "cuDeviceGetName", d.device_get_name, &missing);
  resolve(handle, "cuDeviceGetAttribute", d.device_get_attribute, &missing);
  if (!missing.empty()) {
    reason = "libcuda.so.1 lacks " + missing + " (capture needs a CUDA 12.4 or newer driver)";
    return false;
  }
  return true;
}

} // namespace ciq::inject
