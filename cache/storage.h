// Where tuned entries are read from, behind one interface, in the spirit of
// ccache's storage/ and sccache's read-only tiers. Three backends:
//
//   local   the LMDB cache (<cache dir>/db), read and written;
//   pack    a pack file (CIQ_PACKS), read-only, through an LMDB index under
//           <cache dir>/packs/ built once per pack content;
//   remote  the team's Redis (CIQ_REMOTE), read-through: what it answers is
//           copied into the local cache.
//
// One lookup tries them in that order. Every entry found anywhere passes the
// one validator (check_entry: kind, space, knobs, values, ACF blob) before
// it counts; a refused entry counts as absent. A backend that fails is
// marked dead and not asked again by this process; only the local cache's
// failure is the caller's error (it decides whether to go on).
#pragma once

#include "cache/counters.h"
#include "cache/entries.h"
#include "cache/key.h"
#include "cache/ptx.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "spaces/control_set.h"
#include "utils/hash.h"
#include "utils/result.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ciq::cache {

enum class Tier { local, pack, remote };
/// "cache", "pack", "remote": as counters and traces name them.
std::string_view tier_name(Tier tier);

/// One place entries are read from.
class Backend {
public:
  virtual ~Backend() = default;
  virtual Tier tier() const = 0;
  /// For messages: "the cache", "pack FILE", "redis://HOST:PORT".
  virtual std::string describe() const = 0;
  /// The record text filed under `key`; std::nullopt when there is none or
  /// it is quarantined here.
  virtual Result<std::optional<std::string>> get(const Hash128& key) = 0;
  virtual Result<std::optional<std::string>> get_blob(const Sha256& digest) = 0;
  /// Marks entries found here as not to be used again; backends that
  /// cannot hold marks (remote) say so.
  virtual Result<void> quarantine(const std::vector<Hash128>& keys, const std::string& why) = 0;
};

/// The local cache: opened read-only when first asked, reopened writable
/// when written (LMDB allows one environment per file and process).
class LocalBackend final : public Backend {
public:
  explicit LocalBackend(std::string cache_dir) : dir_(std::move(cache_dir)) {}
  Tier tier() const override { return Tier::local; }
  std::string describe() const override { return "the cache"; }
  Result<std::optional<std::string>> get(const Hash128& key) override;
  Result<std::optional<std::string>> get_blob(const Sha256& digest) override;
  Result<void> quarantine(const std::vector<Hash128>& keys, const std::string& why) override;
  /// Stores records and blobs in one transaction (write_entries).
  Result<void> write(const std::vector<std::pair<Hash128, std::string>>& records, const std::map<Sha256, std::string>& blobs);

private:
  Result<const Store*> reader();
  Result<Store*> writer();
  std::string dir_;
  std::optional<Store> store_;
  bool opened_ = false, writable_ = false;
};

/// The tiers, and the one lookup over them.
class Storage {
public:
  /// The local cache only.
  explicit Storage(std::string cache_dir);
  /// The local cache, then each pack of CIQ_PACKS, then CIQ_REMOTE (with
  /// CIQ_REMOTE_TIMEOUT_MS): the wrappers' tiers. A bad CIQ_REMOTE is
  /// warned about and left out.
  static Storage from_environment(const std::string& cache_dir);

  /// Whether a lookup could find anything: a local store exists, or packs
  /// or a remote are configured. False lets a wrapper skip reading its input.
  bool anything_to_read() const;

  /// What a lookup found.
  struct Hit {
    spaces::ControlSet controls;
    std::vector<Hash128> keys;  // the entries that contributed (kernel entries: those that set something)
    RecordKind matched = RecordKind::module; // the kind of entry that answered
    Tier tier = Tier::local;
    std::string where;          // the backend, for messages
    std::size_t backend = 0;    // which of the storage's backends answered
    std::map<Sha256, std::string> blobs; // the ACF blob it names, checked
  };

  /// The controls filed for `module`: its module entry, else each kernel's
  /// entry, merged (options two kernels set differently are dropped, as is
  /// an ACF they disagree on). A module entry that sets nothing ("tuned, no
  /// gain") answers only where its kernels' entries set nothing or cannot
  /// be merged. Tier by tier (a tier that answers ends the lookup), each entry
  /// checked under `rules` (kind and kernel filled in here). An error only
  /// when the local cache cannot be read.
  Result<std::optional<Hit>> find_module(const PtxModule& module, const KeyContext& context, EntryRules rules);
  /// The record the local cache answers under `key` (quarantined: none),
  /// whatever other tiers hold: what a build stamp follows (cache/stamps.h).
  Result<std::optional<std::string>> local_text(const Hash128& key);
  /// The NVVM-stage entry of one translation unit.
  Result<std::optional<Hit>> find_unit(const Hash128& key, EntryRules rules);
  /// Marks those of `keys` that hold an entry quarantined where `hit` was
  /// found (a remote hit: in the local copies).
  void quarantine(const Hit& hit, const std::vector<Hash128>& keys, const std::string& why);

  /// What a lookup met on its way, for the counters.
  enum class Event { pack_hit, pack_refused, remote_hit, remote_error, remote_refused, rejected, gpu_refused, gpu_other_model };
  const std::vector<Event>& events() const { return events_; }
  /// Why entries were refused, in order (the trace shows the last).
  const std::vector<std::string>& refusals() const { return refusals_; }

private:
  void add(std::unique_ptr<Backend> backend) {
    backends_.push_back(std::move(backend));
    dead_.push_back(false);
  }
  struct Wanted {
    Hash128 key;
    RecordKind kind;
    std::string kernel;
  };
  Result<std::optional<Hit>> find(const std::vector<Wanted>& wanted, const EntryRules& rules);
  /// The lookup in backend `i` alone; an error when the backend broke.
  Result<std::optional<Hit>> find_in(std::size_t i, const std::vector<Wanted>& wanted, const EntryRules& rules,
                                     std::vector<std::pair<Hash128, std::string>>& texts);
  /// The record under `w` in backend `i` if it passes `rules` (its blob
  /// fetched into `blobs`); std::nullopt when absent or refused.
  Result<std::optional<Record>> checked(std::size_t i, const Wanted& w, EntryRules rules,
                                        std::map<Sha256, std::string>& blobs, std::string* text);
  /// Counts and logs an entry (or a merged set) that may not be used.
  void refuse(const Backend& from, const std::string& why);

  std::string cache_dir_;
  std::vector<std::unique_ptr<Backend>> backends_; // local first
  std::vector<bool> dead_;
  std::vector<Event> events_;
  std::vector<std::string> refusals_;
};

/// Adds what `storage` met (pack and remote hits, refusals, errors) to `tally`.
void count_events(const Storage& storage, Tally& tally);

/// The read-only index of a pack file (CIQ_PACKS), built under
/// <cache_dir>/packs/ the first time this content is seen.
std::unique_ptr<Backend> pack_backend(const std::string& cache_dir, const std::string& pack_path);
/// The team's Redis, connected when first asked; the whole exchange of one
/// process stays within connect + 2 x reply timeout.
std::unique_ptr<Backend> remote_backend(const RemoteConfig& config);

} // namespace ciq::cache
