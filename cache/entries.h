// What every reader and writer of cache entries shares, so that the
// wrappers, ciq-cache and the tuner cannot disagree:
//   - one validator: an entry is used (applied, imported, merged, copied
//     from a team server) only if check_entry() passes it;
//   - one merit rule: when two entries compete for one key, better evidence
//     wins (record_merit);
//   - one record writer: a module's records (the module's and each
//     kernel's) are made by module_entries() and stored by write_entries()
//     in one transaction, each with its quarantine mark lifted;
//   - one record remover: remove_entries() takes records and their
//     quarantine marks away together, in one transaction (ciq-cache rm,
//     gc, verify --fix, retune --drop-losers, and a ship that leaves a
//     module entry behind its kernels' own); the store has no other way
//     to take an entry away.
#pragma once

#include "cache/gpu_policy.h"
#include "cache/record.h"
#include "cache/store.h"
#include "spaces/space.h"
#include "utils/hash.h"
#include "utils/result.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ciq::cache {

/// Spaces by name, read from a spaces directory once each.
class SpaceShelf {
public:
  explicit SpaceShelf(std::string directory) : dir_(std::move(directory)) {}
  Result<const spaces::Space*> get(const std::string& name);

private:
  std::string dir_;
  std::map<std::string, std::unique_ptr<spaces::Space>> loaded_;
};

/// What an entry must be to be used.
struct EntryRules {
  /// The running compiler's space: the record must be for it (a record
  /// without a space is taken to be). Asked for when an entry is first
  /// checked, so that a miss never reads a space file; an error or null
  /// (no space covers the compiler) refuses the entry. Unset: the space
  /// the record names, from `shelf`.
  std::function<Result<const spaces::Space*>()> running_space;
  SpaceShelf* shelf = nullptr;
  spaces::Policy policy;
  std::optional<RecordKind> kind; // the kind it is filed as; unset: any
  std::string kernel;             // for a kernel: the kernel it is filed for
  /// What the key was made from (the compile asking): a record whose own
  /// fields say another target, compiler version or set of codegen flags
  /// was filed under the wrong key and is refused. Unset: not checked
  /// (ciq-cache reading its own store, where the key is not rebuilt).
  struct KeyFields {
    std::string target;   // module and kernel records
    std::string compiler; // ptxas version (module, kernel) or nvcc version (unit)
    std::string flags;    // canonical codegen flags (module, kernel)
  };
  std::optional<KeyFields> key_fields;
  /// Whether the ACF blob a record names is at hand; null: not checked.
  std::function<bool(const Sha256&)> has_blob;
  /// CIQ_GPU_POLICY: under `same`, an entry verified on another GPU model
  /// is refused with the error code "other-gpu" (cache/gpu_policy.h).
  GpuRule gpu;
};

/// The record `text` filed under `key`, if it may be used under `rules`:
/// it parses, is what it is filed as, its space is the one required (or
/// exists), its knobs and values are allowed by that space and the policy,
/// and its ACF blob is there. The error says why not, naming the key.
Result<Record> check_entry(std::string_view text, const Hash128& key, const EntryRules& rules);

/// Better evidence wins: whether `incoming` should replace the record
/// `existing_text` filed under the same key (an unreadable one always is).
bool replaces(const Record& incoming, std::string_view existing_text);

/// A record and the key it is filed under.
struct Entry {
  Hash128 key;
  Record record;
};

/// The keys of one module's entries: the module's, and each kernel's.
struct ModuleKeys {
  Hash128 module;
  std::vector<std::pair<std::string, Hash128>> kernels; // name, key
};

/// The records that file `controls` for one module: the module record
/// (directives for kernels it does not hold dropped), then one record per
/// kernel of `keys`. A kernel whose part of `controls` is empty gets a
/// record only when `tuned` (a tuning run found the default best for it);
/// `base` gives every record's target, versions, flags and provenance.
std::vector<Entry> module_entries(const Record& base, const spaces::ControlSet& controls, const ModuleKeys& keys,
                                  bool tuned);

/// Stores records (as text, filed by key, each one's quarantine mark
/// lifted) and blobs in one transaction: all or nothing.
Result<void> write_entries(Store& store, const std::vector<std::pair<Hash128, std::string>>& records,
                           const std::map<Sha256, std::string>& blobs = {});
Result<void> write_entries(Store& store, const std::vector<Entry>& entries,
                           const std::map<Sha256, std::string>& blobs = {});

/// The changes that take the entry under `raw_key` (16 bytes) away: its
/// record and its quarantine mark (for a caller that adds them to a larger
/// transaction).
std::vector<Change> entry_removal(std::string_view raw_key);

/// Removes the entries under `raw_keys` (records and quarantine marks) in
/// one transaction: all or nothing.
Result<void> remove_entries(Store& store, const std::vector<std::string>& raw_keys);

} // namespace ciq::cache
