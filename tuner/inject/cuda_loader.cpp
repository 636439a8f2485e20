#include "tuner/inject/cuda_loader.h"

#include "utils/dl.h"

namespace ciq::inject {

bool load_cuda_driver(CudaDriver& d, std::string& reason) {
  dl::Library lib = dl::load({"libcuda.so.1"}, {
      dl::need(d.func_get_param_info, "cuFuncGetParamInfo"),
      dl::may(d.kernel_get_param_info, "cuKernelGetParamInfo"),
      dl::may(d.func_get_module, "cuFuncGetModule"),
      dl::need(d.mem_get_address_range, "cuMemGetAddressRange_v2"),
      dl::need(d.pointer_get_attribute, "cuPointerGetAttribute"),
      dl::need(d.stream_is_capturing, "cuStreamIsCapturing"),
      dl::may(d.stream_is_capturing_ptsz, "cuStreamIsCapturing_ptsz"),
      dl::need(d.ctx_synchronize, "cuCtxSynchronize"),
      dl::need(d.memcpy_dtoh, "cuMemcpyDtoH_v2"),
      dl::need(d.ctx_get_device, "cuCtxGetDevice"),
      dl::need(d.device_get_name, "cuDeviceGetName"),
      dl::need(d.device_get_attribute, "cuDeviceGetAttribute"),
  });
  if (lib.handle) return true;
  reason = lib.error + (lib.missing.empty() ? "" : " (capture needs a CUDA 12.4 or newer driver)");
  return false;
}

} // namespace ciq::inject
