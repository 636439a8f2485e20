#include "cache/entries.h"

#include "cache/tuned_on.h"

#include <algorithm>

namespace ciq::cache {

Result<const spaces::Space*> SpaceShelf::get(const std::string& name) {
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second.get();
  auto space = spaces::load_space(dir_, name);
  if (!space) return make_error("invalid", "unknown space '" + name + "'");
  auto& slot = loaded_[name];
  slot = std::make_unique<spaces::Space>(std::move(*space));
  return slot.get();
}

Result<Record> check_entry(std::string_view text, const Hash128& key, const EntryRules& rules) {
  std::string hex = to_hex(key);
  auto bad = [&](const std::string& why) { return make_error("invalid", "entry " + hex + ": " + why); };
  auto record = parse_record(text, "entry " + hex);
  if (!record) return make_error("invalid", record.error().message);
  if (rules.kind && (record->kind != *rules.kind || (*rules.kind == RecordKind::kernel && record->kernel != rules.kernel)))
    return bad("it is not the " + std::string(kind_name(*rules.kind)) + " record it is filed under");
  if (rules.key_fields) {
    const auto& k = *rules.key_fields;
    auto differs = [&](std::string_view field, const std::string& own, const std::string& key_made_for) {
      return bad("it says " + std::string(field) + " = '" + own + "', its key is for '" + key_made_for +
                 "' (filed under the wrong key)");
    };
    if (record->kind == RecordKind::unit) {
      if (record->nvcc != k.compiler) return differs("nvcc", record->nvcc, k.compiler);
    } else {
      if (record->target != k.target) return differs("target", record->target, k.target);
      if (record->ptxas != k.compiler) return differs("ptxas", record->ptxas, k.compiler);
      if (record->flags != k.flags) return differs("flags", record->flags, k.flags);
    }
  }
  const spaces::Space* space = nullptr;
  if (rules.running_space) {
    auto running = rules.running_space();
    if (!running) return bad(running.error().message);
    if (!*running) return bad("no knob space covers the running compiler");
    space = *running;
    if (record->controls.space.empty()) record->controls.space = space->name;
    if (record->controls.space != space->name)
      return bad("it is for space '" + record->controls.space + "', the running compiler uses '" + space->name + "'");
  } else {
    if (!rules.shelf) return bad("no space to check it against");
    auto named = rules.shelf->get(record->controls.space);
    if (!named) return bad(named.error().message);
    space = *named;
  }
  // An unsafe knob the policy refuses keeps its code (errc::unsafe): the
  // cache's commands then say how the wrappers would allow it.
  if (auto valid = spaces::validate_controls(*space, record->controls, rules.policy); !valid)
    return make_error(valid.error().code == ciq::errc::unsafe ? ciq::errc::unsafe : "invalid", "entry " + hex + ": " + valid.error().message);
  if (record->controls.acf && rules.has_blob && !rules.has_blob(*record->controls.acf))
    return bad("its ACF blob " + to_hex(*record->controls.acf).substr(0, 12) + " is missing");
  // Last: the entry is valid, only not for this GPU (a miss, not a fault).
  if (rules.gpu.policy == GpuPolicy::same && verified_elsewhere(rules.gpu, *record))
    return make_error(ciq::errc::other_gpu, "entry " + hex + ": verified on " + tuned_on(*record).gpu_model + ", not on " + rules.gpu.model +
                                       " (CIQ_GPU_POLICY=same)");
  return record;
}

bool replaces(const Record& incoming, std::string_view existing_text) {
  auto existing = parse_record(existing_text, "existing record");
  return !existing || record_merit(incoming) > record_merit(*existing);
}

std::vector<Entry> module_entries(const Record& base, const spaces::ControlSet& controls, const ModuleKeys& keys,
                                  bool tuned) {
  std::vector<Entry> out;
  Entry whole{keys.module, base};
  whole.record.kind = RecordKind::module;
  whole.record.controls = controls;
  auto& directives = whole.record.controls.kernels;
  for (auto it = directives.begin(); it != directives.end();) {
    bool held = std::any_of(keys.kernels.begin(), keys.kernels.end(), [&](const auto& k) { return k.first == it->first; });
    it = held ? std::next(it) : directives.erase(it);
  }
  out.push_back(std::move(whole));
  for (const auto& [name, key] : keys.kernels) {
    spaces::ControlSet part = controls.for_kernel(name);
    if (!tuned && part.options.empty() && part.kernels.empty() && !part.acf) continue;
    Entry e{key, base};
    e.record.kind = RecordKind::kernel;
    e.record.kernel = name;
    e.record.controls = std::move(part);
    out.push_back(std::move(e));
  }
  return out;
}

Result<void> write_entries(Store& store, const std::vector<std::pair<Hash128, std::string>>& records,
                           const std::map<Sha256, std::string>& blobs) {
  std::vector<Change> changes;
  for (const auto& [digest, bytes] : blobs) changes.push_back({Table::blobs, digest_bytes(digest), bytes});
  for (const auto& [key, text] : records) {
    changes.push_back({Table::records, digest_bytes(key), text});
    changes.push_back({Table::quarantine, digest_bytes(key), std::nullopt}); // a fresh entry starts clean
  }
  return store.apply(changes);
}

std::vector<Change> entry_removal(std::string_view raw_key) {
  return {Change{Table::records, std::string(raw_key), std::nullopt}, Change{Table::quarantine, std::string(raw_key), std::nullopt}};
}

Result<void> remove_entries(Store& store, const std::vector<std::string>& raw_keys) {
  std::vector<Change> changes;
  for (const auto& k : raw_keys)
    for (auto& c : entry_removal(k)) changes.push_back(std::move(c));
  if (changes.empty()) return {};
  return store.apply(changes);
}

Result<void> write_entries(Store& store, const std::vector<Entry>& entries, const std::map<Sha256, std::string>& blobs) {
  std::vector<std::pair<Hash128, std::string>> records;
  for (const auto& e : entries) records.emplace_back(e.key, format_record(e.record));
  return write_entries(store, records, blobs);
}

} // namespace ciq::cache
