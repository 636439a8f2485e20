#include "tuner/objectives/objectives.h"

#include "cache/compile_trace.h"

#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <re2/re2.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ciq::tuner {

Result<Objective> builtin_objective(const std::string& spec) {
  Objective o;
  o.name = spec;
  if (spec == "ptxas:spill-stores") o.kind = ObjectiveKind::spill_stores;
  else if (spec == "ptxas:registers") o.kind = ObjectiveKind::registers;
  else if (spec == "ptxas:stack") o.kind = ObjectiveKind::stack;
  else if (spec == "compile-time") o.kind = ObjectiveKind::compile_time;
  else if (spec == "kernel-time" || spec.rfind("kernel-time:", 0) == 0) {
    o.kind = ObjectiveKind::kernel_time;
    o.pattern = spec.size() > 12 ? spec.substr(12) : "";
  } else if (spec == "energy") o.kind = ObjectiveKind::energy;
  else if (spec == "power") o.kind = ObjectiveKind::power;
  else
    return make_error(ciq::errc::usage, "unknown objective '" + spec +
                                   "' (built-in objectives: ptxas:spill-stores, ptxas:registers, ptxas:stack, "
                                   "compile-time, kernel-time[:GLOB], energy, power; use --metric REGEX for a benchmark's number)");
  return o;
}

bool times_kernel(const Objective& objective, const formats::KernelSummary& k) {
  const std::string& glob = objective.pattern;
  return glob.empty() || glob_match(glob, k.kernel) || (!k.demangled.empty() && glob_match(glob, k.demangled));
}

const Objective* kernel_time_objective(const std::vector<Objective>& objectives) {
  for (const auto& o : objectives)
    if (o.kind == ObjectiveKind::kernel_time) return &o;
  return nullptr;
}

LaunchCounts launch_counts(const Objective& objective, const formats::KernelTrace& trace) {
  LaunchCounts counts;
  for (const auto& k : trace.kernels)
    if (times_kernel(objective, k)) counts[k.kernel] += k.stats.launches;
  return counts;
}

namespace {

// `k`'s time as if it had run `launches` times: each configuration at its
// median, in the proportions of this run (a kernel's configurations are
// its launch sizes; an autotuner's extra launches repeat one of them).
double time_at_launches(const formats::KernelSummary& k, std::uint64_t launches) {
  double ns = 0;
  std::uint64_t counted = 0;
  for (const auto& c : k.configs) {
    double median = c.stats.median_ns > 0 ? c.stats.median_ns : k.stats.median_ns;
    ns += median * double(c.stats.launches);
    counted += c.stats.launches;
  }
  if (counted == 0) return k.stats.median_ns * double(launches);
  return ns * double(launches) / double(counted);
}

} // namespace

std::string ScaledKernel::text() const {
  return kernel + " ran " + std::to_string(launches) + " times, " + std::to_string(reference) + " in the default's first run";
}

Result<double> kernel_time_ms(const Objective& objective, const formats::KernelTrace& trace, const LaunchCounts* reference,
                              std::vector<ScaledKernel>* scaled) {
  if (!trace.timed()) return make_error(ciq::errc::no_timing, "no kernel timing: " + trace.no_timing_reason());
  const std::string& glob = objective.pattern;
  double ns = 0;  // kernels' saturated totals added without wrapping
  bool matched = false;
  std::string ran;
  for (const auto& k : trace.kernels) {
    if (!times_kernel(objective, k)) {
      if (ran.size() < 300) ran += (ran.empty() ? "" : ", ") + k.kernel;
      continue;
    }
    matched = true;
    auto ref = reference ? reference->find(k.kernel) : LaunchCounts::const_iterator{};
    if (!reference || ref == reference->end() || ref->second == k.stats.launches || ref->second == 0) {
      ns += double(k.stats.total_ns);
      continue;
    }
    ns += time_at_launches(k, ref->second);
    if (scaled) scaled->push_back(ScaledKernel{k.kernel, k.stats.launches, ref->second});
  }
  if (!matched)
    return make_error(ciq::errc::no_timing, "no kernel matching '" + glob + "' ran" + (ran.empty() ? "" : " (kernels that ran: " + ran + ")"));
  return ns / 1e6;
}

Result<Objective> metric_objective(const std::string& pattern) {
  Objective o;
  o.kind = ObjectiveKind::metric;
  o.name = "metric:" + pattern;
  o.pattern = pattern;
  RE2::Options options;
  options.set_log_errors(false);
  auto regex = std::make_shared<const RE2>(pattern, options);
  if (!regex->ok())
    return make_error(ciq::errc::usage, "--metric '" + pattern + "' is not a valid regular expression (RE2 syntax): " + regex->error());
  if (regex->NumberOfCapturingGroups() < 1)
    return make_error(ciq::errc::usage, "--metric '" + pattern + "' needs a capture group around the number, e.g. 'time_ms: ([0-9.]+)'");
  o.regex = std::move(regex);
  return o;
}

Result<double> extract_metric(const Objective& objective, const std::string& output) {
  // The last match wins (a benchmark that prints progress, then the result).
  const RE2& regex = *objective.regex;
  re2::StringPiece groups[2];
  std::string_view found;
  bool matched = false;
  for (std::size_t pos = 0; pos <= output.size();) {
    if (!regex.Match(output, pos, output.size(), RE2::UNANCHORED, groups, 2)) break;
    matched = true;
    found = std::string_view(groups[1].data() ? groups[1].data() : "", groups[1].size());
    std::size_t start = std::size_t(groups[0].data() - output.data());
    pos = std::max(start + groups[0].size(), start + 1); // an empty match steps on by one
  }
  std::string text(found);
  if (!matched || text.empty()) return make_error("unparsable", "benchmark output has no match for '" + objective.pattern + "'");
  std::string shown = text.size() > 40 ? text.substr(0, 20) + "...(" + std::to_string(text.size()) + " characters)" : text;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (!end || *end) return make_error("unparsable", "'" + shown + "' (matched by '" + objective.pattern + "') is not a number");
  if (!std::isfinite(v))
    return make_error("unparsable", "'" + shown + "' (matched by '" + objective.pattern + "') is not a finite number");
  return v;
}

namespace {

// The tuner's view of a module's record (cache/compile_trace.h).
TracedModule traced_module(std::string file, cache::TraceRecord r) {
  TracedModule m;
  m.file = std::move(file);
  m.input = std::move(r.input);
  m.output = std::move(r.output);
  m.target = std::move(r.target);
  m.ptxas_version = std::move(r.ptxas_version);
  m.flags = std::move(r.flags);
  m.module_key = std::move(r.module_key);
  m.args = std::move(r.args);
  m.ptx_copy = std::move(r.ptx_copy);
  m.ptxas_path = std::move(r.ptxas_path);
  m.ptxas_identity = std::move(r.ptxas_identity);
  m.controls = std::move(r.controls);
  m.controls_error = std::move(r.controls_error);
  m.code_digest = std::move(r.code_digest);
  m.controls_applied = r.controls_applied;
  m.accepts_controls_file = r.accepts_controls_file;
  m.exit_status = r.exit_status;
  m.seconds = r.seconds;
  m.warnings = std::move(r.warnings);
  for (auto& k : r.kernels) {
    TracedKernel t;
    t.name = std::move(k.name);
    t.key = std::move(k.key);
    t.code = std::move(k.code);
    t.registers = double(k.resources.registers);
    t.spill_stores = double(k.resources.spill_stores);
    t.spill_loads = double(k.resources.spill_loads);
    t.stack = double(k.resources.stack);
    t.shared = double(k.resources.shared);
    t.block_threads = k.block_threads;
    m.kernels.push_back(std::move(t));
  }
  return m;
}

} // namespace

Result<std::vector<TracedModule>> read_trace(const std::string& dir) {
  std::vector<TracedModule> out;
  auto entries = list_directory(dir);
  if (!entries) return out;
  for (const auto& n : *entries) {
    if (n.size() <= 5 || !ends_with(n, ".json")) continue;
    auto text = read_file(join_path(dir, n));
    if (!text) return text.error();
    auto record = cache::parse_trace_record(*text);
    if (!record) return make_error("parse", "trace record " + n + ": " + record.error().message);
    out.push_back(traced_module(n, std::move(*record)));
  }
  return out;
}

Result<std::vector<TracedUnit>> read_unit_trace(const std::string& dir) {
  std::vector<TracedUnit> out;
  std::string units = join_path(dir, "units");
  auto entries = list_directory(units);
  if (!entries) return out;
  for (const auto& n : *entries) {
    if (!ends_with(n, ".json")) continue;
    auto text = read_file(join_path(units, n));
    if (!text) return text.error();
    auto r = cache::parse_unit_record(*text);
    if (!r) return make_error("parse", "unit trace record " + n + ": " + r.error().message);
    out.push_back({std::move(r->unit), std::move(r->target), std::move(r->key), std::move(r->nvcc_version), std::move(r->kernels),
                   std::move(r->controls_error), std::move(r->warnings)});
  }
  return out;
}

double trace_objective(const Objective& o, const std::vector<TracedModule>& modules, const std::string& glob) {
  double total = 0;
  for (const auto& m : modules) {
    if (o.kind == ObjectiveKind::compile_time) {
      total += m.seconds;
      continue;
    }
    for (const auto& k : m.kernels) {
      if (!glob.empty() && !glob_match(glob, k.name)) continue;
      switch (o.kind) {
      case ObjectiveKind::spill_stores: total += k.spill_stores; break;
      case ObjectiveKind::stack: total += k.stack; break;
      case ObjectiveKind::registers: total = std::max(total, k.registers); break;
      default: break;
      }
    }
  }
  return total;
}

} // namespace ciq::tuner
