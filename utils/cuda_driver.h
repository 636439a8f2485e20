// The CUDA driver API, resolved at run time: dlopen("libcuda.so.1") (or
// $CIQ_CUDA_LIBRARY) and dlsym of the entry points ciq uses: ciq-replay's
// launches, and ciq-tuner's question whether a program here can use a GPU
// (tuner/measure/gpu_driver.h). No ciq program links libcuda, so that each
// builds and starts on machines without a GPU and says clearly when there
// is no driver. (libciq-inject, inside the user's program, takes the
// libcuda already loaded there: tuner/inject/cuda_loader.h.)
// The types are the driver's ABI, declared here so that no CUDA Toolkit is
// needed to build; the constants carry their cuda.h names.
#pragma once

#include "utils/result.h"

#include <cstddef>
#include <string>

namespace ciq {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0;
inline void* const CU_LAUNCH_PARAM_END = reinterpret_cast<void*>(0);
inline void* const CU_LAUNCH_PARAM_BUFFER_POINTER = reinterpret_cast<void*>(1);
inline void* const CU_LAUNCH_PARAM_BUFFER_SIZE = reinterpret_cast<void*>(2);

struct CudaApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream);
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
};

/// How loading the driver went (once per process): the API, or why not.
struct CudaLoad {
  const CudaApi* api = nullptr; // lives as long as the process, like the driver
  std::string path;             // the library tried
  std::string error;            // api null: dlopen's message, or "PATH lacks A, B"
  std::string missing;          // api null and the library loaded: the entry points it lacks
};
const CudaLoad& cuda_load();

/// The driver's API. Fails ("no-driver") when the library cannot be loaded
/// or lacks an entry point, with a message that says what is missing and
/// that replaying a kernel needs an NVIDIA GPU and its driver.
Result<const CudaApi*> load_cuda();

/// "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access
/// was encountered)" for a failed `call`.
std::string cuda_error(const CudaApi& api, const char* call, CUresult code);

} // namespace ciq
