#include "cache/cli/packs.h"

#include "cache/acf_candidates.h"
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

// Keys and digests in a pack are checked hex (parse_pack), records' ACF
// digests are checked by parse_record: the conversions cannot fail.
std::string raw_key(const std::string& hex, std::size_t size) { return hex_to_bytes(hex, size).value_or(""); }

// Checks one incoming record as the wrapper would before applying it.
Result<Record> checked_record(const std::string& key, const std::string& text, const std::map<std::string, std::string>& blobs,
                              const std::optional<Store>& local, std::map<std::string, spaces::Space>& spaces) {
  auto record = parse_record(text, "entry " + key);
  if (!record) return record.error();
  const std::string& name = record->controls.space;
  if (!spaces.count(name)) {
    auto space = spaces::load_space(spaces_directory(), name);
    if (!space) return make_error("invalid", "entry " + key + ": unknown space '" + name + "'");
    spaces.emplace(name, std::move(*space));
  }
  if (auto v = spaces::validate_controls(spaces.at(name), record->controls, spaces::Policy{}); !v)
    return make_error("invalid", "entry " + key + ": " + v.error().message);
  if (record->controls.acf && !blobs.count(*record->controls.acf)) {
    bool have = false;
    if (local) {
      auto b = local->get(Table::blobs, raw_key(*record->controls.acf, 32));
      have = b && *b;
    }
    if (!have) return make_error("invalid", "entry " + key + ": its ACF " + record->controls.acf->substr(0, 12) + " is neither in the pack nor in the cache");
  }
  return record;
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
      pack.entries.emplace(bytes_to_hex(k), std::string(v));
      if (rec->controls.acf) {
        auto blob = (*store)->get(Table::blobs, raw_key(*rec->controls.acf, 32));
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
  std::map<std::string, spaces::Space> spaces;
  struct Action { std::string key, what; };
  std::vector<Action> actions;
  std::vector<std::string> writes;
  for (const auto& [key, text] : pack->entries) {
    auto incoming = checked_record(key, text, pack->blobs, local, spaces);
    if (!incoming) return make_error("invalid", "refusing " + file + ": " + incoming.error().message);
    std::optional<std::string> existing;
    if (local) {
      auto e = local->get(Table::records, raw_key(key, 16));
      if (!e) return e.error();
      existing = *e;
    }
    if (!existing) {
      actions.push_back({key, "added"});
      writes.push_back(key);
    } else if (*existing == text) {
      actions.push_back({key, "unchanged"});
    } else {
      auto mine = parse_record(*existing, "local");
      if (!mine || record_merit(*incoming) > record_merit(*mine)) {
        actions.push_back({key, "replaced (the pack's result is better)"});
        writes.push_back(key);
      } else {
        actions.push_back({key, "kept (the local result is better)"});
      }
    }
  }
  if (!dry_run && !writes.empty()) {
    local.reset();
    auto store = Store::open_for_writing(cache_dir);
    if (!store) return store.error();
    // One transaction: an import that fails half-way leaves nothing behind.
    std::vector<Change> changes;
    for (const auto& [digest, bytes] : pack->blobs) changes.push_back({Table::blobs, raw_key(digest, 32), bytes});
    for (const auto& key : writes) {
      changes.push_back({Table::records, raw_key(key, 16), pack->entries.at(key)});
      changes.push_back({Table::quarantine, raw_key(key, 16), std::nullopt});
    }
    if (auto r = store->apply(changes); !r) return r;
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
  std::map<std::string, spaces::Space> spaces;
  std::optional<Store> none;
  Pack merged = *pa;
  for (const auto& [key, text] : pa->entries)
    if (auto r = checked_record(key, text, pa->blobs, none, spaces); !r) return make_error("invalid", "refusing " + a + ": " + r.error().message);
  int replaced = 0;
  for (const auto& [key, text] : pb->entries) {
    auto incoming = checked_record(key, text, pb->blobs, none, spaces);
    if (!incoming) return make_error("invalid", "refusing " + b + ": " + incoming.error().message);
    auto it = merged.entries.find(key);
    if (it == merged.entries.end()) {
      merged.entries.emplace(key, text);
    } else if (it->second != text) {
      auto mine = parse_record(it->second, "a");
      if (!mine || record_merit(*incoming) > record_merit(*mine)) {
        it->second = text;
        ++replaced;
      }
    }
  }
  merged.blobs.insert(pb->blobs.begin(), pb->blobs.end());
  // Keep only the blobs some entry still uses.
  std::map<std::string, std::string> used;
  for (const auto& [key, text] : merged.entries)
    if (auto r = parse_record(text, key); r && r->controls.acf && merged.blobs.count(*r->controls.acf))
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
