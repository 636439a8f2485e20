#include "tuner/inject/cupti_loader.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

namespace ciq::inject {

namespace {

constexpr const char* soname = "libcupti.so.13";

template <typename F> bool resolve(void* handle, const char* symbol, F& out, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!out) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  return out != nullptr;
}

bool resolve_all(void* handle, Cupti& c, std::string& missing) {
  bool ok = true;
  ok &= resolve(handle, "cuptiGetVersion", c.get_version, missing);
  ok &= resolve(handle, "cuptiGetResultString", c.get_result_string, missing);
  ok &= resolve(handle, "cuptiActivityRegisterCallbacks", c.activity_register_callbacks, missing);
  ok &= resolve(handle, "cuptiActivityEnable", c.activity_enable, missing);
  ok &= resolve(handle, "cuptiActivityFlushAll", c.activity_flush_all, missing);
  ok &= resolve(handle, "cuptiActivityGetNextRecord", c.activity_get_next_record, missing);
  ok &= resolve(handle, "cuptiActivityGetNumDroppedRecords", c.activity_get_num_dropped_records, missing);
  ok &= resolve(handle, "cuptiSubscribe", c.subscribe, missing);
  ok &= resolve(handle, "cuptiEnableCallback", c.enable_callback, missing);
  return ok;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

} // namespace

std::string Cupti::describe(const char* call, CUptiResult result) const {
  const char* text = nullptr;
  if (get_result_string && get_result_string(result, &text) == CUPTI_SUCCESS && text)
    return std::string(call) + " failed: " + text;
  return std::string(call) + " failed: CUPTI error " + std::to_string(int(result));
}

bool load_cupti(Cupti& cupti, std::string& reason) {
  std::vector<std::string> candidates;
  if (dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
    candidates.push_back(soname);  // already in the process: that copy only
  } else {
    if (std::string override = env("CIQ_CUPTI_LIBRARY"); !override.empty()) candidates.push_back(override);
    if (env("CIQ_CUPTI_NO_FALLBACK") != "1") {
      candidates.push_back(soname);
      if (std::string home = env("CUDA_HOME"); !home.empty()) candidates.push_back(home + "/lib64/" + soname);
      candidates.push_back(std::string("/usr/local/cuda/lib64/") + soname);
      candidates.push_back(std::string("/usr/local/cuda/extras/CUPTI/lib64/") + soname);
    }
  }
  reason.clear();
  for (const std::string& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      reason += (reason.empty() ? "" : "; ") + std::string(why ? why : path + ": cannot be loaded");
      continue;
    }
    std::string missing;
    if (!resolve_all(handle, cupti, missing)) {
      reason += (reason.empty() ? "" : "; ") + path + " lacks " + missing;
      dlclose(handle);
      continue;
    }
    cupti.path = path;
    return true;
  }
  if (candidates.empty() || reason.empty()) reason = "no libcupti to try (CIQ_CUPTI_NO_FALLBACK=1 and no CIQ_CUPTI_LIBRARY)";
  return false;
}

} // namespace ciq::inject
