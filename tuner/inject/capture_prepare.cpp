// LaunchCapture's preparation of one launch's capture (capture.h): from
// the driver's answers, what the launch's parameters and memory are, then
// a directory of its own with the allocations' bytes before the launch.
#include "tuner/inject/capture.h"

#include "tuner/inject/capture_parts.h"
#include "utils/env_table.h"
#include "utils/safe_open.h"
#include "utils/write_all.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

namespace ciq::inject {

bool LaunchCapture::not_in_graph_capture(const Launch& launch, std::string& why) {
  const CudaDriver& d = driver_;
  CUstreamCaptureStatus capture_status = CU_STREAM_CAPTURE_STATUS_NONE;
  auto is_capturing = launch.per_thread_stream && d.stream_is_capturing_ptsz ? d.stream_is_capturing_ptsz : d.stream_is_capturing;
  if (CUresult r = is_capturing(launch.stream, &capture_status); r != CUDA_SUCCESS) {
    why = cuda_error("cuStreamIsCapturing", r);
    return false;
  }
  if (capture_status != CU_STREAM_CAPTURE_STATUS_NONE) {
    why = "launched during stream capture (recorded into a CUDA graph): capturing would synchronise, which the graph forbids";
    return false;
  }
  return true;
}

bool LaunchCapture::read_params(const Launch& launch, LaunchRecord& r, std::string& why) {
  const CudaDriver& d = driver_;
  // The handle may be a CUkernel (the runtime's launches pass one; so does
  // cuLibraryGetKernel), which cuLaunchKernel accepts as a function but
  // cuFuncGetParamInfo refuses as an invalid handle (seen on an H100 with
  // driver 580: every index). Which query answers is settled on parameter
  // 0 and used for all.
  bool as_kernel = false;
  for (std::size_t i = 0; i < max_params; ++i) {
    std::size_t offset = 0, size = 0;
    CUresult result = as_kernel ? d.kernel_get_param_info(reinterpret_cast<CUkernel>(launch.function), i, &offset, &size)
                                : d.func_get_param_info(launch.function, i, &offset, &size);
    if (result != CUDA_SUCCESS && i == 0 && result != CUDA_ERROR_INVALID_VALUE && d.kernel_get_param_info) {
      as_kernel = true;
      result = d.kernel_get_param_info(reinterpret_cast<CUkernel>(launch.function), i, &offset, &size);
      if (result != CUDA_SUCCESS && result != CUDA_ERROR_INVALID_VALUE) {
        why = cuda_error("cuFuncGetParamInfo", result);
        return false;
      }
    }
    if (result != CUDA_SUCCESS) break;  // past the last parameter
    r.params.push_back({offset, size});
  }
  r.code_xxh128 = code_of(launch, as_kernel);
  std::optional<std::vector<std::uint8_t>> bytes;
  if (launch.kernel_params) {
    bytes = params_from_pointers(r.params, launch.kernel_params);
    if (!bytes) why = "a null pointer among the launch's kernelParams";
  } else {
    bytes = params_from_extra(r.params, launch.extra, why);
  }
  if (!bytes) return false;
  r.param_bytes = std::move(*bytes);
  return true;
}

bool LaunchCapture::find_memory(LaunchRecord& r, std::string& why) {
  const CudaDriver& d = driver_;
  r.memory = find_launch_memory(r.params, r.param_bytes, [&](std::uint64_t value) -> std::optional<AllocationFound> {
    CUdeviceptr base = 0;
    std::size_t size = 0;
    unsigned int memory_type = 0;
    if (d.mem_get_address_range(&base, &size, CUdeviceptr(value)) != CUDA_SUCCESS) {
      // Pinned host memory the device reads through: not an allocation of
      // the device's, but not a scalar either.
      if (d.pointer_get_attribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr(value)) == CUDA_SUCCESS &&
          memory_type == CU_MEMORYTYPE_HOST)
        return AllocationFound{value, 0, "host memory the device reads through a mapping"};
      return std::nullopt;
    }
    AllocationFound found{base, size, ""};
    unsigned int managed = 0;
    if (CUresult res = d.pointer_get_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, CUdeviceptr(value)); res != CUDA_SUCCESS)
      found.refusal = cuda_error("cuPointerGetAttribute(IS_MANAGED)", res);
    else if (managed)
      found.refusal = "managed memory (cudaMallocManaged): the driver moves it between host and device";
    else if (CUresult res2 = d.pointer_get_attribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr(value));
             res2 != CUDA_SUCCESS)
      found.refusal = cuda_error("cuPointerGetAttribute(MEMORY_TYPE)", res2);
    else if (memory_type == CU_MEMORYTYPE_HOST)
      found.refusal = "host memory the device reads through a mapping";
    return found;
  });
  if (!r.memory.refusal.empty()) {
    why = r.memory.refusal;
    return false;
  }
  std::uint64_t cap = table_->settings().max_bytes;
  if (r.memory.bytes > cap) {
    why = "the launch's allocations total " + std::to_string(r.memory.bytes) + " bytes, over " + env_name(Env::capture_max_bytes) + "=" +
          std::to_string(cap) + " (raise it to capture this launch)";
    return false;
  }
  return true;
}

void LaunchCapture::record_device(LaunchRecord& r) {
  const CudaDriver& d = driver_;
  CUdevice device = 0;
  if (d.ctx_get_device(&device) == CUDA_SUCCESS) {
    r.device = int(device);
    char name[256] = {};
    if (d.device_get_name(name, sizeof name - 1, device) == CUDA_SUCCESS) r.device_name = name;
    int major = 0, minor = 0;
    if (d.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) == CUDA_SUCCESS &&
        d.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) == CUDA_SUCCESS)
      r.compute_capability = {major, minor};
  }
}

bool LaunchCapture::make_capture_directory(InFlight& flight, std::string& why) {
  if (auto made = make_own_directory(dir_); !made) {
    why = "cannot make " + dir_ + ": " + made.error().message;
    return false;
  }
  for (std::uint32_t tries = 0;; ++tries) {
    flight.name = tag_ + "-" + std::to_string(next_capture_++);
    flight.path = dir_ + "/" + flight.name;
    if (::mkdir(flight.path.c_str(), 0755) == 0) break;  // never an existing directory: another's stays theirs
    if (errno != EEXIST || tries >= max_name_tries) {
      why = "cannot make " + flight.path + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

std::unique_ptr<LaunchCapture::InFlight> LaunchCapture::prepare(const Launch& launch, std::string& why) {
  // No synchronisation may happen while the stream is being recorded into
  // a graph: it would invalidate the program's capture. Checked first.
  if (!not_in_graph_capture(launch, why)) return nullptr;
  auto flight = std::make_unique<InFlight>();
  LaunchRecord& r = flight->record;
  r.kernel = std::string(launch.kernel);
  r.pid = pid_;
  r.exe = exe_;
  r.config = launch.config;
  r.launch_api = launch.api;
  if (!read_params(launch, r, why) || !find_memory(r, why)) return nullptr;
  if (CUresult res = driver_.ctx_synchronize(); res != CUDA_SUCCESS) {
    why = cuda_error("cuCtxSynchronize before the launch", res);
    return nullptr;
  }
  record_device(r);
  if (!make_capture_directory(*flight, why)) return nullptr;
  if (!copy_allocations(*flight, why)) {
    remove_capture(*flight);
    return nullptr;
  }
  return flight;
}

bool LaunchCapture::copy_allocations(InFlight& flight, std::string& why) {
  LaunchRecord& r = flight.record;
  std::vector<std::uint8_t> chunk;
  for (std::size_t i = 0; i < r.memory.allocations.size(); ++i) {
    const FoundAllocation& a = r.memory.allocations[i];
    std::string path = flight.path + "/" + memory_file_name(i);
    auto fd = create_new_file(path, O_WRONLY);
    if (!fd) {
      why = "cannot write " + path + ": " + fd.error().message;
      return false;
    }
    flight.files_made.push_back(path);
    chunk.resize(std::min<std::uint64_t>(a.size, chunk_bytes));
    StreamDigest digest;
    bool ok = true;
    for (std::uint64_t done = 0; ok && done < a.size;) {
      std::size_t n = std::size_t(std::min<std::uint64_t>(a.size - done, chunk.size()));
      if (CUresult res = driver_.memcpy_dtoh(chunk.data(), CUdeviceptr(a.base + done), n); res != CUDA_SUCCESS) {
        why = cuda_error("cuMemcpyDtoH", res) + " copying allocation " + std::to_string(i);
        ok = false;
        break;
      }
      digest.add(chunk.data(), n);
      if (!write_all(*fd, std::string_view(reinterpret_cast<const char*>(chunk.data()), n))) {
        why = "cannot write " + path + ": " + std::strerror(errno);
        ok = false;
      }
      done += n;
    }
    if (::close(*fd) != 0 && ok) {
      why = "cannot write " + path + ": " + std::strerror(errno);
      ok = false;
    }
    if (!ok) return false;
    r.before_xxh128.push_back(digest.hex());
  }
  return true;
}

} // namespace ciq::inject
