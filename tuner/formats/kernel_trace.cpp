// Reading and merging kernel traces. nlohmann/json directly rather than
// utils/json.h: timestamps in nanoseconds need all 64 bits, and that
// reader keeps numbers as doubles.
#include "tuner/formats/kernel_trace.h"

#include "utils/json_members.h"
#include "tuner/formats/kernel_trace_lines.h"
#include "utils/files.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace ciq::formats {

namespace {

using namespace json_members;

std::int64_t signed_member(const json& object, const char* key, std::int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  return it->get<std::int64_t>();
}

/// `a + b`, or UINT64_MAX when that does not fit: a sum of durations that
/// cannot wrap round to a small one.
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

/// The kernel line `line` as a record; an error message when it lacks
/// what makes it one.
Result<KernelRecord> read_kernel_line(const json& line, std::int64_t pid) {
  KernelRecord r;
  r.pid = pid;
  r.kernel = string_member(line, "kernel");
  if (r.kernel.empty()) return make_error("parse", "a kernel line without a name");
  r.demangled = string_member(line, "demangled");
  r.config.device = signed_member(line, "device", 0);
  if (!read_dims(line, "grid", r.config.grid) || !read_dims(line, "block", r.config.block))
    return make_error("parse", "kernel " + r.kernel + ": grid and block must be [x, y, z]");
  // Counts and sizes: absent is 0, but one that is there must be a whole
  // number >= 0 that fits (-1 or 2^64+5, a float to the parser, is not a
  // measurement: it would otherwise read as 0 and skew the shares).
  for (auto [key, field] : {std::pair<const char*, std::uint64_t*>{"dynamic_smem", &r.config.dynamic_smem},
                            {"static_smem", &r.static_smem}, {"registers", &r.registers}, {"local_bytes", &r.local_bytes},
                            {"launches", &r.launches}, {"total_ns", &r.total_ns}, {"min_ns", &r.min_ns},
                            {"max_ns", &r.max_ns}, {"first_start_ns", &r.first_start_ns}, {"last_end_ns", &r.last_end_ns}}) {
    auto it = line.find(key);
    if (it != line.end() && !it->is_number_unsigned())
      return make_error("parse", "kernel " + r.kernel + ": " + key + " is not a whole number of at most 2^64 - 1");
    *field = unsigned_member(line, key);
  }
  for (auto [name, value] : {std::pair<const char*, std::uint64_t>{"launches", r.launches}, {"total_ns", r.total_ns},
                              {"min_ns", r.min_ns}, {"max_ns", r.max_ns}})
    if (value > k_max_trace_count)
      return make_error("parse", "kernel " + r.kernel + ": " + name + " " + std::to_string(value) +
                                     " is above 2^53, not a measurement");
  if (auto it = line.find("durations_ns"); it != line.end()) {
    if (!it->is_array()) return make_error("parse", "kernel " + r.kernel + ": durations_ns is not an array");
    if (it->size() > r.launches) return make_error("parse", "kernel " + r.kernel + ": more durations than launches");
    r.durations_ns.reserve(it->size());
    for (const json& d : *it) {
      if (!d.is_number_unsigned()) return make_error("parse", "kernel " + r.kernel + ": a duration is not a count of ns");
      if (d.get<std::uint64_t>() > k_max_trace_count)
        return make_error("parse", "kernel " + r.kernel + ": a duration of " + std::to_string(d.get<std::uint64_t>()) +
                                       " ns is above 2^53, not a measurement");
      r.durations_ns.push_back(d.get<std::uint64_t>());
    }
  }
  r.code_xxh128 = string_member(line, "code_xxh128");
  r.module = signed_member(line, "module", -1);
  return r;
}

/// The process's line (the file's first, its version checked by the
/// caller) as read from `file`.
TraceProcess read_process_line(const json& line, const std::string& file) {
  TraceProcess p;
  p.file = file;
  p.pid = signed_member(line, "pid", 0);
  p.exe = string_member(line, "exe");
  p.status = string_member(line, "status");
  if (p.status.empty()) p.status = "unknown";
  p.reason = string_member(line, "reason");
  p.module_identity = string_member(line, "module_identity");
  p.dropped_launches = unsigned_member(line, "dropped_launches");
  p.dropped_records = unsigned_member(line, "dropped_records");
  p.incomplete_records = unsigned_member(line, "incomplete_records");
  return p;
}

/// A module's line of process `pid`.
TraceModule read_module_line(const json& line, std::int64_t pid) {
  TraceModule m;
  m.pid = pid;
  m.id = signed_member(line, "module", -1);
  m.image = string_member(line, "image");
  m.bytes = unsigned_member(line, "bytes");
  m.xxh128 = string_member(line, "xxh128");
  m.kernels = unsigned_member(line, "kernels");
  return m;
}

void merge_stats(LaunchStats& into, const KernelRecord& r) {
  if (r.launches == 0) return;
  into.min_ns = into.launches == 0 ? r.min_ns : std::min(into.min_ns, r.min_ns);
  into.max_ns = std::max(into.max_ns, r.max_ns);
  into.launches = saturating_add(into.launches, r.launches);
  into.total_ns = saturating_add(into.total_ns, r.total_ns);
}

} // namespace

double median_of(std::vector<std::uint64_t> values) {
  if (values.empty()) return 0;
  std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = double(values[middle]);
  if (values.size() % 2) return upper;
  double lower = double(*std::max_element(values.begin(), values.begin() + middle));
  return (lower + upper) / 2;
}

bool KernelTrace::timed() const {
  return std::any_of(processes.begin(), processes.end(), [](const TraceProcess& p) { return p.timed(); });
}

std::string KernelTrace::no_timing_reason() const {
  if (timed()) return "";
  if (processes.empty())
    return "no process wrote a kernel trace (the program never initialised CUDA, or "
           "CUDA_INJECTION64_PATH and CIQ_KERNEL_TRACE did not reach it)";
  std::set<std::string> seen;
  std::string reason;
  for (const auto& p : processes) {
    std::string one = p.status + (p.reason.empty() ? "" : ": " + p.reason);
    if (!seen.insert(one).second) continue;
    reason += (reason.empty() ? "" : "; ") + one;
  }
  return reason;
}

void add_kernel_trace_text(KernelTrace& trace, std::string_view text, const std::string& file) {
  std::size_t line_number = 0;
  bool have_header = false;
  std::int64_t pid = 0;
  while (!text.empty()) {
    ++line_number;
    std::size_t end = text.find('\n');
    bool last_unterminated = end == std::string_view::npos;
    std::string_view line = text.substr(0, last_unterminated ? text.size() : end);
    text.remove_prefix(last_unterminated ? text.size() : end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto problem = [&](std::string message) {
      trace.problems.push_back({file + ":" + std::to_string(line_number), std::move(message)});
    };
    json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      problem(last_unterminated ? "truncated last line (the writer was cut off?); skipped"
                                : "not a JSON object; skipped");
      continue;
    }
    if (!have_header) {
      if (!parsed.contains(k_kernel_trace_member)) {
        problem(std::string("not a kernel trace (no \"") + k_kernel_trace_member + "\" header); file skipped");
        return;
      }
      if (unsigned_member(parsed, k_kernel_trace_member) != k_kernel_trace_version) {
        problem("kernel trace version " + parsed[k_kernel_trace_member].dump() + " is not " +
                std::to_string(k_kernel_trace_version) + "; file skipped");
        return;
      }
      trace.processes.push_back(read_process_line(parsed, file));
      pid = trace.processes.back().pid;
      have_header = true;
      continue;
    }
    if (parsed.contains("kernel")) {
      auto record = read_kernel_line(parsed, pid);
      if (!record) {
        problem(record.error().message + "; skipped");
        continue;
      }
      trace.records.push_back(std::move(*record));
    } else if (parsed.contains("module")) {
      trace.modules.push_back(read_module_line(parsed, pid));
    }
    // Other lines: members a later version adds; ignored.
  }
  if (!have_header) trace.problems.push_back({file + ":1", "empty file; skipped"});
}

void summarise_kernels(KernelTrace& trace) {
  std::map<std::string, KernelSummary> by_name;
  std::map<std::string, std::map<LaunchConfig, ConfigSummary>> configs;
  std::map<std::string, std::set<std::int64_t>> pids;
  std::map<std::string, std::set<std::string>> hashes;
  // Shares from sums in floating point: exact up to 2^53 ns, and never
  // wrapped or saturated, whatever the file holds.
  std::map<std::string, double> kernel_ns;
  double all_ns = 0;
  trace.total_ns = 0;
  for (const KernelRecord& r : trace.records) {
    KernelSummary& k = by_name[r.kernel];
    k.kernel = r.kernel;
    if (k.demangled.empty()) k.demangled = r.demangled;
    merge_stats(k.stats, r);
    k.durations_ns.insert(k.durations_ns.end(), r.durations_ns.begin(), r.durations_ns.end());
    ConfigSummary& c = configs[r.kernel][r.config];
    c.config = r.config;
    c.registers = std::max(c.registers, r.registers);
    c.static_smem = std::max(c.static_smem, r.static_smem);
    c.local_bytes = std::max(c.local_bytes, r.local_bytes);
    merge_stats(c.stats, r);
    c.durations_ns.insert(c.durations_ns.end(), r.durations_ns.begin(), r.durations_ns.end());
    pids[r.kernel].insert(r.pid);
    if (!r.code_xxh128.empty()) hashes[r.kernel].insert(r.code_xxh128);
    if (r.launches == 0) continue;  // no time either, as in merge_stats()
    trace.total_ns = saturating_add(trace.total_ns, r.total_ns);
    kernel_ns[r.kernel] += double(r.total_ns);
    all_ns += double(r.total_ns);
  }
  trace.kernels.clear();
  for (auto& [name, k] : by_name) {
    k.stats.recorded = k.durations_ns.size();
    k.stats.median_ns = median_of(k.durations_ns);
    k.share = all_ns > 0 ? kernel_ns[name] / all_ns : 0;
    k.processes = pids[name].size();
    k.code_xxh128.assign(hashes[name].begin(), hashes[name].end());
    for (auto& [config, c] : configs[name]) {
      c.stats.recorded = c.durations_ns.size();
      c.stats.median_ns = median_of(c.durations_ns);
      k.configs.push_back(std::move(c));
    }
    std::stable_sort(k.configs.begin(), k.configs.end(),
                     [](const ConfigSummary& a, const ConfigSummary& b) { return a.stats.total_ns > b.stats.total_ns; });
    trace.kernels.push_back(std::move(k));
  }
  std::stable_sort(trace.kernels.begin(), trace.kernels.end(), [](const KernelSummary& a, const KernelSummary& b) {
    return a.stats.total_ns > b.stats.total_ns;
  });
}

Result<KernelTrace> read_kernel_trace(const std::string& dir) {
  auto names = list_directory(dir);
  if (!names) return names.error();
  KernelTrace trace;
  for (const std::string& name : *names) {  // sorted: a stable order of processes
    if (name.rfind("kernels-", 0) != 0 || name.size() < 6 || name.substr(name.size() - 6) != ".jsonl") continue;
    std::string path = join_path(dir, name);
    auto text = read_file(path);
    if (!text) return text.error();
    add_kernel_trace_text(trace, *text, path);
  }
  summarise_kernels(trace);
  return trace;
}

} // namespace ciq::formats
