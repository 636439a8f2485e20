// Finding the tuned control set for one PTX module: the module key first
// (an exact match of the whole module), then each kernel's own key, merged.
// Quarantined keys and unreadable records count as misses.
#pragma once

#include "spaces/control_set.h"
#include "cache/key.h"
#include "cache/record.h"
#include "cache/store.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

struct LookupResult {
  spaces::ControlSet controls;
  std::vector<std::string> keys; // hex keys whose records contributed
  std::string matched;           // "module" or "kernel"
};

/// The record under `key`; std::nullopt when there is none, it is
/// quarantined, or it cannot be read.
Result<std::optional<cache::Record>> lookup_record(const cache::Store& store, const Hash128& key);

/// Merged control set for `module`; std::nullopt on a miss. Options that
/// two kernel records set to different values are dropped (neither is
/// applied), as is an ACF they disagree on.
Result<std::optional<LookupResult>> lookup_controls(const cache::Store& store, const cache::PtxModule& module,
                                                    const cache::KeyContext& context);

/// Restricts `set` to the kernels of `module` that match `glob`: their
/// directives, and the options only if at least one kernel matches.
spaces::ControlSet target_kernels(const spaces::ControlSet& set, const cache::PtxModule& module,
                                 const std::string& glob);

} // namespace ciq::wrapper
