#include "tuner/inject/capture.h"

#include "tuner/inject/capture_parts.h"
#include "tuner/formats/capture_lines.h"

#include "utils/elf.h"
#include "utils/env_table.h"
#include "utils/safe_open.h"
#include "utils/write_all.h"

#include <cupti.h>  // with the launch calls' parameter structures (generated_cuda_meta.h)

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::inject {

namespace {


/// Set while this thread is inside capture: our own driver calls, and
/// anything they trigger, are not the program's launches.
thread_local bool inside_capture = false;

/// Between a cuModuleLoad*'s enter and exit on this thread: the code of
/// the wanted kernels in the image CUPTI reported loaded meanwhile.
thread_local bool loading_module = false;
thread_local std::map<std::string, std::string, std::less<>>* loading_codes = nullptr;

bool is_module_load(CUpti_CallbackId id) {
  return id == CUPTI_DRIVER_TRACE_CBID_cuModuleLoad || id == CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData ||
         id == CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx || id == CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary;
}


} // namespace

const std::vector<CUpti_CallbackId>& launch_callback_ids() {
  static const std::vector<CUpti_CallbackId> ids = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuModuleLoad,             CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
      CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,       CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary};
  return ids;
}

LaunchCapture::LaunchCapture(std::string dir, std::int64_t pid, std::string tag, std::string exe, Logger say)
    : dir_(std::move(dir)), pid_(pid), tag_(std::move(tag)), exe_(std::move(exe)), say_(std::move(say)),
      table_(std::make_unique<CaptureTable>(CaptureSettings())) {}

bool LaunchCapture::start() {
  CaptureSettings settings;
  std::string why;
  if (!parse_capture_settings(std::getenv(env_name(Env::capture_kernels)), std::getenv(env_name(Env::capture_max_bytes)),
                              std::getenv(env_name(Env::capture_configs)), settings, why)) {
    fail("bad-setting", why);
    return false;
  }
  table_ = std::make_unique<CaptureTable>(std::move(settings));
  if (!load_cuda_driver(driver_, why)) {
    fail("no-driver", why);
    return false;
  }
  capturing_ = true;
  return true;
}

void LaunchCapture::fail(const std::string& status, const std::string& reason) {
  status_ = status;
  reason_ = reason;
  capturing_ = false;
}

void LaunchCapture::on_driver_api(CUpti_CallbackId id, const CUpti_CallbackData& data) {
  if (!capturing_ || inside_capture || finished_.load() || ::getpid() != pid_) return;
  inside_capture = true;
  try {
    if (is_module_load(id)) on_module_load(data);
    else if (data.callbackSite == CUPTI_API_ENTER) on_enter(id, data);
    else if (data.callbackSite == CUPTI_API_EXIT) on_exit(data);
  } catch (...) {
    // Out of memory: this launch goes uncaptured; the program goes on.
  }
  inside_capture = false;
}

void LaunchCapture::on_module_load(const CUpti_CallbackData& data) {
  // Every cuModuleLoad* variant's parameters begin with `CUmodule* module`.
  struct Params {
    CUmodule* module;
  };
  if (data.callbackSite == CUPTI_API_ENTER) {
    delete loading_codes;
    loading_codes = new std::map<std::string, std::string, std::less<>>();
    loading_module = true;
    return;
  }
  loading_module = false;
  std::unique_ptr<std::map<std::string, std::string, std::less<>>> codes(loading_codes);
  loading_codes = nullptr;
  const auto* returned = static_cast<const CUresult*>(data.functionReturnValue);
  const auto* params = static_cast<const Params*>(data.functionParams);
  if (!codes || (returned && *returned != CUDA_SUCCESS) || !params || !params->module || !*params->module) return;
  std::lock_guard<std::timed_mutex> hold(lock_);
  // A handle the driver reuses after cuModuleUnload names the new module.
  module_codes_[*params->module] = std::move(*codes);
}

void LaunchCapture::on_module_loaded(std::string_view image) {
  if (!capturing_ || !loading_module || !loading_codes || finished_.load()) return;
  try {
    for (auto& [name, code] : kernel_code_hashes(image)) {
      bool wanted = false;
      {
        std::lock_guard<std::timed_mutex> hold(lock_);
        wanted = table_->wanted(name);
      }
      if (wanted) (*loading_codes)[name] = hash_hex(code);
    }
  } catch (...) {
    // Out of memory: the module's code goes unnamed.
  }
}

std::string LaunchCapture::code_of(const Launch& launch, bool as_kernel) {
  if (as_kernel || !driver_.func_get_module) return "";
  CUmodule module = nullptr;
  if (driver_.func_get_module(&module, launch.function) != CUDA_SUCCESS || !module) return "";
  std::lock_guard<std::timed_mutex> hold(lock_);
  auto m = module_codes_.find(module);
  if (m == module_codes_.end()) return "";
  auto k = m->second.find(launch.kernel);
  return k == m->second.end() ? "" : k->second;
}

bool LaunchCapture::read_launch(CUpti_CallbackId id, const void* params, Launch& launch) {
  auto classic = [&](const cuLaunchKernel_params& p, const char* api, bool ptsz) {
    launch.api = api;
    launch.config = {{p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes};
    launch.function = p.f;
    launch.stream = p.hStream;
    launch.per_thread_stream = ptsz;
    launch.kernel_params = p.kernelParams;
    launch.extra = p.extra;
  };
  auto extended = [&](const cuLaunchKernelEx_params& p, const char* api, bool ptsz) {
    launch.api = api;
    launch.function = p.f;
    launch.per_thread_stream = ptsz;
    launch.kernel_params = p.kernelParams;
    launch.extra = p.extra;
    if (!p.config) {
      launch.refusal = "cuLaunchKernelEx without a launch configuration";
      return;
    }
    const CUlaunchConfig& c = *p.config;
    launch.config = {{c.gridDimX, c.gridDimY, c.gridDimZ}, {c.blockDimX, c.blockDimY, c.blockDimZ}, c.sharedMemBytes};
    launch.stream = c.hStream;
    for (unsigned i = 0; c.attrs && i < c.numAttrs; ++i) {
      const CUlaunchAttribute& a = c.attrs[i];
      if (a.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a.value.cooperative)
        launch.refusal = "a cooperative launch (grid-wide synchronisation): replay cannot reproduce it";
      else if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
               a.value.clusterDim.x * a.value.clusterDim.y * a.value.clusterDim.z > 1)
        launch.refusal = "a launch with thread-block clusters: the capture format does not record them";
    }
  };
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    classic(*static_cast<const cuLaunchKernel_params*>(params), "cuLaunchKernel", false);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    // The same members in the same order as cuLaunchKernel_params.
    classic(*static_cast<const cuLaunchKernel_params*>(params), "cuLaunchKernel_ptsz", true);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    extended(*static_cast<const cuLaunchKernelEx_params*>(params), "cuLaunchKernelEx", false);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    extended(*static_cast<const cuLaunchKernelEx_params*>(params), "cuLaunchKernelEx_ptsz", true);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
    const auto& p = *static_cast<const cuLaunchCooperativeKernel_params*>(params);
    launch.config = {{p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes};
    launch.refusal = "a cooperative launch (cuLaunchCooperativeKernel, grid-wide synchronisation): replay cannot reproduce it";
    break;
  }
  default:
    return false;
  }
  return true;
}

void LaunchCapture::on_enter(CUpti_CallbackId id, const CUpti_CallbackData& data) {
  if (id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) {
    std::lock_guard<std::timed_mutex> hold(lock_);
    table_->count_graph_launch();
    return;
  }
  if (!data.symbolName || !data.functionParams || !table_->wanted(data.symbolName)) return;
  Launch launch;
  launch.kernel = data.symbolName;
  if (!read_launch(id, data.functionParams, launch)) return;
  if (!launch.refusal.empty()) {
    std::lock_guard<std::timed_mutex> hold(lock_);
    table_->count_refused(launch.kernel, launch.config, launch.refusal);
    return;
  }
  {
    std::lock_guard<std::timed_mutex> hold(lock_);
    if (table_->count_launch(launch.kernel, launch.config) != CaptureTable::Offer::capture) return;
    // Until captured() or refused(): what the index says if the process ends first.
    table_->refused(launch.kernel, launch.config, "the process ended before the captured launch completed");
  }
  std::string why;
  std::unique_ptr<InFlight> flight = prepare(launch, why);
  std::lock_guard<std::timed_mutex> hold(lock_);
  if (!flight) {
    table_->refused(launch.kernel, launch.config, why);
    say_("not capturing " + std::string(launch.kernel) + ": " + why);
    return;
  }
  if (!data.correlationData) {
    remove_capture(*flight);
    table_->refused(launch.kernel, launch.config, "CUPTI gave no correlation data to carry the capture to the launch's end");
    return;
  }
  std::uint64_t token = next_token_++;
  *data.correlationData = token;
  in_flight_[token] = std::move(flight);
}

void LaunchCapture::on_exit(const CUpti_CallbackData& data) {
  std::unique_ptr<InFlight> flight;
  {
    std::lock_guard<std::timed_mutex> hold(lock_);
    if (!data.correlationData) return;
    auto it = in_flight_.find(*data.correlationData);
    if (it == in_flight_.end() || !data.symbolName || it->second->record.kernel != data.symbolName) return;
    flight = std::move(it->second);
    in_flight_.erase(it);
  }
  LaunchRecord& r = flight->record;
  std::string why;
  const auto* returned = static_cast<const CUresult*>(data.functionReturnValue);
  if (returned && *returned != CUDA_SUCCESS) {
    why = "the launch itself failed (CUresult " + std::to_string(int(*returned)) + ")";
  } else if (CUresult res = driver_.ctx_synchronize(); res != CUDA_SUCCESS) {
    why = cuda_error("cuCtxSynchronize after the launch", res);
  } else {
    std::vector<std::uint8_t> chunk;
    for (std::size_t i = 0; why.empty() && i < r.memory.allocations.size(); ++i) {
      const FoundAllocation& a = r.memory.allocations[i];
      chunk.resize(std::min<std::uint64_t>(a.size, chunk_bytes));
      StreamDigest digest;
      for (std::uint64_t done = 0; done < a.size;) {
        std::size_t n = std::size_t(std::min<std::uint64_t>(a.size - done, chunk.size()));
        if (CUresult res = driver_.memcpy_dtoh(chunk.data(), CUdeviceptr(a.base + done), n); res != CUDA_SUCCESS) {
          why = cuda_error("cuMemcpyDtoH", res) + " reading allocation " + std::to_string(i) + " after the launch";
          break;
        }
        digest.add(chunk.data(), n);
        done += n;
      }
      r.after_xxh128.push_back(digest.hex());
    }
  }
  if (why.empty()) why = write_atomically(flight->path, formats::k_launch_file, render_launch(r), Replace::own_file);
  std::lock_guard<std::timed_mutex> hold(lock_);
  LaunchConfig config = r.config;
  if (!why.empty()) {
    remove_capture(*flight);
    table_->refused(r.kernel, config, why);
    say_("not capturing " + r.kernel + ": " + why);
    return;
  }
  flight->files_made.push_back(flight->path + "/launch.json");
  table_->captured(r.kernel, config, flight->name);
  written_.push_back({flight->path, std::move(r)});
  say_("captured " + written_.back().record.kernel + " in " + flight->path);
}

std::string LaunchCapture::write_atomically(const std::string& dir, const std::string& name, const std::string& text,
                                            Replace replace, std::string* written) {
  auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  std::string temporary = dir + "/." + name + "." + tag_ + "-" + std::to_string(stamp);
  std::string path = dir + "/" + name;
  auto fd = create_new_file(temporary, O_WRONLY);
  if (!fd) return "cannot write " + path + ": " + fd.error().message;
  bool ok = write_all(*fd, text);
  ok = ::close(*fd) == 0 && ok;
  if (!ok) {
    std::string why = "cannot write " + path + ": " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return why;
  }
  if (replace == Replace::own_file) {  // launch.json in this process' own capture directory
    if (::rename(temporary.c_str(), path.c_str()) == 0) {
      if (written) *written = path;
      return "";
    }
    std::string why = "cannot write " + path + ": " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return why;
  }
  // A name in the shared directory: "<stem>-<k><extension>" when it is taken.
  std::size_t dot = name.rfind('.');
  std::string stem = name.substr(0, dot), extension = dot == std::string::npos ? "" : name.substr(dot);
  for (std::uint32_t taken = 0;; ++taken) {
    if (taken) path = dir + "/" + stem + "-" + std::to_string(taken) + extension;
    auto renamed = rename_new(temporary, path);
    if (renamed) {
      if (written) *written = path;
      return "";
    }
    if (renamed.error().code != ciq::errc::exists || taken >= max_name_tries) {
      ::unlink(temporary.c_str());
      return "cannot write " + path + ": " + renamed.error().message;
    }
  }
}

void LaunchCapture::remove_capture(const InFlight& flight) {
  for (const std::string& file : flight.files_made) ::unlink(file.c_str());
  if (!flight.path.empty()) ::rmdir(flight.path.c_str());
}

void LaunchCapture::finish() {
  if (finished_.exchange(true) || ::getpid() != pid_) return;
  std::string text;
  if (lock_.try_lock_for(std::chrono::seconds(2))) {
    std::lock_guard<std::timed_mutex> hold(lock_, std::adopt_lock);
    for (Written& w : written_) {
      const CaptureTable::Entry* e = table_->entry(w.record.kernel, w.record.config);
      if (!e || e->launches == w.record.config_launches) continue;
      w.record.config_launches = e->launches;
      if (std::string why = write_atomically(w.dir, formats::k_launch_file, render_launch(w.record), Replace::own_file); !why.empty())
        say_(why);
    }
    text = table_->render_index(pid_, exe_, status_, reason_);
  } else {
    text = CaptureTable(CaptureSettings()).render_index(
        pid_, exe_, "interrupted", "a signal arrived while a launch was being captured; the index of this process is lost");
  }
  std::string name = "index-" + tag_ + ".jsonl", path = dir_ + "/" + name;
  if (auto made = make_own_directory(dir_); !made) {
    say_("not writing " + path + ": " + made.error().message);
    return;
  }
  if (std::string why = write_atomically(dir_, name, text, Replace::never, &path); !why.empty()) say_(why);
  else say_("wrote " + path);
}

} // namespace ciq::inject
