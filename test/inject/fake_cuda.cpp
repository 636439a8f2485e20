// A stand-in libcuda.so.1 for kernel capture's tests (no GPU here): the
// driver calls tuner/inject/cuda_loader.h resolves, over host memory, plus
// hooks (fake_cuda_*) with which the stand-in program (capture_driver.cpp)
// makes allocations, functions and streams and plays a kernel's writes.
//
// Like a GPU, a kernel's writes are not seen at once: fake_cuda_queue_write
// holds them until the next cuCtxSynchronize, so a capture that forgot to
// synchronise after the launch digests the memory unchanged. Device
// addresses are made up (0x7e00_0000_0000 upwards), never host addresses.
// Built twice: with FAKE_CUDA_OLD, cuFuncGetParamInfo is missing (a driver
// older than 12.4).
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace {

enum Kind { device_memory = 0, managed_memory = 1, host_memory = 2 };

struct Allocation {
  std::uint64_t base, size;
  int kind;
  std::vector<unsigned char> bytes;
};
struct PendingWrite {
  std::uint64_t address;
  std::vector<unsigned char> bytes;
};
struct Function {
  std::vector<std::size_t> offsets, sizes;
  bool kernel = false;  // a CUkernel handle, as the CUDA runtime's launches pass
  CUmodule module = nullptr;  // cuFuncGetModule's answer; none: an invalid handle
};

std::vector<Allocation> allocations;
std::vector<PendingWrite> pending;
std::set<CUstream> capturing;
std::uint64_t next_base = 0x7e0000000000ULL;
int synchronisations = 0;

Allocation* find(std::uint64_t address) {
  for (auto& a : allocations)
    if (address >= a.base && address - a.base < a.size) return &a;
  return nullptr;
}

} // namespace

extern "C" {

#define HOOK __attribute__((visibility("default")))

/// A new allocation of `size` bytes of `kind` (0 device, 1 managed, 2 host),
/// byte i holding (i * 7 + seed) & 0xff.
HOOK CUdeviceptr fake_cuda_alloc(std::uint64_t size, int kind, unsigned seed) {
  Allocation a{next_base, size, kind, std::vector<unsigned char>(size)};
  for (std::uint64_t i = 0; i < size; ++i) a.bytes[i] = static_cast<unsigned char>((i * 7 + seed) & 0xff);
  next_base += (size + (std::uint64_t(1) << 20)) & ~((std::uint64_t(1) << 20) - 1);
  next_base += std::uint64_t(1) << 20;  // a gap: an address past the end is in no allocation
  allocations.push_back(std::move(a));
  return CUdeviceptr(allocations.back().base);
}

/// A kernel's write, seen at the next cuCtxSynchronize.
HOOK void fake_cuda_queue_write(CUdeviceptr address, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  pending.push_back({std::uint64_t(address), std::vector<unsigned char>(p, p + size)});
}

/// A function whose parameters lie at `offsets` with `sizes`.
HOOK CUfunction fake_cuda_function(std::size_t count, const std::size_t* offsets, const std::size_t* sizes) {
  auto* f = new Function{std::vector<std::size_t>(offsets, offsets + count), std::vector<std::size_t>(sizes, sizes + count)};
  return reinterpret_cast<CUfunction>(f);
}

/// A CUkernel handle (cuLibraryGetKernel's; the runtime launches with one):
/// cuLaunchKernel takes it, cuFuncGetParamInfo refuses it at every index
/// as an invalid handle (as the real driver does), cuKernelGetParamInfo
/// answers.
HOOK CUfunction fake_cuda_kernel_handle(std::size_t count, const std::size_t* offsets, const std::size_t* sizes) {
  auto* f = new Function{std::vector<std::size_t>(offsets, offsets + count), std::vector<std::size_t>(sizes, sizes + count), true};
  return reinterpret_cast<CUfunction>(f);
}

/// A new module handle, and the function's module (cuFuncGetModule).
HOOK CUmodule fake_cuda_module() { return reinterpret_cast<CUmodule>(new char); }
HOOK void fake_cuda_set_module(CUfunction func, CUmodule module) { reinterpret_cast<Function*>(func)->module = module; }

HOOK void fake_cuda_begin_capture(CUstream stream) { capturing.insert(stream); }

/// The bytes of every allocation, in order of allocation (the program's
/// own view of its memory, for its output).
HOOK std::size_t fake_cuda_memory(std::size_t index, const unsigned char** bytes) {
  if (index >= allocations.size()) return 0;
  *bytes = allocations[index].bytes.data();
  return allocations[index].bytes.size();
}

HOOK int fake_cuda_synchronisations() { return synchronisations; }

#ifndef FAKE_CUDA_OLD
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t index, size_t* offset, size_t* size) {
  const auto* f = reinterpret_cast<const Function*>(func);
  if (f && f->kernel) return CUDA_ERROR_INVALID_HANDLE;
  if (!f || index >= f->offsets.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = f->offsets[index];
  *size = f->sizes[index];
  return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuFuncGetModule(CUmodule* module, CUfunction func) {
  const auto* f = reinterpret_cast<const Function*>(func);
  if (!f || f->kernel || !f->module) return CUDA_ERROR_INVALID_HANDLE;
  *module = f->module;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t* offset, size_t* size) {
  const auto* f = reinterpret_cast<const Function*>(kernel);
  if (!f || index >= f->offsets.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = f->offsets[index];
  *size = f->sizes[index];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr address) {
  Allocation* a = find(address);
  if (!a || a->kind == host_memory) return CUDA_ERROR_NOT_FOUND;
  if (base) *base = CUdeviceptr(a->base);
  if (size) *size = a->size;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr address) {
  Allocation* a = find(address);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  if (attribute == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
    *static_cast<unsigned int*>(data) = a->kind == managed_memory;
    return CUDA_SUCCESS;
  }
  if (attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
    *static_cast<unsigned int*>(data) = a->kind == host_memory ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  *status = capturing.count(stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  if (!capturing.empty()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // as a real one would invalidate the graph
  ++synchronisations;
  for (const auto& w : pending) {
    Allocation* a = find(w.address);
    if (a) std::memcpy(a->bytes.data() + (w.address - a->base), w.bytes.data(),
                       std::min<std::size_t>(w.bytes.size(), a->size - (w.address - a->base)));
  }
  pending.clear();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, size_t size) {
  Allocation* a = find(source);
  if (!a || a->kind == host_memory || size > a->size - (source - a->base)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(destination, a->bytes.data() + (source - a->base), size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice) {
  std::strncpy(name, "Fake GPU 80GB", std::size_t(length));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *value = 9;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *value = 0;
  else return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

} // extern "C"
