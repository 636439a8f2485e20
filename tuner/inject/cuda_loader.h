// The CUDA driver calls kernel capture makes, resolved at run time.
// libciq-inject is never linked to libcuda: the driver is already in the
// process (it loaded this library), and dlopen("libcuda.so.1") finds that
// copy. A driver too old to have one of these calls makes capture's status
// "no-driver" with the missing names, never a failed load.
#pragma once

#include <cuda.h>

#include <string>

namespace ciq::inject {

struct CudaDriver {
  decltype(&cuFuncGetParamInfo) func_get_param_info = nullptr;
  decltype(&cuKernelGetParamInfo) kernel_get_param_info = nullptr;  // optional: handles that are CUkernels
  decltype(&cuFuncGetModule) func_get_module = nullptr;              // optional: which module's code ran
  decltype(&cuMemGetAddressRange_v2) mem_get_address_range = nullptr;
  decltype(&cuPointerGetAttribute) pointer_get_attribute = nullptr;
  decltype(&cuStreamIsCapturing) stream_is_capturing = nullptr;
  decltype(&cuStreamIsCapturing) stream_is_capturing_ptsz = nullptr;  // optional: for the _ptsz launches
  decltype(&cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&cuMemcpyDtoH_v2) memcpy_dtoh = nullptr;
  decltype(&cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&cuDeviceGetName) device_get_name = nullptr;
  decltype(&cuDeviceGetAttribute) device_get_attribute = nullptr;
};

/// Resolves every call of CudaDriver from libcuda.so.1. False with `reason`
/// (the dlopen error, or the names missing) when one that is not optional
/// cannot be found.
bool load_cuda_driver(CudaDriver& driver, std::string& reason);

} // namespace ciq::inject
