#include "tuner/inject/cupti_loader.h"

#include "utils/dl.h"
#include "utils/env_table.h"

#include <vector>

namespace ciq::inject {

namespace {

constexpr const char* soname = "libcupti.so.13";

// Every function of Cupti, all required.
std::vector<dl::Symbol> cupti_table(Cupti& c) {
  return {
      dl::need(c.get_version, "cuptiGetVersion"),
      dl::need(c.get_result_string, "cuptiGetResultString"),
      dl::need(c.activity_register_callbacks, "cuptiActivityRegisterCallbacks"),
      dl::need(c.activity_enable, "cuptiActivityEnable"),
      dl::need(c.activity_flush_all, "cuptiActivityFlushAll"),
      dl::need(c.activity_get_next_record, "cuptiActivityGetNextRecord"),
      dl::need(c.activity_get_num_dropped_records, "cuptiActivityGetNumDroppedRecords"),
      dl::need(c.subscribe, "cuptiSubscribe"),
      dl::need(c.enable_callback, "cuptiEnableCallback"),
  };
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
  if (dl::already_loaded(soname)) {
    candidates.push_back(soname);  // already in the process: that copy only
  } else {
    if (std::string override = env(Env::cupti_library); !override.empty()) candidates.push_back(override);
    if (env(Env::cupti_no_fallback) != "1") {
      candidates.push_back(soname);
      if (std::string home = env_or_empty("CUDA_HOME"); !home.empty()) candidates.push_back(home + "/lib64/" + soname);
      candidates.push_back(std::string("/usr/local/cuda/lib64/") + soname);
      candidates.push_back(std::string("/usr/local/cuda/extras/CUPTI/lib64/") + soname);
    }
  }
  dl::Library lib = dl::load(candidates, cupti_table(cupti));
  if (lib.handle) {
    cupti.path = lib.path;
    return true;
  }
  reason = lib.error;
  if (candidates.empty() || reason.empty()) reason = std::string("no libcupti to try (") + env_name(Env::cupti_no_fallback) + "=1 and no " + env_name(Env::cupti_library) + ")";
  return false;
}

} // namespace ciq::inject
