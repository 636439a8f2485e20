// CIQ_REMOTE=redis://host:port/db: on a local miss, ciq-ptxas (ciq-cicc) asks the team's
// Redis for the module's records, checks each exactly like a local entry
// (size, syntax, the running ptxas' space and value domains, the ACF blob's
// sha256) and copies the usable ones into the local cache, where the normal
// lookup then finds them. Timeouts are short (CIQ_REMOTE_TIMEOUT_MS), and
// the whole lookup stops after connect + 2 x reply timeout; any failure is
// a miss.
#pragma once

#include "cache/key.h"
#include "cache/ptx.h"
#include "cache/remote.h"
#include "spaces/space.h"
#include "utils/result.h"

#include <string>

namespace ciq::wrapper {

struct RemoteFetch {
  int copied = 0;  // records copied into the local cache
  int refused = 0; // records that failed the checks
};

Result<RemoteFetch> fetch_remote(const cache::RemoteConfig& remote, const cache::PtxModule& module,
                                 const cache::KeyContext& context, const spaces::Space& space,
                                 const spaces::Policy& policy, const std::string& cache_dir);

/// The same for one translation unit's record (ciq-cicc); `space` is the
/// running toolkit's nvcc space.
Result<RemoteFetch> fetch_remote_unit(const cache::RemoteConfig& remote, const Hash128& unit_key, const spaces::Space& space,
                                      const spaces::Policy& policy, const std::string& cache_dir);

} // namespace ciq::wrapper
