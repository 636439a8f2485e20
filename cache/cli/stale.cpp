#include "cache/cli/stale.h"

#include "cache/cli/commands.h"
#include "cache/stale.h"
#include "cache/tuned_on.h"
#include "utils/config.h"
#include "utils/gpu_model.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>
#include <optional>

namespace ciq::cache::cli {

namespace {

// What a listing names an entry by: its kernel, or its unit's file name.
std::string entry_name(const Record& r) {
  return r.kind == RecordKind::unit ? (r.unit.empty() ? "(unit)" : r.unit) : (r.kernel.empty() ? "(module)" : r.kernel);
}

std::string entry_line(const StaleEntry& e) {
  const Record& r = e.record;
  return "  " + e.key + "  " + printable(std::string(kind_name(r.kind)) + "  " + r.target + "  " + entry_name(r) + "  " + describe_controls(r)) + "\n";
}

} // namespace

Result<void> list_stale(const std::string& cache_dir, const StaleRequest& request, bool json, std::ostream& out) {
  std::string gpu_why;
#ifdef CIQ_STATIC_EXECUTABLE
  const char* no_nvml = "this ciq-cache is linked statically (CIQ_PORTABLE) and cannot load NVML";
#else
  const char* no_nvml = nullptr;
#endif
  auto gpu_now = gpu_model_here(request.gpu, "--gpu", gpu_why, no_nvml);
  auto found = find_stale(cache_dir, gpu_now ? std::optional<std::string>(gpu_now->model) : std::nullopt);
  if (!found) return found.error();
  const StaleReport& report = *found;
  const auto& groups = report.groups;
  long entries = report.entries, stale = report.stale, unreadable = report.unreadable, no_gpu = report.no_gpu;
  const FoundCompiler* ptxas_now = report.ptxas_now ? &*report.ptxas_now : nullptr;
  const std::string& ptxas_why = report.ptxas_why;
  bool nvcc_asked = report.nvcc_asked;
  const FoundCompiler* nvcc_found = report.nvcc_now ? &*report.nvcc_now : nullptr;
  const std::string& nvcc_why = report.nvcc_why;

  if (json) {
    auto compiler = [](const FoundCompiler* f, const std::string& why) {
      return f ? nlohmann::json{{"version", f->version}, {"path", f->path}, {"from", f->from}} : nlohmann::json{{"skipped", why}};
    };
    nlohmann::json j{{"entries", entries}, {"stale", stale}, {"unreadable", unreadable}, {"no_gpu_recorded", no_gpu}};
    j["ptxas_now"] = compiler(ptxas_now, ptxas_why);
    if (nvcc_asked) j["nvcc_now"] = compiler(nvcc_found, nvcc_why);
    j["gpu_now"] = gpu_now ? nlohmann::json{{"model", gpu_now->model}, {"from", gpu_now->from}} : nlohmann::json{{"skipped", gpu_why}};
    j["groups"] = nlohmann::json::array();
    for (const auto& [id, g] : groups) {
      nlohmann::json listed = nlohmann::json::array();
      for (const auto& e : g.entries)
        listed.push_back({{"key", e.key}, {"kind", e.record.kind}, {"name", entry_name(e.record)}, {"target", e.record.target},
                          {"controls", describe_controls(e.record)}, {"command_line", tuned_on(e.record).command_line}});
      std::string now = g.reason == StaleReason::ptxas ? ptxas_now->version : g.reason == StaleReason::nvcc ? nvcc_found->version : gpu_now->model;
      j["groups"].push_back({{"reason", stale_reason_name(g.reason)}, {"recorded", g.recorded}, {"now", now},
                             {"count", g.entries.size()}, {"entries", listed}});
    }
    // Names and versions come from records anyone may have shared: replace
    // bytes that are not UTF-8 rather than fail.
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return {};
  }

  if (ptxas_now) out << "ptxas now: " << printable(ptxas_now->version) << " (" << printable(ptxas_now->path) << ", from " << ptxas_now->from << ")\n";
  else out << "ptxas now: unknown, kernel and module entries not compared: " << printable(ptxas_why) << "\n";
  if (nvcc_asked) {
    if (nvcc_found) out << "nvcc now: " << printable(nvcc_found->version) << " (" << printable(nvcc_found->path) << ", from " << nvcc_found->from << ")\n";
    else out << "nvcc now: unknown, unit entries not compared: " << printable(nvcc_why) << "\n";
  }
  if (gpu_now) out << "GPU now: " << printable(gpu_now->model) << " (from " << gpu_now->from << ")\n";
  else out << "GPU now: unknown, GPUs not compared: " << printable(gpu_why) << "; name one with --gpu NAME or "
           << env_name(Env::gpu_model) << "\n";
  out << stale << " of " << entries << " entr" << (entries == 1 ? "y" : "ies") << " stale\n";
  auto count = [](std::size_t n) { return std::to_string(n) + " entr" + (n == 1 ? "y" : "ies"); };
  for (const auto& [id, g] : groups) {
    out << "\n";
    if (g.reason == StaleReason::gpu)
      out << "verified on " << printable(g.recorded) << ", not " << printable(gpu_now->model) << ": " << count(g.entries.size())
          << " (they still apply on any GPU of their target; their gain was measured on the other GPU)\n";
    else
      out << "made for " << stale_reason_name(g.reason) << " " << printable(g.recorded) << ", not "
          << printable(g.reason == StaleReason::ptxas ? ptxas_now->version : nvcc_found->version) << ": " << count(g.entries.size())
          << " (their keys name that version: builds with this one miss them)\n";
    for (const auto& e : g.entries) out << entry_line(e);
  }
  if (no_gpu) out << "\n" << count(no_gpu) << " record no GPU (a compile-only objective, or made before ciq recorded it): not compared\n";
  if (unreadable) out << count(unreadable) << " unreadable: run 'ciq-cache verify'\n";
  return {};
}

} // namespace ciq::cache::cli
