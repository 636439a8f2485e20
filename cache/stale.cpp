#include "cache/stale.h"

#include "cache/ptxas_identity.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"

namespace ciq::cache {

namespace {

// The tool the wrappers would run: $CIQ_REAL_PTXAS (or _NVCC), else the one
// on PATH; std::nullopt with `why` when there is none or it does not answer.
std::optional<FoundCompiler> find_compiler(const char* tool, Env setting, const std::string& cache_dir, std::string& why) {
  std::string named = env(setting);
  auto path = find_program(named.empty() ? tool : named);
  std::string from = named.empty() ? "PATH" : env_name(setting);
  if (!path) {
    why = named.empty() ? std::string("no ") + tool + " on PATH (set " + env_name(setting) + ")"
                        : std::string(env_name(setting)) + "='" + named + "' is not an executable";
    return std::nullopt;
  }
  // Its memo goes into the cache only when the cache is there (stale writes no new directory).
  auto id = identify_ptxas(*path, is_directory(cache_dir) ? cache_dir : "");
  if (!id) {
    why = id.error().message;
    return std::nullopt;
  }
  return FoundCompiler{id->version, *path, from};
}

} // namespace

const char* stale_reason_name(StaleReason r) { return r == StaleReason::ptxas ? "ptxas" : r == StaleReason::nvcc ? "nvcc" : "gpu"; }

Result<StaleReport> find_stale(const std::string& cache_dir, const std::optional<std::string>& gpu_model) {
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();

  StaleReport report;
  report.gpu_now = gpu_model;
  report.ptxas_now = find_compiler("ptxas", Env::real_ptxas, cache_dir, report.ptxas_why);
  if (!*store) return report;
  auto walked = (*store)->for_each(Table::records, [&](std::string_view k, std::string_view v) {
    ++report.entries;
    auto r = parse_record(v, "record " + bytes_to_hex(k));
    if (!r) {
      ++report.unreadable;
      return true;
    }
    std::vector<std::pair<StaleReason, std::string>> reasons;
    if (r->kind == RecordKind::unit) {
      if (!report.nvcc_asked) report.nvcc_now = find_compiler("nvcc", Env::real_nvcc, cache_dir, report.nvcc_why); // once, when needed
      report.nvcc_asked = true;
      if (report.nvcc_now && r->nvcc != report.nvcc_now->version) reasons.emplace_back(StaleReason::nvcc, r->nvcc);
    } else if (report.ptxas_now && r->ptxas != report.ptxas_now->version) {
      reasons.emplace_back(StaleReason::ptxas, r->ptxas);
    }
    std::string model = tuned_on(*r).gpu_model;
    if (model.empty()) ++report.no_gpu;
    else if (gpu_model && !same_gpu_model(model, *gpu_model)) reasons.emplace_back(StaleReason::gpu, model);
    report.stale += !reasons.empty();
    for (const auto& reason : reasons) {
      auto& g = report.groups.try_emplace(reason, StaleGroup{reason.first, reason.second, {}}).first->second;
      g.entries.push_back(StaleEntry{bytes_to_hex(k), *r});
    }
    return true;
  });
  if (!walked) return walked.error();
  return report;
}

} // namespace ciq::cache
