// Which cache entries a toolkit or GPU change has left behind: the one
// reader of that question, for `ciq-cache stale` (which prints it) and
// `ciq-tuner retune --stale` (which tunes them again).
//
// An entry is stale for the compiler when its key was made for another
// ptxas (kernel and module entries) or nvcc (unit entries) than the one
// found now: its key names the old version, so it can no longer be found
// (a toolkit upgrade misses it silently). It is stale for the GPU when it
// was verified on another GPU model than the one present: it still applies
// (a key names the target architecture, not the GPU), but its gain was
// measured elsewhere. Entries that record no GPU (tuned with a compile-only
// objective, or shipped before ciq recorded one) are counted, not compared.
#pragma once

#include "cache/record.h"
#include "utils/result.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ciq::cache {

enum class StaleReason { ptxas, nvcc, gpu };

/// "ptxas", "nvcc", "gpu".
const char* stale_reason_name(StaleReason reason);

/// A compiler found now: its version, path and where the path came from
/// ("PATH", "CIQ_REAL_PTXAS", "CIQ_REAL_NVCC").
struct FoundCompiler {
  std::string version, path, from;
};

struct StaleEntry {
  std::string key; // hex
  Record record;
};

/// Entries stale for one reason, made for one version or verified on one GPU.
struct StaleGroup {
  StaleReason reason;
  std::string recorded; // the version or GPU model the entries name
  std::vector<StaleEntry> entries;
};

struct StaleReport {
  std::optional<FoundCompiler> ptxas_now;  // absent: kernel and module entries not compared (ptxas_why)
  std::string ptxas_why;
  bool nvcc_asked = false;                 // some unit entry needed nvcc's version
  std::optional<FoundCompiler> nvcc_now;   // absent (when asked): unit entries not compared (nvcc_why)
  std::string nvcc_why;
  std::optional<std::string> gpu_now;      // the GPU model compared with; absent: GPUs not compared
  std::map<std::pair<StaleReason, std::string>, StaleGroup> groups;
  long entries = 0, stale = 0, unreadable = 0, no_gpu = 0;
};

/// Compares every record of the cache under `cache_dir` with the ptxas
/// (and nvcc) the wrappers would run now ($CIQ_REAL_PTXAS / _NVCC, else
/// PATH's) and with `gpu_model` (std::nullopt: GPUs not compared). An
/// entry stale for two reasons is in two groups. A cache that does not
/// exist has no entries. Fails only when the cache is unusable.
Result<StaleReport> find_stale(const std::string& cache_dir, const std::optional<std::string>& gpu_model);

} // namespace ciq::cache
