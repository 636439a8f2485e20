// Whether the wrappers apply an entry verified on another GPU model than
// the one the build is for: a team's choice, CIQ_GPU_POLICY.
//   any   (the default) an entry applies on every GPU of its target: its key
//         names the architecture (sm_90a), not the GPU (an H100 and an H200
//         are both sm_90a);
//   same  only entries verified on the model CIQ_GPU_MODEL names apply; one
//         verified on another is passed over like a miss (a pack or the team
//         server may still hold one verified on this model), counted as
//         gpu.refused;
//   warn  they apply, logged at warn level and counted as gpu.other-model.
// The model is CIQ_GPU_MODEL's: the wrappers run on compile machines, often
// without a GPU, and take their configuration from the environment only
// (no NVML in a compile). Entries that record no GPU (made by hand, or tuned
// with a compile-only objective on a machine without one) always apply.
#pragma once

#include "cache/record.h"

#include <string>

namespace ciq::cache {

enum class GpuPolicy { any, same, warn };

struct GpuRule {
  GpuPolicy policy = GpuPolicy::any;
  std::string model; // the GPU the build is for; "" = not known
};

/// The rule CIQ_GPU_POLICY and CIQ_GPU_MODEL set. A policy other than any,
/// same or warn, or same/warn without a model, is `any` (the wrappers fail
/// open), with `why` saying so; `why` is "" otherwise.
GpuRule gpu_rule_from_environment(std::string& why);

/// Whether `record` says it was verified on another GPU model than the
/// rule's; false when either is unknown.
bool verified_elsewhere(const GpuRule& rule, const Record& record);

} // namespace ciq::cache
