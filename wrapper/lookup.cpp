#include "wrapper/lookup.h"

#include "cache/record.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>

namespace ciq::wrapper {

Result<std::optional<cache::Record>> lookup_record(const cache::Store& store, const Hash128& key) {
  std::string k = digest_bytes(key);
  auto text = store.get(cache::Table::records, k);
  if (!text) return text.error();
  if (!*text) return std::optional<cache::Record>{};
  auto quarantined = store.get(cache::Table::quarantine, k);
  if (!quarantined) return quarantined.error();
  if (*quarantined) {
    spdlog::debug("entry {} is quarantined: {}", to_hex(key), **quarantined);
    return std::optional<cache::Record>{};
  }
  auto record = cache::parse_record(**text, "record " + to_hex(key));
  if (!record) {
    spdlog::warn("ignoring an unreadable cache record: {}", record.error().message);
    return std::optional<cache::Record>{};
  }
  return std::optional<cache::Record>{std::move(*record)};
}

Result<std::optional<LookupResult>> lookup_controls(const cache::Store& store, const cache::PtxModule& module,
                                                    const cache::KeyContext& context) {
  Hash128 mkey = cache::module_key(module, context);
  auto whole = lookup_record(store, mkey);
  if (!whole) return whole.error();
  if (*whole)
    return std::optional<LookupResult>{LookupResult{std::move((*whole)->controls), {to_hex(mkey)}, "module"}};

  LookupResult merged;
  merged.matched = "kernel";
  std::map<std::string, bool> conflicting;
  bool any = false, acf_conflict = false;
  for (const auto& kernel : module.kernel_names()) {
    Hash128 kkey = cache::kernel_key(module, kernel, context);
    auto record = lookup_record(store, kkey);
    if (!record) return record.error();
    if (!*record) continue;
    spaces::ControlSet part = (*record)->controls.for_kernel(kernel);
    if (any && part.space != merged.controls.space) {
      spdlog::warn("kernel entries of one module name different spaces; ignoring {}", kernel);
      continue;
    }
    merged.controls.space = part.space;
    for (const auto& [knob, value] : part.options) {
      auto [it, inserted] = merged.controls.options.emplace(knob, value);
      if (!inserted && it->second != value) conflicting[knob] = true;
    }
    for (auto& [k, knobs] : part.kernels) merged.controls.kernels[k] = knobs;
    if (part.acf) {
      if (merged.controls.acf && merged.controls.acf != part.acf) acf_conflict = true;
      merged.controls.acf = part.acf;
    }
    merged.keys.push_back(to_hex(kkey));
    any = true;
  }
  if (!any) return std::optional<LookupResult>{};
  for (const auto& [knob, _] : conflicting) {
    spdlog::debug("kernel entries disagree on {}; not applying it", knob);
    merged.controls.options.erase(knob);
  }
  if (acf_conflict) merged.controls.acf.reset();
  return std::optional<LookupResult>{std::move(merged)};
}

spaces::ControlSet target_kernels(const spaces::ControlSet& set, const cache::PtxModule& module,
                                 const std::string& glob) {
  if (glob.empty()) return set;
  spaces::ControlSet out;
  out.space = set.space;
  bool matched = false;
  for (const auto& kernel : module.kernel_names()) {
    if (!glob_match(glob, kernel)) continue;
    matched = true;
    if (auto it = set.kernels.find(kernel); it != set.kernels.end()) out.kernels[kernel] = it->second;
  }
  if (matched) {
    out.options = set.options;
    out.acf = set.acf;
  }
  return out;
}

} // namespace ciq::wrapper
