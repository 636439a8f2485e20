// The parts of LaunchCapture (capture.h) its two sources share: a launch as
// the driver API's callback describes it, a capture between a launch's
// enter and exit, and the bounds both keep. Private to tuner/inject.
#pragma once

#include "tuner/inject/capture.h"

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::inject {

inline constexpr std::size_t chunk_bytes = std::size_t(64) << 20;  // host memory a copy holds at once
inline constexpr std::size_t max_params = 32768;                    // the parameter space is 32 KiB
inline constexpr std::uint32_t max_name_tries = 1000;               // <tag>-<n>, index-<tag>-<k> taken already

/// "CALL failed (CUresult N)", for a refusal or a status.
inline std::string cuda_error(const char* call, CUresult result) {
  return std::string(call) + " failed (CUresult " + std::to_string(int(result)) + ")";
}

/// One launch as the callback's parameters describe it.
struct LaunchCapture::Launch {
  std::string_view kernel;
  const char* api = "";
  LaunchConfig config;
  CUfunction function = nullptr;
  CUstream stream = nullptr;
  bool per_thread_stream = false;
  void** kernel_params = nullptr;
  void** extra = nullptr;
  std::string refusal;  // cooperative, clusters: not capturable whatever happens
};

/// A capture between API enter and exit.
struct LaunchCapture::InFlight {
  std::string name;  // <tag>-<n>
  std::string path;  // <dir>/<tag>-<n>
  LaunchRecord record;
  std::vector<std::string> files_made;
};

} // namespace ciq::inject
