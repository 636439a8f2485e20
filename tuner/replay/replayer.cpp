// The GPU side of a replay (replayer.h).
#include "tuner/replay/replayer.h"

#include "tuner/replay/plan.h"
#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace ciq::replay {

namespace {

constexpr std::size_t k_cached_modules = 4;         // unpinned modules kept loaded
constexpr std::uint64_t k_max_cubin_bytes = std::uint64_t(1) << 30;
constexpr std::size_t k_file_chunk = std::size_t(64) << 20;
constexpr std::uint32_t k_default_smem_limit = 48 * 1024;

/// Errors after which the context is unusable (cuda.h: 700 and 709-719
/// but the peer and host-registration ones; 214 an uncorrectable ECC error).
bool sticky(CUresult code) {
  return code == 700 || code == 702 || code == 709 || code == 710 || (code >= 714 && code <= 719) || code == 214;
}

} // namespace

struct Replayer::Loaded {
  std::vector<CUdeviceptr> pristine, working;
  std::vector<std::uint8_t> params;  // relocated onto `working`
};

struct Replayer::Module {
  std::string path, fingerprint;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;  // one per capture
  std::uint64_t last_used = 0;
  bool pinned = false;
};

Result<void> Replayer::check(const char* call, CUresult code) {
  if (code == CUDA_SUCCESS) return {};
  if (sticky(code)) broken_ = true;
  return make_error(ciq::errc::cuda, cuda_error(*api_, call, code));
}

Result<std::unique_ptr<Replayer>> Replayer::open(int ordinal, std::vector<formats::Capture> captures) {
  auto api = load_cuda();
  if (!api) return api.error();
  std::unique_ptr<Replayer> r(new Replayer);
  r->api_ = *api;
  const CudaApi& cu = **api;
  if (CUresult e = cu.cuInit(0); e != CUDA_SUCCESS)
    return make_error("no-driver", cuda_error(cu, "cuInit", e) + ": the driver found no usable GPU");
  int count = 0;
  if (auto c = r->check("cuDeviceGetCount", cu.cuDeviceGetCount(&count)); !c) return c.error();
  if (ordinal >= count)
    return make_error(ciq::errc::usage, "--device " + std::to_string(ordinal) + ": this process sees " + std::to_string(count) +
                                   " device(s) (CUDA_VISIBLE_DEVICES applies)");
  if (auto c = r->check("cuDeviceGet", cu.cuDeviceGet(&r->device_, ordinal)); !c) return c.error();
  if (auto c = r->check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(&r->context_, r->device_)); !c) return c.error();
  r->context_retained_ = true;
  if (auto c = r->check("cuCtxSetCurrent", cu.cuCtxSetCurrent(r->context_)); !c) return c.error();
  char name[256] = {};
  cu.cuDeviceGetName(name, sizeof name - 1, r->device_);
  int major = 0, minor = 0, l2 = 0;
  cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, r->device_);
  cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, r->device_);
  cu.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, r->device_);
  r->description_ = std::string(name) + " (device " + std::to_string(ordinal) + ", sm_" + std::to_string(major) +
                    std::to_string(minor) + ", L2 " + std::to_string(l2 >> 20) + " MiB)";
  if (auto c = r->check("cuStreamCreate", cu.cuStreamCreate(&r->stream_, CU_STREAM_NON_BLOCKING)); !c) return c.error();
  if (auto c = r->check("cuEventCreate", cu.cuEventCreate(&r->start_, CU_EVENT_DEFAULT)); !c) return c.error();
  if (auto c = r->check("cuEventCreate", cu.cuEventCreate(&r->stop_, CU_EVENT_DEFAULT)); !c) return c.error();
  // Twice the L2 (at least 8 MiB when the driver reports none): writing it
  // evicts every line the previous launch or restore left there.
  r->scratch_bytes_ = std::max<std::size_t>(2 * std::size_t(std::max(l2, 0)), std::size_t(8) << 20);
  if (auto c = r->check("cuMemAlloc (L2 flush buffer)", cu.cuMemAlloc(&r->scratch_, r->scratch_bytes_)); !c) return c.error();

  for (const auto& c : captures) {
    if (c.compute_capability[0] && (c.compute_capability[0] != major || c.compute_capability[1] != minor))
      std::fprintf(stderr, "ciq-replay: warning: %s was captured on sm_%d%d, this device is sm_%d%d: its timing may not transfer\n",
                   printable(c.dir).c_str(), c.compute_capability[0], c.compute_capability[1], major, minor);
  }
  r->captures_ = std::move(captures);
  for (const auto& c : r->captures_)
    if (auto loaded = r->load(c); !loaded) return loaded.error();
  return r;
}

Result<void> Replayer::load(const formats::Capture& c) {
  const CudaApi& cu = *api_;
  auto loaded = std::make_unique<Loaded>();
  for (std::size_t i = 0; i < c.allocations.size(); ++i) {
    const auto& a = c.allocations[i];
    std::string what = "allocation " + std::to_string(i) + " of " + c.dir + " (" + std::to_string(a.size) + " bytes)";
    CUdeviceptr pristine = 0, working = 0;
    if (auto e = check("cuMemAlloc", cu.cuMemAlloc(&pristine, a.size)); !e)
      return make_error(ciq::errc::cuda, e.error().message + " for " + what);
    loaded->pristine.push_back(pristine);
    if (auto e = check("cuMemAlloc", cu.cuMemAlloc(&working, a.size)); !e)
      return make_error(ciq::errc::cuda, e.error().message + " for the working copy of " + what);
    loaded->working.push_back(working);
    // Opened once, checked on that descriptor, hashed as it is loaded:
    // an image swapped or changed since the capture was read is refused
    // (capture.h, read_capture_image) before any output is compared.
    auto load = [&](std::uint64_t offset, const std::uint8_t* bytes, std::size_t size) -> Result<void> {
      if (auto e = check("cuMemcpyHtoD", cu.cuMemcpyHtoD(pristine + offset, bytes, size)); !e)
        return make_error(ciq::errc::cuda, e.error().message + " loading " + a.file);
      return {};
    };
    if (auto loaded_image = formats::read_capture_image(a, load, k_file_chunk); !loaded_image) {
      const Error& e = loaded_image.error();
      if (e.code == ciq::errc::cuda || e.code == ciq::errc::corrupt) return e;
      return make_error("io", c.dir + ": allocation " + std::to_string(i) + " cannot be loaded: " + e.message);
    }
  }
  auto params = relocated_params(c, std::vector<std::uint64_t>(loaded->working.begin(), loaded->working.end()));
  if (!params) return params.error();
  loaded->params = std::move(*params);
  loaded_.push_back(std::move(loaded));
  return {};
}

Replayer::~Replayer() {
  if (!api_) return;
  const CudaApi& cu = *api_;
  for (auto& m : modules_)
    if (m->module) cu.cuModuleUnload(m->module);
  for (auto& l : loaded_) {
    for (auto p : l->pristine) cu.cuMemFree(p);
    for (auto p : l->working) cu.cuMemFree(p);
  }
  if (scratch_) cu.cuMemFree(scratch_);
  if (start_) cu.cuEventDestroy(start_);
  if (stop_) cu.cuEventDestroy(stop_);
  if (stream_) cu.cuStreamDestroy(stream_);
  if (context_retained_) cu.cuDevicePrimaryCtxRelease(device_);
}

Result<Replayer::Module*> Replayer::load_module(const std::string& cubin, bool pinned) {
  const CudaApi& cu = *api_;
  std::string fingerprint = file_fingerprint(cubin).value_or("");
  if (fingerprint.empty()) return make_error("module", cubin + ": no such file (the cubin to replay with)");
  ++module_clock_;
  for (auto& m : modules_) {
    if (m->path == cubin && m->fingerprint == fingerprint) {
      m->last_used = module_clock_;
      m->pinned = m->pinned || pinned;
      return m.get();
    }
  }
  auto image = read_file(cubin, k_max_cubin_bytes);
  if (!image) return make_error("module", image.error().message);
  auto m = std::make_unique<Module>();
  m->path = cubin;
  m->fingerprint = fingerprint;
  m->pinned = pinned;
  m->last_used = module_clock_;
  char log[16384] = {};
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(std::uintptr_t(sizeof log - 1))};
  if (CUresult e = cu.cuModuleLoadDataEx(&m->module, image->data(), 2, options, values); e != CUDA_SUCCESS) {
    if (sticky(e)) broken_ = true;
    std::string message = cubin + ": " + cuda_error(cu, "cuModuleLoadDataEx", e);
    if (log[0]) message += ": " + std::string(log);
    return make_error("module", message);
  }
  for (const auto& c : captures_) {
    CUfunction f = nullptr;
    if (CUresult e = cu.cuModuleGetFunction(&f, m->module, c.kernel.c_str()); e != CUDA_SUCCESS) {
      cu.cuModuleUnload(m->module);
      return make_error("module", cubin + " has no kernel " + c.kernel + " (" + cuda_error(cu, "cuModuleGetFunction", e) +
                                      "): give a cubin compiled from the captured kernel's module");
    }
    if (c.dynamic_smem > k_default_smem_limit) {
      if (CUresult e = cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(c.dynamic_smem));
          e != CUDA_SUCCESS) {
        cu.cuModuleUnload(m->module);
        return make_error("module", cubin + ": " + c.kernel + " cannot have " + std::to_string(c.dynamic_smem) +
                                        " bytes of dynamic shared memory (" +
                                        cuda_error(cu, "cuFuncSetAttribute", e) + ")");
      }
    }
    m->functions.push_back(f);
  }
  // Unload the least recently used unpinned modules beyond the cache's size.
  modules_.push_back(std::move(m));
  Module* added = modules_.back().get();
  for (;;) {
    std::size_t unpinned = std::count_if(modules_.begin(), modules_.end(), [](const auto& x) { return !x->pinned; });
    if (unpinned <= k_cached_modules) break;
    auto oldest = modules_.end();
    for (auto it = modules_.begin(); it != modules_.end(); ++it)
      if (!(*it)->pinned && (oldest == modules_.end() || (*it)->last_used < (*oldest)->last_used)) oldest = it;
    cu.cuModuleUnload((*oldest)->module);
    modules_.erase(oldest);
  }
  return added;
}

/// Whether the program's own launch changed the allocation (its digests
/// before and after differ, or were not recorded): what a sample must
/// restore. What the kernel only reads stays as it was restored at the
/// start of the request.
static bool written_by_program(const formats::CaptureAllocation& a) {
  return a.before_xxh128.empty() || a.after_xxh128.empty() || a.before_xxh128 != a.after_xxh128;
}

Result<void> Replayer::restore(std::size_t index, bool all) {
  const Loaded& l = *loaded_[index];
  const auto& allocations = captures_[index].allocations;
  for (std::size_t i = 0; i < l.working.size(); ++i) {
    if (!all && !written_by_program(allocations[i])) continue;
    if (auto c = check("cuMemcpyDtoDAsync (restoring the inputs)",
                       api_->cuMemcpyDtoDAsync(l.working[i], l.pristine[i], std::size_t(allocations[i].size), stream_));
        !c)
      return c;
  }
  return {};
}

Result<void> Replayer::launch(std::size_t index, Module& module) {
  const formats::Capture& c = captures_[index];
  Loaded& l = *loaded_[index];
  std::size_t size = l.params.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, l.params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  return check("cuLaunchKernel", api_->cuLaunchKernel(module.functions[index], c.grid[0], c.grid[1], c.grid[2], c.block[0],
                                                      c.block[1], c.block[2], c.dynamic_smem, stream_, nullptr, extra));
}

Result<void> Replayer::outputs(std::size_t index, Module& module, std::vector<HostBytes>& into) {
  if (broken_) return make_error(ciq::errc::cuda, "an earlier launch left the GPU context unusable");
  if (auto r = restore(index, true); !r) return r.error();
  if (auto r = launch(index, module); !r) return r.error();
  if (auto r = check("cuStreamSynchronize (after the launch)", api_->cuStreamSynchronize(stream_)); !r) return r.error();
  const auto& allocations = captures_[index].allocations;
  into.resize(allocations.size());
  for (std::size_t i = 0; i < allocations.size(); ++i) {
    HostBytes& bytes = into[i];
    bytes.resize(std::size_t(allocations[i].size)); // the same size as last time: nothing made or filled
    if (auto r = check("cuMemcpyDtoH", api_->cuMemcpyDtoH(bytes.data(), loaded_[index]->working[i], bytes.size())); !r)
      return r.error();
  }
  return {};
}

Result<Timing> Replayer::time(std::size_t index, Module& module, int warmup, int samples, double max_seconds) {
  if (broken_) return make_error(ciq::errc::cuda, "an earlier launch left the GPU context unusable");
  const CudaApi& cu = *api_;
  for (int w = 0; w < warmup; ++w) {
    if (auto r = restore(index, w == 0); !r) return r.error();
    if (auto r = launch(index, module); !r) return r.error();
  }
  if (auto r = check("cuStreamSynchronize (after the warm-up)", cu.cuStreamSynchronize(stream_)); !r) return r.error();
  Timing t;
  auto began = std::chrono::steady_clock::now();
  for (int s = 0; s < samples; ++s) {
    if (auto r = restore(index, warmup == 0 && s == 0); !r) return r.error();
    if (auto r = check("cuMemsetD8Async (L2 flush)", cu.cuMemsetD8Async(scratch_, (unsigned char)(s & 0xff), scratch_bytes_, stream_)); !r)
      return r.error();
    if (auto r = check("cuEventRecord", cu.cuEventRecord(start_, stream_)); !r) return r.error();
    if (auto r = launch(index, module); !r) return r.error();
    if (auto r = check("cuEventRecord", cu.cuEventRecord(stop_, stream_)); !r) return r.error();
    if (auto r = check("cuEventSynchronize (the launch)", cu.cuEventSynchronize(stop_)); !r) return r.error();
    float ms = 0;
    if (auto r = check("cuEventElapsedTime", cu.cuEventElapsedTime(&ms, start_, stop_)); !r) return r.error();
    t.samples_ms.push_back(double(ms));
    std::chrono::duration<double> spent = std::chrono::steady_clock::now() - began;
    if (spent.count() > max_seconds) break;
  }
  t.median_ms = median(t.samples_ms);
  return t;
}

} // namespace ciq::replay
