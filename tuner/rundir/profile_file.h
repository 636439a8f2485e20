// profile.json: a program's profile (`ciq-tuner profile --json`, and
// <campaign>/profile.json that a campaign --from-profile writes and reads
// again on --resume), format ciq-profile/1. The file's one owner, below its
// writer (run/profiling.cpp, from a kernel trace) and its reader (the
// campaign's shares): the members, their order and their number format
// are fixed here. A profile written before the format member existed (no
// "format") is read as ciq-profile/1; any other format is refused.
#pragma once

#include "utils/result.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ciq::tuner {

inline constexpr const char* k_profile_format = "ciq-profile/1";
/// The file's name in a campaign's (or a profile's) directory.
inline constexpr const char* k_profile_file = "profile.json";

struct ProfileProcess {
  std::int64_t pid = 0;
  std::string exe, status, reason;  // status: "ok" or why it has no timing
};

/// A compile the kernel's code came from.
struct ProfileOrigin {
  std::string key, input, target;
};

/// One kernel, largest total time first.
struct ProfileKernel {
  std::string kernel, demangled;
  double share = NAN, cumulative = NAN;  // of the program's GPU time
  std::uint64_t launches = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double median_ns = NAN;
  std::optional<std::uint64_t> registers;  // of its largest launch configuration
  std::uint64_t configs = 0, processes = 0;
  std::vector<ProfileOrigin> origins;
  std::vector<std::string> code_xxh128;
};

struct ProfileFile {
  std::uint64_t total_ns = 0;
  std::vector<ProfileProcess> processes;
  std::vector<ProfileKernel> kernels;
};

/// The profile as one line of JSON (no newline at the end).
std::string profile_json(const ProfileFile& profile);

/// The profile at `path`. Fails, naming the file, when it cannot be read,
/// is not JSON, is of another format, or a kernel has no name.
Result<ProfileFile> read_profile_file(const std::string& path);

} // namespace ciq::tuner
