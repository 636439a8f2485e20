#include "cache/cli/stale.h"

#include "cache/cli/commands.h"
#include "cache/cli/present_gpu.h"
#include "cache/ptxas_identity.h"
#include "cache/record.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/text.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace ciq::cache::cli {

namespace {

enum class Reason { ptxas, nvcc, gpu };

const char* reason_name(Reason r) { return r == Reason::ptxas ? "ptxas" : r == Reason::nvcc ? "nvcc" : "gpu"; }

// A compiler found now: its version, path and where the path came from.
struct Found {
  std::string version, path, from;
};

// The tool the wrappers would run: $CIQ_REAL_PTXAS (or _NVCC), else the one
// on PATH; std::nullopt with `why` when there is none or it does not answer.
std::optional<Found> find_compiler(const char* tool, Env setting, const std::string& cache_dir, std::string& why) {
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
  return Found{id->version, *path, from};
}

struct StaleEntry {
  std::string key, kind, name, target, controls;
  std::string command_line; // the run that made it ("" = made by hand): how to tune it again
};

// One group: entries stale for one reason, made for one version or GPU.
struct Group {
  Reason reason;
  std::string recorded;
  std::vector<StaleEntry> entries;
};

std::string entry_line(const StaleEntry& e) {
  return "  " + e.key + "  " + printable(e.kind + "  " + e.target + "  " + e.name + "  " + e.controls) + "\n";
}

} // namespace

Result<void> list_stale(const std::string& cache_dir, const StaleRequest& request, bool json, std::ostream& out) {
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();

  std::string ptxas_why, nvcc_why, gpu_why;
  auto ptxas_now = find_compiler("ptxas", Env::real_ptxas, cache_dir, ptxas_why);
  std::optional<std::optional<Found>> nvcc_now; // asked for once, when a unit entry needs it
  auto gpu_now = present_gpu(request.gpu, gpu_why);

  std::map<std::pair<Reason, std::string>, Group> groups;
  long entries = 0, stale = 0, unreadable = 0, no_gpu = 0;
  if (*store) {
    auto walked = (*store)->for_each(Table::records, [&](std::string_view k, std::string_view v) {
      ++entries;
      auto r = parse_record(v, "record " + bytes_to_hex(k));
      if (!r) {
        ++unreadable;
        return true;
      }
      StaleEntry e{bytes_to_hex(k), r->kind, r->kind == "unit" ? (r->unit.empty() ? "(unit)" : r->unit) : (r->kernel.empty() ? "(module)" : r->kernel),
                   r->target, describe_controls(*r), tuned_on(*r).command_line};
      std::vector<std::pair<Reason, std::string>> reasons;
      if (r->kind == "unit") {
        if (!nvcc_now) nvcc_now = find_compiler("nvcc", Env::real_nvcc, cache_dir, nvcc_why);
        if (*nvcc_now && r->nvcc != (*nvcc_now)->version) reasons.emplace_back(Reason::nvcc, r->nvcc);
      } else if (ptxas_now && r->ptxas != ptxas_now->version) {
        reasons.emplace_back(Reason::ptxas, r->ptxas);
      }
      std::string model = tuned_on(*r).gpu_model;
      if (model.empty()) ++no_gpu;
      else if (gpu_now && !same_gpu_model(model, gpu_now->model)) reasons.emplace_back(Reason::gpu, model);
      stale += !reasons.empty();
      for (const auto& reason : reasons) {
        auto& g = groups.try_emplace(reason, Group{reason.first, reason.second, {}}).first->second;
        g.entries.push_back(e);
      }
      return true;
    });
    if (!walked) return walked.error();
  }
  bool nvcc_asked = nvcc_now.has_value();
  const Found* nvcc_found = nvcc_now && *nvcc_now ? &**nvcc_now : nullptr;

  if (json) {
    auto compiler = [](const Found* f, const std::string& why) {
      return f ? nlohmann::json{{"version", f->version}, {"path", f->path}, {"from", f->from}} : nlohmann::json{{"skipped", why}};
    };
    nlohmann::json j{{"entries", entries}, {"stale", stale}, {"unreadable", unreadable}, {"no_gpu_recorded", no_gpu}};
    j["ptxas_now"] = compiler(ptxas_now ? &*ptxas_now : nullptr, ptxas_why);
    if (nvcc_asked) j["nvcc_now"] = compiler(nvcc_found, nvcc_why);
    j["gpu_now"] = gpu_now ? nlohmann::json{{"model", gpu_now->model}, {"from", gpu_now->from}} : nlohmann::json{{"skipped", gpu_why}};
    j["groups"] = nlohmann::json::array();
    for (const auto& [id, g] : groups) {
      nlohmann::json listed = nlohmann::json::array();
      for (const auto& e : g.entries)
        listed.push_back({{"key", e.key}, {"kind", e.kind}, {"name", e.name}, {"target", e.target}, {"controls", e.controls},
                          {"command_line", e.command_line}});
      std::string now = g.reason == Reason::ptxas ? ptxas_now->version : g.reason == Reason::nvcc ? nvcc_found->version : gpu_now->model;
      j["groups"].push_back({{"reason", reason_name(g.reason)}, {"recorded", g.recorded}, {"now", now},
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
    if (g.reason == Reason::gpu)
      out << "verified on " << printable(g.recorded) << ", not " << printable(gpu_now->model) << ": " << count(g.entries.size())
          << " (they still apply on any GPU of their target; their gain was measured on the other GPU)\n";
    else
      out << "made for " << reason_name(g.reason) << " " << printable(g.recorded) << ", not "
          << printable(g.reason == Reason::ptxas ? ptxas_now->version : nvcc_found->version) << ": " << count(g.entries.size())
          << " (their keys name that version: builds with this one miss them)\n";
    for (const auto& e : g.entries) out << entry_line(e);
  }
  if (no_gpu) out << "\n" << count(no_gpu) << " record no GPU (a compile-only objective, or made before ciq recorded it): not compared\n";
  if (unreadable) out << count(unreadable) << " unreadable: run 'ciq-cache verify'\n";
  return {};
}

} // namespace ciq::cache::cli
