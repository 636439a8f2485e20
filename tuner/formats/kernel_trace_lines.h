// The kernel trace's lines as text: the one writer of the format that
// kernel_trace.h describes and kernel_trace.cpp reads, from the same types
// (TraceProcess, TraceModule, KernelRecord). Header-only (nlohmann/json,
// no ciq library): libciq-inject, which may link no ciq library but utils'
// ELF part, writes its traces with it (tuner/inject/kernel_table.cpp), and
// the tests write theirs.
#pragma once

#include "tuner/formats/kernel_trace.h"

#include <nlohmann/json.hpp>
#include <string>

namespace ciq::formats {

/// The first line's member naming the format, and the version written (a
/// reader refuses another: kernel_trace.h says when it changes).
inline constexpr const char* k_kernel_trace_member = "ciq_kernel_trace";
inline constexpr std::uint64_t k_kernel_trace_version = 1;

namespace detail {
/// One line: members in the documented order, invalid UTF-8 (an exe path, a
/// kernel's name) replaced rather than thrown on.
inline std::string trace_line(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}
} // namespace detail

/// The process's line, the file's first (`file` is the reader's; not written).
inline std::string kernel_trace_line(const TraceProcess& p) {
  return detail::trace_line({{k_kernel_trace_member, k_kernel_trace_version},
                             {"pid", p.pid},
                             {"exe", p.exe},
                             {"status", p.status},
                             {"reason", p.reason},
                             {"dropped_launches", p.dropped_launches},
                             {"dropped_records", p.dropped_records},
                             {"incomplete_records", p.incomplete_records},
                             {"module_identity", p.module_identity}});
}

/// A module's line (`pid` is the reader's; not written).
inline std::string kernel_trace_line(const TraceModule& m) {
  return detail::trace_line({{"module", m.id}, {"image", m.image}, {"bytes", m.bytes}, {"xxh128", m.xxh128}, {"kernels", m.kernels}});
}

/// A kernel's line for one launch configuration (`pid` is the reader's).
inline std::string kernel_trace_line(const KernelRecord& r) {
  return detail::trace_line({{"kernel", r.kernel},
                             {"demangled", r.demangled},
                             {"device", r.config.device},
                             {"grid", r.config.grid},
                             {"block", r.config.block},
                             {"dynamic_smem", r.config.dynamic_smem},
                             {"static_smem", r.static_smem},
                             {"registers", r.registers},
                             {"local_bytes", r.local_bytes},
                             {"launches", r.launches},
                             {"total_ns", r.total_ns},
                             {"min_ns", r.min_ns},
                             {"max_ns", r.max_ns},
                             {"first_start_ns", r.first_start_ns},
                             {"last_end_ns", r.last_end_ns},
                             {"durations_ns", r.durations_ns},
                             {"code_xxh128", r.code_xxh128},
                             {"module", r.module}});
}

} // namespace ciq::formats
