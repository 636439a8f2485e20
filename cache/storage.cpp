#include "cache/storage.h"

#include "cache/pack.h"
#include "cache/pack_index.h"
#include "cache/tuned_on.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <cstdio>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::cache {

std::string_view tier_name(Tier tier) {
  switch (tier) {
  case Tier::local: return "cache";
  case Tier::pack: return "pack";
  case Tier::remote: return "remote";
  }
  return "";
}

namespace {

// A record under `key` in `store`, unless its quarantine mark says no.
Result<std::optional<std::string>> unquarantined(const Store& store, const Hash128& key) {
  std::string k = digest_bytes(key);
  auto text = store.get(Table::records, k);
  if (!text || !*text) return text;
  auto mark = store.get(Table::quarantine, k);
  if (!mark) return mark.error();
  if (*mark) {
    spdlog::debug("entry {} is quarantined: {}", to_hex(key), **mark);
    return std::optional<std::string>{};
  }
  return text;
}

// Marks those of `keys` that hold a record in `store`.
Result<void> mark_quarantined(Store& store, const std::vector<Hash128>& keys, const std::string& why) {
  std::vector<Change> marks;
  for (const auto& key : keys) {
    auto present = store.get(Table::records, digest_bytes(key));
    if (!present) return present.error();
    if (*present) marks.push_back({Table::quarantine, digest_bytes(key), utc_now() + " " + why});
  }
  return store.apply(marks);
}

// A pack, read through its index (cache/pack_index.h); a pack whose index
// is still being built answers nothing yet.
class PackBackend final : public Backend {
public:
  PackBackend(std::string cache_dir, std::string pack) : cache_dir_(std::move(cache_dir)), pack_(std::move(pack)) {}
  Tier tier() const override { return Tier::pack; }
  std::string describe() const override { return "pack " + pack_; }
  Result<std::optional<std::string>> get(const Hash128& key) override {
    auto store = index();
    if (!store) return store.error();
    if (!*store) return std::optional<std::string>{};
    return unquarantined(**store, key);
  }
  Result<std::optional<std::string>> get_blob(const Sha256& digest) override {
    auto store = index();
    if (!store) return store.error();
    if (!*store) return std::optional<std::string>{};
    return (*store)->get(Table::blobs, digest_bytes(digest));
  }
  Result<void> quarantine(const std::vector<Hash128>& keys, const std::string& why) override {
    store_.reset(); // reopened writable: one environment per file and process
    auto store = Store::open_for_writing(dir_, k_brief_write_wait);
    if (!store) return store.error();
    return mark_quarantined(*store, keys, why);
  }

private:
  // The index, opened once; null while it is being built.
  Result<const Store*> index() {
    if (store_) return &*store_;
    auto dir = pack_index(cache_dir_, pack_);
    if (!dir) return dir.error();
    if (!*dir) return nullptr;
    dir_ = **dir;
    auto store = Store::open_for_reading(dir_);
    if (!store) return store.error();
    if (!*store) return make_error("io", "the index of " + pack_ + " is missing");
    store_.emplace(std::move(**store));
    return &*store_;
  }
  std::string cache_dir_, pack_, dir_;
  std::optional<Store> store_;
};

class RemoteBackend final : public Backend {
public:
  explicit RemoteBackend(RemoteConfig config) : config_(std::move(config)) {
    // The whole exchange, not each reply, is bounded: connect plus two reply
    // timeouts, however many kernels the module has, name resolution,
    // AUTH, SELECT and ACF blobs included.
    config_.timeouts.total_ms = config_.timeouts.connect_ms + 2 * config_.timeouts.io_ms;
  }
  Tier tier() const override { return Tier::remote; }
  std::string describe() const override {
    return "redis://" + config_.url.host + ":" + std::to_string(config_.url.port);
  }
  Result<std::optional<std::string>> get(const Hash128& key) override {
    auto c = client();
    if (!c) return c.error();
    return (*c)->get(remote_record_key(to_hex(key)), k_max_record_bytes);
  }
  Result<std::optional<std::string>> get_blob(const Sha256& digest) override {
    auto c = client();
    if (!c) return c.error();
    return (*c)->get(remote_blob_key(to_hex(digest)), k_max_blob_bytes);
  }
  Result<void> quarantine(const std::vector<Hash128>&, const std::string&) override {
    return make_error("invalid", "a team server holds no quarantine marks");
  }

private:
  Result<RedisClient*> client() {
    if (!client_) {
      auto connected = RedisClient::connect(config_.url, config_.timeouts);
      if (!connected) return connected.error();
      client_.emplace(std::move(*connected));
    }
    return &*client_;
  }
  RemoteConfig config_;
  std::optional<RedisClient> client_;
};

} // namespace

std::unique_ptr<Backend> pack_backend(const std::string& cache_dir, const std::string& pack_path) {
  return std::make_unique<PackBackend>(cache_dir, pack_path);
}

std::unique_ptr<Backend> remote_backend(const RemoteConfig& config) { return std::make_unique<RemoteBackend>(config); }

// ---- the local cache ----

Result<const Store*> LocalBackend::reader() {
  if (!opened_) {
    auto store = Store::open_for_reading(dir_);
    if (!store) return store.error();
    opened_ = true;
    if (*store) store_.emplace(std::move(**store));
  }
  return store_ ? &*store_ : nullptr;
}

// LMDB writes through a shared memory map: where the file system has no
// room for a page it touches, the process gets SIGBUS, not ENOSPC (seen in
// the fault matrix: a remote hit's read-through copy into a cache on a full
// tmpfs crashed ciq-ptxas, whose crash handler then ran plain ptxas without
// the hit). The wrappers' few small writes stay well under this margin.
constexpr std::uint64_t k_write_margin = 4u << 20;

Result<Store*> LocalBackend::writer() {
  if (!writable_) {
    if (auto room = free_bytes(dir_); room && *room < k_write_margin)
      return make_error("io", "only " + std::to_string(*room >> 10) + " KiB free on the file system of " + dir_ +
                                  " (a write needs " + std::to_string(k_write_margin >> 20) + " MiB)");
    store_.reset(); // one environment per file and process: reopen it writable
    auto store = Store::open_for_writing(dir_, k_brief_write_wait);
    if (!store) {
      opened_ = false;
      return store.error();
    }
    store_.emplace(std::move(*store));
    opened_ = writable_ = true;
  }
  return &*store_;
}

Result<std::optional<std::string>> LocalBackend::get(const Hash128& key) {
  auto store = reader();
  if (!store) return store.error();
  if (!*store) return std::optional<std::string>{}; // no cache yet: a miss
  return unquarantined(**store, key);
}

Result<std::optional<std::string>> LocalBackend::get_blob(const Sha256& digest) {
  auto store = reader();
  if (!store) return store.error();
  if (!*store) return std::optional<std::string>{};
  return (*store)->get(Table::blobs, digest_bytes(digest));
}

Result<void> LocalBackend::quarantine(const std::vector<Hash128>& keys, const std::string& why) {
  auto store = writer();
  if (!store) return store.error();
  return mark_quarantined(**store, keys, why);
}

Result<void> LocalBackend::write(const std::vector<std::pair<Hash128, std::string>>& records,
                                 const std::map<Sha256, std::string>& blobs) {
  auto store = writer();
  if (!store) return store.error();
  return write_entries(**store, records, blobs);
}

// ---- the tiers ----

Result<std::optional<std::string>> Storage::local_text(const Hash128& key) { return backends_.front()->get(key); }

Storage::Storage(std::string cache_dir) : cache_dir_(cache_dir) { add(std::make_unique<LocalBackend>(cache_dir)); }

Storage Storage::from_environment(const std::string& cache_dir) {
  Storage s(cache_dir);
  std::string packs = env(Env::packs);
  for (auto p : split(packs, ':'))
    if (!p.empty()) s.add(pack_backend(cache_dir, std::string(p)));
  if (std::string url = env(Env::remote); !url.empty()) {
    auto config = remote_config(url, env(Env::remote_timeout_ms));
    if (!config) {
      spdlog::warn("CIQ_REMOTE: {}", config.error().message);
      s.events_.push_back(Event::remote_error);
    } else {
      s.add(remote_backend(*config));
    }
  }
  return s;
}

bool Storage::anything_to_read() const { return backends_.size() > 1 || Store::exists(cache_dir_); }

Result<std::optional<Storage::Hit>> Storage::find_module(const PtxModule& module, const KeyContext& context,
                                                         EntryRules rules) {
  std::vector<Wanted> wanted{{module_key(module, context), RecordKind::module, ""}};
  for (const auto& kernel : module.kernel_names()) wanted.push_back({kernel_key(module, kernel, context), RecordKind::kernel, kernel});
  return find(wanted, rules);
}

Result<std::optional<Storage::Hit>> Storage::find_unit(const Hash128& key, EntryRules rules) {
  return find({{key, RecordKind::unit, ""}}, rules);
}

Result<std::optional<Storage::Hit>> Storage::find(const std::vector<Wanted>& wanted, const EntryRules& rules) {
  for (std::size_t i = 0; i < backends_.size(); ++i) {
    if (dead_[i]) continue;
    std::vector<std::pair<Hash128, std::string>> texts;
    auto hit = find_in(i, wanted, rules, texts);
    if (!hit) {
      dead_[i] = true;
      Tier tier = backends_[i]->tier();
      if (tier == Tier::local) return hit.error(); // the caller decides
      spdlog::warn("{}: {}", tier == Tier::remote ? "CIQ_REMOTE" : "ignoring " + backends_[i]->describe(),
                   hit.error().message);
      events_.push_back(tier == Tier::remote ? Event::remote_error : Event::pack_refused);
      continue;
    }
    if (!*hit) continue;
    if ((*hit)->tier == Tier::pack) events_.push_back(Event::pack_hit);
    if ((*hit)->tier == Tier::remote) {
      events_.push_back(Event::remote_hit);
      // Read-through: the local cache answers next time.
      auto& local = static_cast<LocalBackend&>(*backends_[0]);
      if (auto w = local.write(texts, (*hit)->blobs); !w)
        spdlog::warn("cannot copy the entries from {} into the cache: {}", (*hit)->where, w.error().message);
      else spdlog::debug("copied {} entr{} from {}", texts.size(), texts.size() == 1 ? "y" : "ies", (*hit)->where);
    }
    return hit;
  }
  return std::optional<Hit>{};
}

Result<std::optional<Record>> Storage::checked(std::size_t i, const Wanted& w, EntryRules rules,
                                               std::map<Sha256, std::string>& blobs, std::string* text) {
  Backend& backend = *backends_[i];
  auto found = backend.get(w.key);
  if (!found) return found.error();
  if (!*found) return std::optional<Record>{};
  rules.kind = w.kind;
  rules.kernel = w.kernel;
  std::optional<Error> broke;
  rules.has_blob = [&](const Sha256& digest) {
    auto blob = backend.get_blob(digest);
    if (!blob) {
      broke = blob.error();
      return false;
    }
    if (!*blob || sha256(**blob) != digest) return false; // missing or damaged
    blobs[digest] = std::move(**blob);
    return true;
  };
  auto record = check_entry(**found, w.key, rules);
  if (broke) return *broke;
  if (!record && record.error().code == ciq::errc::other_gpu) { // CIQ_GPU_POLICY=same: passed over, like a miss
    spdlog::info("{}", record.error().message);
    events_.push_back(Event::gpu_refused);
    return std::optional<Record>{};
  }
  if (record && rules.gpu.policy == GpuPolicy::warn && verified_elsewhere(rules.gpu, *record)) {
    spdlog::warn("entry {} was verified on {}, not on {} (CIQ_GPU_POLICY=warn): applying it", to_hex(w.key),
                 tuned_on(*record).gpu_model, rules.gpu.model);
    events_.push_back(Event::gpu_other_model);
  }
  if (!record) {
    refuse(backend, record.error().message);
    return std::optional<Record>{};
  }
  *text = std::move(**found);
  return std::optional<Record>{std::move(*record)};
}

Result<std::optional<Storage::Hit>> Storage::find_in(std::size_t i, const std::vector<Wanted>& wanted,
                                                     const EntryRules& rules,
                                                     std::vector<std::pair<Hash128, std::string>>& texts) {
  Hit hit;
  hit.tier = backends_[i]->tier();
  hit.where = backends_[i]->describe();
  hit.backend = i;
  std::map<std::string, bool> conflicting;
  bool any = false, acf_conflict = false;
  // A module entry that sets nothing ("tuned, no gain": a run found nothing
  // for the module as a whole) does not hide its kernels' own entries:
  // another run's winners, or a teammate's imported, each verified by its
  // own run (a kernel-time run times the module's other kernels too, so a
  // module-wide option in a winner did not slow them). They answer as they
  // would without it, as they do when the module entry is only in a pack
  // (a tester saw an imported no-gain entry silently disable a verified
  // winner that a pack left applied, when their module-wide options were
  // held back here). The module entry answers where they set nothing, or
  // cannot be merged.
  std::optional<Hit> module_no_gain;
  for (const auto& w : wanted) {
    std::string text;
    auto record = checked(i, w, rules, hit.blobs, &text);
    if (!record) return record.error();
    if (!*record) continue;
    texts.emplace_back(w.key, std::move(text));
    if (w.kind == RecordKind::module && (*record)->controls.empty() && wanted.size() > 1) {
      module_no_gain = hit;
      module_no_gain->keys = {w.key};
      module_no_gain->matched = w.kind;
      continue;
    }
    if (w.kind != RecordKind::kernel) { // a module or unit entry answers alone
      hit.keys.push_back(w.key);
      hit.controls = std::move((*record)->controls);
      hit.matched = w.kind;
      return std::optional<Hit>{std::move(hit)};
    }
    spaces::ControlSet part = (*record)->controls.for_kernel(w.kernel);
    if (!part.empty()) hit.keys.push_back(w.key); // what set nothing made nothing (a failure quarantines what did)
    for (const auto& [knob, value] : part.options) {
      auto [it, inserted] = hit.controls.options.emplace(knob, value);
      if (!inserted && it->second != value) conflicting[knob] = true;
    }
    for (auto& [k, knobs] : part.kernels) hit.controls.kernels[k] = knobs;
    if (part.acf) {
      if (hit.controls.acf && hit.controls.acf != part.acf) acf_conflict = true;
      hit.controls.acf = part.acf;
    }
    hit.controls.space = part.space;
    any = true;
  }
  if (!any) return module_no_gain;
  hit.matched = RecordKind::kernel;
  for (const auto& [knob, _] : conflicting) {
    spdlog::debug("kernel entries disagree on {}; not applying it", knob);
    hit.controls.options.erase(knob);
  }
  if (acf_conflict) hit.controls.acf.reset();
  if (module_no_gain && hit.controls.empty()) return module_no_gain;
  // Each entry passed alone; the merged set must pass too (two kernels'
  // options may be a pair the space marks as conflicting).
  if (hit.keys.size() > 1 && rules.running_space) {
    auto space = rules.running_space();
    if (space && *space)
      if (auto valid = spaces::validate_controls(**space, hit.controls, rules.policy); !valid) {
        refuse(*backends_[i], "the merged kernel entries: " + valid.error().message);
        return module_no_gain; // what this tier says of the module, if anything
      }
  }
  return std::optional<Hit>{std::move(hit)};
}

void Storage::refuse(const Backend& from, const std::string& why) {
  spdlog::warn("refused an entry from {}: {}", from.describe(), why);
  refusals_.push_back(why);
  events_.push_back(from.tier() == Tier::remote ? Event::remote_refused : Event::rejected);
}

void Storage::quarantine(const Hit& hit, const std::vector<Hash128>& keys, const std::string& why) {
  // A remote hit was copied into the local cache: its copies are marked.
  std::size_t i = hit.tier == Tier::remote ? 0 : hit.backend;
  if (auto r = backends_[i]->quarantine(keys, why); !r)
    spdlog::warn("cannot quarantine: {}", r.error().message);
}

void count_events(const Storage& storage, Tally& tally) {
  // Refusals count compiles that met one, not entries.
  bool rejected = false, remote_refused = false;
  for (auto e : storage.events()) {
    switch (e) {
    case Storage::Event::pack_hit: tally.add(Counter::pack_hit); break;
    case Storage::Event::pack_refused: tally.add(Counter::pack_refused); break;
    case Storage::Event::remote_hit: tally.add(Counter::remote_hit); break;
    case Storage::Event::remote_error: tally.add(Counter::remote_error); break;
    case Storage::Event::remote_refused: remote_refused = true; break;
    case Storage::Event::rejected: rejected = true; break;
    case Storage::Event::gpu_refused: tally.add(Counter::gpu_refused); break;
    case Storage::Event::gpu_other_model: tally.add(Counter::gpu_other_model); break;
    }
  }
  if (rejected) tally.add(Counter::rejected);
  if (remote_refused) tally.add(Counter::remote_refused);
}

} // namespace ciq::cache
