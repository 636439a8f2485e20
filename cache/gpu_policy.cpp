#include "cache/gpu_policy.h"

#include "cache/tuned_on.h"
#include "utils/config.h"
#include "utils/text.h"

namespace ciq::cache {

GpuRule gpu_rule_from_environment(std::string& why) {
  why.clear();
  GpuRule rule;
  std::string policy(trim(env(Env::gpu_policy)));
  rule.model = std::string(trim(env(Env::gpu_model)));
  if (policy.empty() || policy == "any") return rule;
  if (policy != "same" && policy != "warn") {
    why = std::string(env_name(Env::gpu_policy)) + "='" + printable(policy) + "' is not any, same or warn: applying entries whatever GPU they were verified on";
    return rule;
  }
  if (rule.model.empty()) {
    why = std::string(env_name(Env::gpu_policy)) + "=" + policy + " needs " + env_name(Env::gpu_model) +
          " (the GPU model the build is for): applying entries whatever GPU they were verified on";
    return rule;
  }
  rule.policy = policy == "same" ? GpuPolicy::same : GpuPolicy::warn;
  return rule;
}

bool verified_elsewhere(const GpuRule& rule, const Record& record) {
  if (rule.model.empty()) return false;
  std::string recorded = tuned_on(record).gpu_model;
  return !recorded.empty() && !same_gpu_model(recorded, rule.model);
}

} // namespace ciq::cache
