#include "cache/cli/packs.h"

#include "cache/acf_candidates.h"
#include "cache/entries.h"
#include "cache/pack.h"
#include "cache/record.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "spaces/space.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/text.h"

#include <cmath>
#include <cstdlib>
#include <map>

namespace ciq::cache::cli {

namespace {

// Checks one incoming entry as the wrappers would before applying it (the
// space it names, default policy), its ACF in the pack or the cache.
Result<Record> checked_record(const Hash128& key, const std::string& text, const std::map<Sha256, std::string>& blobs,
                              const std::optional<Store>& local, SpaceShelf& shelf) {
  EntryRules rules;
  rules.shelf = &shelf;
  rules.has_blob = [&](const Sha256& digest) {
    if (blobs.count(digest)) return true;
    auto b = local ? local->get(Table::blobs, digest_bytes(digest)) : Result<std::optional<std::string>>(std::nullopt);
    return b && *b;
  };
  return check_entry(text, key, rules);
}

Result<Pack> read_pack(const std::string& file) {
  auto text = read_file(file);
  if (!text) return text.error();
  return parse_pack(*text, file);
}

Result<void> write_output(const std::string& output, const std::string& text, std::ostream& out) {
  if (output.empty() || output == "-") {
    out << text;
    return {};
  }
  return write_file_atomic(output, text);
}

} // namespace

Result<void> export_pack(const std::string& cache_dir, const ExportFilter& f, const std::string& output, std::ostream& out) {
  if (output.empty()) return make_error("invalid", "export needs -o FILE (or -o - for stdout)");
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  Pack pack;
  if (*store) {
    Result<void> bad;
    auto r = (*store)->for_each(Table::records, [&](std::string_view k, std::string_view v) {
      auto rec = parse_record(v, "record " + bytes_to_hex(k));
      if (!rec) {
        bad = make_error("invalid", rec.error().message + " (run 'ciq-cache verify --fix' first)");
        return false;
      }
      if (!f.kernels.empty()) {
        bool match = rec->kind == "kernel" && glob_match(f.kernels, rec->kernel);
        for (const auto& [kernel, _] : rec->controls.kernels) match = match || glob_match(f.kernels, kernel);
        if (!match) return true;
      }
      if (!f.space.empty() && rec->controls.space != f.space) return true;
      if (!f.gpu.empty() && rec->provenance_value("gpu").find(f.gpu) == std::string::npos) return true;
      if (!f.since.empty() && rec->created < f.since) return true;
      Hash128 key;
      std::copy(k.begin(), k.end(), key.begin());
      pack.entries.emplace(key, std::string(v));
      if (rec->controls.acf) {
        auto blob = (*store)->get(Table::blobs, digest_bytes(*rec->controls.acf));
        if (blob && *blob) pack.blobs.emplace(*rec->controls.acf, **blob);
      }
      return true;
    });
    if (!r) return r;
    if (!bad) return bad;
  }
  if (auto w = write_output(output, format_pack(pack), out); !w) return w;
  if (output != "-")
    out << "exported " << pack.entries.size() << " entr" << (pack.entries.size() == 1 ? "y" : "ies") << " and "
        << pack.blobs.size() << " blob(s) to " << output << "\n";
  return {};
}

Result<void> import_pack(const std::string& cache_dir, const std::string& file, bool dry_run, bool json, std::ostream& out) {
  auto pack = read_pack(file);
  if (!pack) return pack.error();
  std::optional<Store> local;
  if (auto opened = Store::open_for_reading(cache_dir); opened && *opened) local.emplace(std::move(**opened));
  SpaceShelf shelf(spaces_directory());
  struct Action { std::string key, what; };
  std::vector<Action> actions;
  std::vector<std::pair<Hash128, std::string>> writes;
  for (const auto& [key, text] : pack->entries) {
    auto incoming = checked_record(key, text, pack->blobs, local, shelf);
    if (!incoming) return make_error("invalid", "refusing " + file + ": " + incoming.error().message);
    std::optional<std::string> existing;
    if (local) {
      auto e = local->get(Table::records, digest_bytes(key));
      if (!e) return e.error();
      existing = *e;
    }
    std::string hex = to_hex(key);
    if (!existing) {
      actions.push_back({hex, "added"});
      writes.emplace_back(key, text);
    } else if (*existing == text) {
      actions.push_back({hex, "unchanged"});
    } else if (replaces(*incoming, *existing)) {
      actions.push_back({hex, "replaced (the pack's result is better)"});
      writes.emplace_back(key, text);
    } else {
      actions.push_back({hex, "kept (the local result is better)"});
    }
  }
  if (!dry_run && !writes.empty()) {
    local.reset();
    auto store = Store::open_for_writing(cache_dir);
    if (!store) return store.error();
    // One transaction: an import that fails half-way leaves nothing behind.
    if (auto r = write_entries(*store, writes, pack->blobs); !r) return r;
  }
  for (const auto& a : actions) {
    if (json) out << "{\"key\":" << json_string(a.key) << ",\"action\":" << json_string(a.what) << "}\n";
    else out << a.key << "  " << a.what << "\n";
  }
  if (!json)
    out << (dry_run ? "dry run: would write " : "wrote ") << writes.size() << " of " << actions.size() << " entries from "
        << file << "\n";
  return {};
}

Result<void> merge_packs(const std::string& a, const std::string& b, const std::string& output, std::ostream& out) {
  if (output.empty()) return make_error("invalid", "merge needs -o FILE");
  auto pa = read_pack(a);
  if (!pa) return pa.error();
  auto pb = read_pack(b);
  if (!pb) return pb.error();
  SpaceShelf shelf(spaces_directory());
  std::optional<Store> none;
  Pack merged = *pa;
  for (const auto& [key, text] : pa->entries)
    if (auto r = checked_record(key, text, pa->blobs, none, shelf); !r) return make_error("invalid", "refusing " + a + ": " + r.error().message);
  int replaced = 0;
  for (const auto& [key, text] : pb->entries) {
    auto incoming = checked_record(key, text, pb->blobs, none, shelf);
    if (!incoming) return make_error("invalid", "refusing " + b + ": " + incoming.error().message);
    auto it = merged.entries.find(key);
    if (it == merged.entries.end()) {
      merged.entries.emplace(key, text);
    } else if (it->second != text && replaces(*incoming, it->second)) {
      it->second = text;
      ++replaced;
    }
  }
  merged.blobs.insert(pb->blobs.begin(), pb->blobs.end());
  // Keep only the blobs some entry still uses.
  std::map<Sha256, std::string> used;
  for (const auto& [key, text] : merged.entries)
    if (auto r = parse_record(text, to_hex(key)); r && r->controls.acf && merged.blobs.count(*r->controls.acf))
      used.emplace(*r->controls.acf, merged.blobs.at(*r->controls.acf));
  merged.blobs = std::move(used);
  if (auto w = write_output(output, format_pack(merged), out); !w) return w;
  out << "merged " << pa->entries.size() << " + " << pb->entries.size() << " entries into " << merged.entries.size()
      << " (" << replaced << " replaced by a better result) in " << output << "\n";
  return {};
}

Result<void> push_cache(const std::string& cache_dir, const std::string& url, std::ostream& out) {
  auto report = cache::push_cache(cache_dir, url, {});
  if (!report) return report.error();
  if (!report->cache_found) {
    out << "nothing to push: no cache at " << cache_dir << "\n";
    return {};
  }
  out << "pushed " << report->pushed << " entr" << (report->pushed == 1 ? "y" : "ies") << " (" << report->blobs
      << " ACF blob" << (report->blobs == 1 ? "" : "s") << ") to " << url << "; " << report->same << " already there, "
      << report->kept_remote << " kept (the remote result is better)\n";
  return {};
}

Result<void> import_acfs(const std::string& cache_dir, const std::string& path, const std::string& name, std::ostream& out) {
  auto set = import_acf_candidates(cache_dir, path, name);
  if (!set) return set.error();
  out << "imported " << set->acfs.size() << " ACF" << (set->acfs.size() == 1 ? "" : "s") << " as candidate set '" << set->name << "'";
  if (!set->cuda_version.empty()) out << " (CUDA " << set->cuda_version << ", stage " << (set->controls_stage.empty() ? "?" : set->controls_stage) << ")";
  out << "\n";
  for (const auto& a : set->acfs) out << "  " << a.sha256.substr(0, 16) << "  " << a.size << " bytes  " << a.file << "\n";
  out << "use with: ciq-tuner run --acf-candidates " << set->name << " ...\n";
  return {};
}

} // namespace ciq::cache::cli
