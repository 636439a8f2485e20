// The kernel trace: what libciq-inject (tuner/inject/) records inside a
// program's own run, and how the tuner reads it back.
//
// Format (JSON lines, one file per process, written once, atomically, at
// exit or on a fatal signal: `<dir>/kernels-<tag>.jsonl`, <tag> the
// process' "<pid>-<16 random hex digits>" (utils/safe_open.h,
// new_process_tag), so that processes of one pid in different PID
// namespaces never replace each other's; a name found taken becomes
// kernels-<tag>-<k>.jsonl. Earlier versions wrote kernels-<pid>.jsonl: the
// reader takes any kernels-*.jsonl):
//
//   line 1, the process:
//     {"ciq_kernel_trace": 1, "pid": N, "exe": "/proc/self/exe target",
//      "status": S, "reason": "...", "dropped_launches": N,
//      "dropped_records": N, "incomplete_records": N,
//      "module_identity": "ok" | "why not"}
//     S is "ok" (kernels were recorded) or why there is no timing:
//     "no-cupti" (libcupti not found or lacking a function), "cupti-version"
//     (a CUPTI whose records this build cannot read), "cupti-error" (a CUPTI
//     call failed; `reason` names it and CUPTI's message). dropped_launches:
//     launches whose duration was not kept (over the per-configuration or
//     whole-process cap; they still count in launches and total_ns, or, past
//     the cap on configurations, nowhere). dropped_records: what CUPTI
//     reported it lost (full buffers). incomplete_records: kernel records
//     without a valid start/end, ignored.
//   per module the driver loaded:
//     {"module": id, "image": "elf" | "other", "bytes": N, "xxh128": "hex",
//      "kernels": N}
//     "other" (PTX for the JIT, a fatbin) has no per-kernel code hashes.
//   per kernel and launch configuration (mangled name, device, grid, block,
//   dynamic shared memory):
//     {"kernel": "mangled", "demangled": "...", "device": d,
//      "grid": [x,y,z], "block": [x,y,z], "dynamic_smem": b,
//      "static_smem": b, "registers": r, "local_bytes": b, "launches": n,
//      "total_ns": t, "min_ns": t, "max_ns": t, "first_start_ns": t,
//      "last_end_ns": t, "durations_ns": [t, ...], "code_xxh128": "hex",
//      "module": id}
//     durations_ns: the first 65536 launches' durations in completion
//     order. code_xxh128: the hash of the kernel's `.text.<mangled>`
//     section (utils/elf.h) when the name is in exactly one loaded ELF
//     module, or in several with the same code; else "". module: that
//     module's id when exactly one, else -1.
//
// Durations and counts (launches, total_ns, min_ns, max_ns, durations_ns)
// are at most 2^53 (k_max_trace_count): a kernel line with a larger one is
// no measurement (a corrupt or crafted file), and is skipped and reported
// with its file and line. Sums over lines saturate at UINT64_MAX instead of
// wrapping, and shares are computed in floating point, so that no file can
// make a kernel's share exceed its part of the total.
//
// Readers ignore members they do not know; a later version adds members
// and keeps these, and changes "ciq_kernel_trace" only when a member
// changes meaning.
#pragma once

#include "utils/elf.h"  // kernel_code_hashes(): the same hash from a cubin file
#include "utils/result.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::formats {

/// The largest duration (ns) or launch count a kernel line may hold: 2^53,
/// 104 days of kernel time, and the last integer a double holds exactly.
inline constexpr std::uint64_t k_max_trace_count = std::uint64_t(1) << 53;

/// The first line of one process's file.
/// A process' status (and a capture index's) when kernels were recorded;
/// anything else says why there is no timing.
inline constexpr const char* k_status_ok = "ok";

struct TraceProcess {
  std::string file;  // the file it came from
  std::int64_t pid = 0;
  std::string exe;
  std::string status;  // "ok" or why there is no timing
  std::string reason;
  std::string module_identity;  // "ok" or why code hashes are missing
  std::uint64_t dropped_launches = 0;
  std::uint64_t dropped_records = 0;
  std::uint64_t incomplete_records = 0;
  bool timed() const { return status == k_status_ok; }
};

struct TraceModule {
  std::int64_t pid = 0;
  std::int64_t id = 0;
  std::string image;  // "elf" or "other"
  std::uint64_t bytes = 0;
  std::string xxh128;
  std::uint64_t kernels = 0;
};

/// What makes two launches of one kernel "the same configuration".
struct LaunchConfig {
  std::int64_t device = 0;
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  std::uint64_t dynamic_smem = 0;
  auto operator<=>(const LaunchConfig&) const = default;
};

/// One kernel line of one process.
struct KernelRecord {
  std::int64_t pid = 0;
  std::string kernel;  // mangled
  std::string demangled;
  LaunchConfig config;
  std::uint64_t static_smem = 0, registers = 0, local_bytes = 0;
  std::uint64_t launches = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  std::uint64_t first_start_ns = 0, last_end_ns = 0;
  std::vector<std::uint64_t> durations_ns;
  std::string code_xxh128;  // "" when unknown
  std::int64_t module = -1;
};

/// Timing figures over a set of launches. median_ns is over the recorded
/// durations only (the first 65536 per configuration and process); 0 when
/// none was recorded.
struct LaunchStats {
  std::uint64_t launches = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double median_ns = 0;
  std::uint64_t recorded = 0;  // durations kept (<= launches)
};

/// One launch configuration of a kernel, over every process of the run.
struct ConfigSummary {
  LaunchConfig config;
  std::uint64_t registers = 0, static_smem = 0, local_bytes = 0;
  LaunchStats stats;
  std::vector<std::uint64_t> durations_ns;  // every recorded one, by file then order
};

/// One kernel (mangled name) over every process and configuration.
struct KernelSummary {
  std::string kernel;
  std::string demangled;
  LaunchStats stats;
  double share = 0;  // of the run's kernel time (all kernels' total_ns)
  std::vector<std::uint64_t> durations_ns;
  std::vector<std::string> code_xxh128;  // distinct non-empty hashes seen (sorted)
  std::vector<ConfigSummary> configs;    // by total time, largest first
  std::uint64_t processes = 0;           // how many processes ran it
};

/// A line that could not be used, as "file:line: message".
struct TraceProblem {
  std::string where;  // "path:line"
  std::string message;
};

/// One run's trace: every process's file in one directory, merged.
struct KernelTrace {
  std::vector<TraceProcess> processes;  // by file name
  std::vector<TraceModule> modules;
  std::vector<KernelRecord> records;    // as read, file by file
  std::vector<KernelSummary> kernels;   // by total time, largest first
  std::vector<TraceProblem> problems;   // lines skipped; reading went on
  std::uint64_t total_ns = 0;           // all kernels' time (saturating at UINT64_MAX)

  /// True when at least one process recorded kernel timing.
  bool timed() const;
  /// Why there is no timing, for "no timing: <reason>": "" when timed();
  /// else every distinct status and reason, or that no process wrote a
  /// trace at all.
  std::string no_timing_reason() const;
};

/// Reads every `kernels-*.jsonl` in `dir` (one run, any number of
/// processes) and merges them. A directory without such files gives a
/// trace with no processes (the program never initialised CUDA, or the
/// library never reached it: see no_timing_reason()). Malformed lines and
/// a truncated last line are skipped and reported in `problems`; a file
/// whose first line is not a trace header is skipped whole. Fails ("io")
/// only when the directory or a file cannot be read.
Result<KernelTrace> read_kernel_trace(const std::string& dir);

/// Adds one file's `text` (named `file` in problems) to `trace`; call
/// summarise_kernels() after the last one. For tests and for tools that
/// hold the text already.
void add_kernel_trace_text(KernelTrace& trace, std::string_view text, const std::string& file);

/// Recomputes `kernels` and `total_ns` from `records`.
void summarise_kernels(KernelTrace& trace);

/// Median of `values` (the mean of the two middle ones for an even count);
/// 0 for none.
double median_of(std::vector<std::uint64_t> values);

} // namespace ciq::formats
