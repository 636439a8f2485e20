// The parts of kernel capture (CIQ_CAPTURE) that need neither CUDA nor
// CUPTI, so that the unit tests drive them: the parameter buffer assembled
// from a launch's arguments, the device allocations its pointer parameters
// point into, the policy (which kernels, which launch configurations, the
// caps) and the text of launch.json and index-<tag>.jsonl. The format is
// tuner/formats/capture.h's; tuner/inject/capture.cpp does the driver calls
// and the files. Not thread-safe: capture.cpp holds one lock around the table.
#pragma once

#include "tuner/formats/capture.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::inject {

/// One kernel parameter as cuFuncGetParamInfo gives it: launch.json's
/// parameter (tuner/formats/capture.h).
using ParamSlot = formats::CaptureParam;

/// The parameter buffer of a launch from cuLaunchKernel's `kernelParams`
/// (one pointer to each argument's value, in order): every value copied to
/// its offset; length = the end of the last parameter. std::nullopt when
/// `kernel_params` is null while the kernel has parameters, or one of its
/// entries is null.
std::optional<std::vector<std::uint8_t>> params_from_pointers(const std::vector<ParamSlot>& layout,
                                                              void* const* kernel_params);

/// The parameter buffer from cuLaunchKernel's `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER
/// and CU_LAUNCH_PARAM_BUFFER_SIZE, up to CU_LAUNCH_PARAM_END), cut to the
/// layout's end. Sets `why` and returns std::nullopt when either is missing
/// or the buffer is shorter than the layout.
std::optional<std::vector<std::uint8_t>> params_from_extra(const std::vector<ParamSlot>& layout, void* const* extra,
                                                           std::string& why);

/// What the driver says of a value that may be a device address.
struct AllocationFound {
  std::uint64_t base = 0, size = 0;
  /// Why the launch cannot be captured with this allocation ("managed
  /// memory", "host memory"); empty when it can.
  std::string refusal;
};
/// cuMemGetAddressRange and cuPointerGetAttribute behind one call:
/// std::nullopt when `value` lies in no allocation (a scalar).
using FindAllocation = std::function<std::optional<AllocationFound>(std::uint64_t value)>;

/// A pointer parameter: launch.json's (tuner/formats/capture.h).
using FoundPointer = formats::CapturePointer;
struct FoundAllocation {
  std::uint64_t base = 0, size = 0;
};
/// The memory a launch can touch: every 8-byte parameter whose value lies in
/// an allocation, each allocation once (in order of first use).
struct LaunchMemory {
  std::vector<FoundPointer> pointers;
  std::vector<FoundAllocation> allocations;
  std::uint64_t bytes = 0;  // the allocations' total size
  std::string refusal;      // why not capturable; empty when it is
};
/// Looks at each parameter of `params` (laid out by `layout`): an 8-byte one
/// whose value `find` places in an allocation is a pointer; a larger one
/// (a structure, a tensor map) holding an aligned 8-byte word that does is
/// refused, as is an allocation `find` refuses. Stops at the first refusal.
LaunchMemory find_launch_memory(const std::vector<ParamSlot>& layout, const std::vector<std::uint8_t>& params,
                                const FindAllocation& find);

/// A launch configuration as the index counts it.
struct LaunchConfig {
  std::array<std::uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  std::uint32_t dynamic_smem = 0;
  auto operator<=>(const LaunchConfig&) const = default;
};

/// One launch being captured: launch.json's own record (formats::Capture:
/// the kernel, process, device, launch API, code and parameters), with
/// what the capture works from until it writes the file: the launch
/// configuration as the index counts it (written as grid, block and
/// dynamic_smem), the memory found (written as pointers and allocations,
/// whose files are mem-<i>.bin in order) and the allocations' digests (hex,
/// one per allocation). The base's grid, block, dynamic_smem, pointers and
/// allocations are filled from these by render_launch() only.
struct LaunchRecord : formats::Capture {
  LaunchConfig config;
  LaunchMemory memory;
  std::vector<std::string> before_xxh128, after_xxh128;
};
/// launch.json's text (format 1), newline-terminated.
std::string render_launch(const LaunchRecord& record);
/// The name of allocation i's file in a capture's directory.
std::string memory_file_name(std::size_t i);

/// Streaming XXH3-128, hex as utils/hash.h's to_hex(xxh128(bytes)) spells it:
/// a copy in chunks digests to the same as the whole.
class StreamDigest {
public:
  StreamDigest();
  ~StreamDigest();
  StreamDigest(const StreamDigest&) = delete;
  StreamDigest& operator=(const StreamDigest&) = delete;
  void add(const void* data, std::size_t size);
  std::string hex() const;

private:
  void* state_;
};

/// The settings of CIQ_CAPTURE_* (capture.cpp reads the environment).
struct CaptureSettings {
  std::set<std::string, std::less<>> kernels;  // mangled names to capture
  std::uint64_t max_bytes = std::uint64_t(4) << 30;
  std::uint32_t max_configs = 4;
};
/// Parses CIQ_CAPTURE_KERNELS, CIQ_CAPTURE_MAX_BYTES and CIQ_CAPTURE_CONFIGS
/// (null = unset). False with `why` (naming the variable and what it wants)
/// when one is malformed or CIQ_CAPTURE_KERNELS is unset. Sizes are bytes,
/// or a number with K, M, G or T (powers of 1024).
bool parse_capture_settings(const char* kernels, const char* max_bytes, const char* configs, CaptureSettings& out,
                            std::string& why);

/// The process's capture policy and what the index will say. Every launch
/// of a kernel asked for is counted by configuration; the first launch of a
/// configuration is offered for capture while fewer than max_configs of the
/// kernel's configurations are captured.
class CaptureTable {
public:
  static constexpr std::size_t max_entries = 65536;  // configurations remembered in all

  explicit CaptureTable(CaptureSettings settings) : settings_(std::move(settings)) {}
  const CaptureSettings& settings() const { return settings_; }

  bool wanted(std::string_view kernel) const { return settings_.kernels.count(kernel) != 0; }

  enum class Offer { counted, capture, refused };
  /// Counts a launch of `kernel` (asked for) with `config`. `capture`: the
  /// caller should try it now and later call captured() or refused();
  /// `refused`: the first launch of a configuration past the cap (already
  /// recorded as such); `counted`: nothing else to do.
  Offer count_launch(std::string_view kernel, const LaunchConfig& config);
  /// A launch of `kernel` that cannot be captured whatever its
  /// configuration (a cooperative launch): counted, and refused with `why`
  /// on its configuration's first launch.
  void count_refused(std::string_view kernel, const LaunchConfig& config, const std::string& why);
  void captured(std::string_view kernel, const LaunchConfig& config, const std::string& name);
  void refused(std::string_view kernel, const LaunchConfig& config, const std::string& why);
  void count_graph_launch() { ++graph_launches_; }

  struct Entry {
    std::uint64_t launches = 0;
    std::string captured, refused;
    bool decided = false;
  };
  /// The entry of a configuration; null when never counted.
  const Entry* entry(std::string_view kernel, const LaunchConfig& config) const;
  /// Every captured launch: (kernel, config, "<tag>-<n>"), in order of capture.
  struct Captured {
    std::string kernel;
    LaunchConfig config;
    std::string name;
  };
  const std::vector<Captured>& captures() const { return captures_; }

  /// index-<tag>.jsonl's text: the first line with `status` and `reason`,
  /// then one line per kernel and configuration, sorted.
  std::string render_index(std::int64_t pid, const std::string& exe, const std::string& status,
                           const std::string& reason) const;

private:
  Entry* find_or_add(std::string_view kernel, const LaunchConfig& config);

  CaptureSettings settings_;
  std::map<std::string, std::map<LaunchConfig, Entry>, std::less<>> entries_;
  std::map<std::string, std::uint32_t, std::less<>> captured_per_kernel_;
  std::vector<Captured> captures_;
  std::size_t count_ = 0;
  std::uint64_t untracked_launches_ = 0, graph_launches_ = 0;
};

} // namespace ciq::inject
