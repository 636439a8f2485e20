// CUPTI, loaded at run time. libciq-inject is not linked to libcupti: a
// missing or mismatched CUPTI must never make the program's cuInit fail
// (which a failed dependency of a library the driver loads would); it
// becomes the trace's status instead.
#pragma once

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>

#include <string>

namespace ciq::inject {

/// The CUPTI functions the injection library calls, resolved with dlsym.
struct Cupti {
  std::string path;  // which file, as dlopen was given it
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) activity_register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityFlushAll) activity_flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) activity_get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) activity_get_num_dropped_records = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;

  /// "cuptiX failed: CUPTI_ERROR_..." for a failed call's `result`.
  std::string describe(const char* call, CUptiResult result) const;
};

/// Loads libcupti and resolves every function of Cupti. Where a
/// libcupti.so.13 is already in the process (PyTorch loads the one of its
/// nvidia-cuda-cupti wheel), that copy: two CUPTIs in one process would
/// fight over the driver's one tool slot. Else, in order:
/// $CIQ_CUPTI_LIBRARY, and unless CIQ_CUPTI_NO_FALLBACK=1 (for tests, or to
/// insist on one copy) libcupti.so.13 through the loader's search,
/// $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64.
/// False with `reason` (every path tried and why it failed) when none loads
/// or one lacks a function.
bool load_cupti(Cupti& cupti, std::string& reason);

} // namespace ciq::inject
