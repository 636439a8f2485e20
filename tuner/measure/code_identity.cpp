#include "tuner/measure/code_identity.h"

#include "utils/text.h"

#include <algorithm>
#include <map>

namespace ciq::tuner {

std::string code_digest(const std::vector<TracedModule>& trace, const std::vector<Objective>& objectives,
                        const std::vector<std::pair<std::string, std::string>>& params) {
  std::string digest;
  std::vector<std::string> timed; // kernel-time globs ("" = every kernel)
  bool whole = trace.empty();
  for (const auto& o : objectives) {
    if (o.kind == ObjectiveKind::kernel_time) timed.push_back(o.pattern);
    else if (o.needs_benchmark()) whole = true;
  }
  if (!whole && !timed.empty()) {
    std::map<std::string, std::string> code; // kernel -> its code (a kernel in several modules: each)
    for (const auto& m : trace)
      for (const auto& k : m.kernels) {
        bool counted = std::any_of(timed.begin(), timed.end(), [&](const std::string& g) { return g.empty() || glob_match(g, k.name); });
        if (!counted) continue;
        if (k.code.empty()) whole = true;
        code[k.name] += k.code.substr(0, 16) + ",";
      }
    // No timed kernel compiled: they come from elsewhere (a JIT at run
    // time, a library), so the modules built here say nothing of them.
    if (code.empty()) return "";
    for (const auto& [name, hashes] : code) digest += name + "=" + hashes + ";";
  }
  if (whole || digest.empty()) {
    digest.clear();
    for (const auto& m : trace) digest += m.code_digest.empty() ? "?" : m.code_digest.substr(0, 16);
  }
  if (trace.empty() || digest.find('?') != std::string::npos) return "";
  for (const auto& [name, value] : params) digest += ";" + name + "=" + value;
  return digest;
}

void reuse_same_code(EvalRecord& r, const EvalRecord& same) {
  r.evaluation = same.evaluation;
  r.samples = same.samples;
  r.kernel_samples = same.kernel_samples;
  r.status = EvalStatus::same_code;
  r.evaluation.reason = "same code as evaluation " + std::to_string(same.number);
}

} // namespace ciq::tuner
