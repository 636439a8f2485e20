// The injection library's memory of one process: kernel launches grouped by
// launch configuration, and the modules the driver loaded; rendered once,
// at the end, as the trace format of tuner/formats/kernel_trace.h.
//
// Bounded, whatever the program does: per configuration the first
// max_durations_per_config durations are kept (in completion order), at
// most max_durations_total in the process and max_configs configurations;
// what does not fit is counted (dropped_launches), never stored. Knows
// nothing of CUPTI, so the unit tests drive it directly. Not thread-safe:
// the caller holds one lock around every call.
#pragma once

#include "utils/hash.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::inject {

/// One completed kernel execution, as the activity API reported it.
struct KernelLaunch {
  std::string_view name;  // mangled; only valid during add_launch()
  std::uint32_t device = 0;
  std::array<std::int32_t, 3> grid{}, block{};
  std::int32_t dynamic_smem = 0, static_smem = 0;
  std::uint32_t registers = 0, local_bytes = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
};

/// The first line's facts that the table does not own.
struct ProcessFacts {
  std::int64_t pid = 0;
  std::string exe;
  std::string status;  // "ok", "no-cupti", "cupti-version", "cupti-error"
  std::string reason;
  std::string module_identity = "ok";
};

class KernelTable {
public:
  static constexpr std::size_t max_durations_per_config = 65536;
  static constexpr std::size_t max_durations_total = std::size_t(1) << 22;  // 32 MiB
  static constexpr std::size_t max_configs = 65536;

  /// Counts `launch`; a record whose end is not after its start is counted
  /// as incomplete and otherwise ignored.
  void add_launch(const KernelLaunch& launch);
  void add_dropped_records(std::uint64_t count) { dropped_records_ += count; }
  /// Notes a module the driver loaded: its identity, and when `image` is
  /// an ELF cubin the code hash of each of its functions.
  void add_module(std::uint32_t id, std::string_view image);

  /// The whole trace file's text (JSON lines, newline-terminated).
  std::string render(const ProcessFacts& facts) const;
  /// Forgets the launches counted so far (a resident program's trace is
  /// cut per request: inject.cpp); the modules stay known.
  void clear_launches();

private:
  struct Config {
    std::uint32_t device;
    std::array<std::int32_t, 3> grid, block;
    std::int32_t dynamic_smem;
    auto operator<=>(const Config&) const = default;
  };
  struct Group {
    std::int32_t static_smem = 0;
    std::uint32_t registers = 0, local_bytes = 0;
    std::uint64_t launches = 0, total_ns = 0, min_ns = UINT64_MAX, max_ns = 0;
    std::uint64_t first_start_ns = UINT64_MAX, last_end_ns = 0;
    std::vector<std::uint64_t> durations_ns;
  };
  struct Module {
    std::uint32_t id;
    bool elf;
    std::uint64_t bytes;
    Hash128 xxh128;
    std::size_t kernels;
  };
  struct CodeSeen {
    std::uint32_t module;
    Hash128 code;
  };

  std::map<std::string, std::map<Config, Group>, std::less<>> groups_;
  std::size_t configs_ = 0;
  std::size_t durations_ = 0;
  std::uint64_t dropped_launches_ = 0, dropped_records_ = 0, incomplete_ = 0;
  std::vector<Module> modules_;
  std::map<std::string, std::vector<CodeSeen>, std::less<>> code_by_name_;
};

/// The readable form of a mangled C++ name; `mangled` itself when it is
/// not one (C names, Triton's).
std::string demangle(const std::string& mangled);

} // namespace ciq::inject
