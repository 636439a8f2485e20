#include "cache/cli/packs.h"

#include "cache/acf_candidates.h"
#include "cache/cli/entry_policy.h"
#include "cache/entries.h"
#include "cache/pack.h"
#include "cache/record.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "spaces/space.h"
#include "utils/json.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <cmath>
#include <iostream>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

namespace ciq::cache::cli {

namespace {

// Checks one incoming entry as the wrappers would before applying it (the
// space it names, their policy), its ACF in the pack or the cache.
Result<Record> checked_record(const Hash128& key, const std::string& text, const std::map<Sha256, std::string>& blobs,
                              const std::optional<Store>& local, SpaceShelf& shelf) {
  EntryRules rules;
  rules.shelf = &shelf;
  rules.policy = wrapper_policy();
  rules.has_blob = [&](const Sha256& digest) {
    if (blobs.count(digest)) return true;
    auto b = local ? local->get(Table::blobs, digest_bytes(digest)) : Result<std::optional<std::string>>(std::nullopt);
    return b && *b;
  };
  auto checked = check_entry(text, key, rules);
  if (!checked) return make_error("invalid", with_unsafe_hint(checked.error()));
  return checked;
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

bool digits(std::string_view s, std::size_t from, std::size_t n) {
  if (s.size() < from + n) return false;
  for (std::size_t i = from; i < from + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int number_at(std::string_view s, std::size_t from, std::size_t n) { return std::atoi(std::string(s.substr(from, n)).c_str()); }

} // namespace

Result<void> check_since(const std::string& since) {
  // Records are created "YYYY-MM-DDTHH:MM:SSZ" (UTC); a prefix of that
  // compares correctly as text.
  std::string_view d = since;
  bool ok = d.size() >= 10 && digits(d, 0, 4) && d[4] == '-' && digits(d, 5, 2) && d[7] == '-' && digits(d, 8, 2) &&
            number_at(d, 5, 2) >= 1 && number_at(d, 5, 2) <= 12 && number_at(d, 8, 2) >= 1 && number_at(d, 8, 2) <= 31;
  if (ok && d.size() > 10) {
    std::string_view t = d.substr(10);
    if (!t.empty() && t.back() == 'Z') t.remove_suffix(1);
    ok = (t.size() == 6 || t.size() == 9) && t[0] == 'T' && digits(t, 1, 2) && t[3] == ':' && digits(t, 4, 2) &&
         number_at(t, 1, 2) < 24 && number_at(t, 4, 2) < 60 &&
         (t.size() == 6 || (t[6] == ':' && digits(t, 7, 2) && number_at(t, 7, 2) < 61));
  }
  if (!ok)
    return make_error(ciq::errc::usage, "--since takes a UTC date, YYYY-MM-DD (e.g. 2026-12-01) or YYYY-MM-DDTHH:MM[:SS][Z], not '" +
                                   since + "'");
  return {};
}

Result<void> export_pack(const std::string& cache_dir, const ExportFilter& f, const std::string& output, bool json,
                         std::ostream& out) {
  if (output.empty()) return make_error(ciq::errc::usage, "export needs -o FILE (or -o - for stdout)");
  if (json && output == "-") return make_error(ciq::errc::usage, "--json and -o - would both write to stdout; give -o FILE");
  if (!f.since.empty())
    if (auto valid = check_since(f.since); !valid) return valid;
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  Pack pack;
  std::map<std::string, long> gpu_models; // with --gpu: the models the other filters let through, and how many
  if (*store) {
    Result<void> bad;
    auto r = (*store)->for_each(Table::records, [&](std::string_view k, std::string_view v) {
      auto rec = parse_record(v, "record " + bytes_to_hex(k));
      if (!rec) {
        bad = make_error("invalid", rec.error().message + " (run 'ciq-cache verify --fix' first)");
        return false;
      }
      if (!f.kernels.empty()) {
        bool match = rec->kind == RecordKind::kernel && glob_match(f.kernels, rec->kernel);
        for (const auto& [kernel, _] : rec->controls.kernels) match = match || glob_match(f.kernels, kernel);
        if (!match) return true;
      }
      if (!f.space.empty() && rec->controls.space != f.space) return true;
      if (!f.gpu.empty()) {
        // The model as tuned_on() reads it (NVML's name where nvidia-smi gave
        // none), compared as `stale --gpu` compares it.
        std::string model = tuned_on(*rec).gpu_model;
        ++gpu_models[model];
        if (!same_gpu_model(model, f.gpu)) return true;
      }
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
  // With --gpu, how many entries were tuned on that model, and, when none
  // was, the models the cache does hold: an empty pack says why.
  long considered = 0;
  for (const auto& [model, n] : gpu_models) considered += n;
  std::string gpu_note;
  if (!f.gpu.empty()) {
    gpu_note = std::to_string(pack.entries.size()) + " of " + std::to_string(considered) + " entries tuned on " + printable(f.gpu);
    if (pack.entries.empty() && !gpu_models.empty()) {
      std::string seen;
      for (const auto& [model, n] : gpu_models)
        seen += (seen.empty() ? "" : ", ") + (model.empty() ? std::string("none recorded") : printable(model)) + " (" +
                std::to_string(n) + ")";
      gpu_note += "; the entries' GPUs: " + seen;
    }
  }
  if (json) {
    nlohmann::ordered_json j{{"exported", pack.entries.size()}, {"blobs", pack.blobs.size()}, {"file", output}};
    if (!f.gpu.empty()) {
      j["gpu_matched"] = pack.entries.size();
      j["gpu_considered"] = considered;
    }
    out << j.dump() << "\n";
  } else if (output != "-") {
    out << "exported " << pack.entries.size() << " entr" << (pack.entries.size() == 1 ? "y" : "ies") << " and "
        << pack.blobs.size() << " blob(s) to " << output << (gpu_note.empty() ? "" : " (" + gpu_note + ")") << "\n";
  } else if (!gpu_note.empty()) {
    std::cerr << "ciq-cache: exported " << gpu_note << "\n";
  }
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
  std::vector<std::string> refused; // every key's reason: the pack is refused as a whole
  for (const auto& [key, text] : pack->entries) {
    auto incoming = checked_record(key, text, pack->blobs, local, shelf);
    if (!incoming) {
      refused.push_back(incoming.error().message);
      continue;
    }
    if (!refused.empty()) continue;
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
  if (refused.size() == 1) return make_error("invalid", "refusing " + file + ": " + refused.front());
  if (!refused.empty()) {
    // Each refused key with its reason, up to a screenful.
    constexpr std::size_t k_listed = 10;
    std::string message = "refusing " + file + ": " + std::to_string(refused.size()) + " of " +
                          std::to_string(pack->entries.size()) + " entries are refused; nothing written:";
    for (std::size_t i = 0; i < refused.size() && i < k_listed; ++i) message += "\n  " + refused[i];
    if (refused.size() > k_listed) message += "\n  (and " + std::to_string(refused.size() - k_listed) + " more)";
    return make_error("invalid", message);
  }
  if (!dry_run && !writes.empty()) {
    local.reset();
    auto store = Store::open_for_writing(cache_dir);
    if (!store) return store.error();
    // One transaction: an import that fails half-way leaves nothing behind.
    if (auto r = write_entries(*store, writes, pack->blobs); !r) return r;
  }
  for (const auto& a : actions) {
    if (json) out << json_line({{"key", a.key}, {"action", a.what}}) << "\n";
    else out << a.key << "  " << a.what << "\n";
  }
  if (!json)
    out << (dry_run ? "dry run: would write " : "wrote ") << writes.size() << " of " << actions.size() << " entries from "
        << file << "\n";
  return {};
}

Result<void> merge_packs(const std::string& a, const std::string& b, const std::string& output, bool json,
                         std::ostream& out) {
  if (output.empty()) return make_error(ciq::errc::usage, "merge needs -o FILE");
  if (json && output == "-") return make_error(ciq::errc::usage, "--json and -o - would both write to stdout; give -o FILE");
  auto pa = read_pack(a);
  if (!pa) return pa.error();
  auto pb = read_pack(b);
  if (!pb) return pb.error();
  struct Line { std::string key, action, reason; };
  std::vector<Line> lines;
  auto print = [&](const std::vector<Line>& report) {
    for (const auto& l : report) {
      if (json)
        out << json_line({{"key", l.key}, {"action", l.action}, {"reason", l.reason}}) << "\n";
      else
        out << l.key << "  " << l.action << " (" << printable(l.reason) << ")\n";
    }
  };

  SpaceShelf shelf(spaces_directory());
  std::optional<Store> none;
  std::map<Hash128, Record> checked_b;
  std::vector<Line> refused;
  for (const auto& [key, text] : pa->entries)
    if (auto r = checked_record(key, text, pa->blobs, none, shelf); !r)
      refused.push_back({to_hex(key), "refused", "in " + a + ": " + r.error().message});
  for (const auto& [key, text] : pb->entries) {
    auto r = checked_record(key, text, pb->blobs, none, shelf);
    if (!r) refused.push_back({to_hex(key), "refused", "in " + b + ": " + r.error().message});
    else checked_b.emplace(key, std::move(*r));
  }
  if (!refused.empty()) {
    print(refused);
    return make_error("invalid", "refusing to merge: " + std::to_string(refused.size()) + " entr" +
                                     (refused.size() == 1 ? "y" : "ies") + " would not be applied (above); nothing written");
  }

  Pack merged = *pa;
  for (const auto& [key, text] : pb->entries) {
    auto it = merged.entries.find(key);
    if (it == merged.entries.end()) merged.entries.emplace(key, text);
    else if (it->second != text && replaces(checked_b.at(key), it->second)) it->second = text;
  }
  // The summary counts the lines it follows: every "kept" line is a kept entry.
  int added = 0, replaced = 0, kept = 0, same = 0;
  for (const auto& [key, text] : merged.entries) {
    auto in_a = pa->entries.find(key);
    auto in_b = pb->entries.find(key);
    std::string hex = to_hex(key);
    if (in_b == pb->entries.end()) ++kept, lines.push_back({hex, "kept", "only in " + a});
    else if (in_a == pa->entries.end()) ++added, lines.push_back({hex, "added", "only in " + b});
    else if (in_a->second == in_b->second) ++same, lines.push_back({hex, "same", "the same in both"});
    else if (text == in_b->second) ++replaced, lines.push_back({hex, "replaced", b + "'s result is better"});
    else ++kept, lines.push_back({hex, "kept", a + "'s result is as good or better"});
  }
  merged.blobs.insert(pb->blobs.begin(), pb->blobs.end());
  // Keep only the blobs some entry still uses.
  std::map<Sha256, std::string> used;
  for (const auto& [key, text] : merged.entries)
    if (auto r = parse_record(text, to_hex(key)); r && r->controls.acf && merged.blobs.count(*r->controls.acf))
      used.emplace(*r->controls.acf, merged.blobs.at(*r->controls.acf));
  merged.blobs = std::move(used);
  if (auto w = write_output(output, format_pack(merged), out); !w) return w;
  if (output == "-") return {}; // the pack is on stdout: no report there
  print(lines);
  if (json)
    out << json_line({{"merged", merged.entries.size()}, {"from_a", pa->entries.size()}, {"from_b", pb->entries.size()},
                      {"added", added}, {"replaced", replaced}, {"kept", kept}, {"same", same}, {"file", output}})
        << "\n";
  else
    out << "merged " << pa->entries.size() << " + " << pb->entries.size() << " entries into " << merged.entries.size() << " ("
        << added << " added, " << replaced << " replaced by a better result, " << kept << " kept, " << same
        << " the same) in " << output << "\n";
  return {};
}

Result<void> push_cache(const std::string& cache_dir, const std::string& url, bool json, std::ostream& out) {
  std::string shown = redact_secrets(url); // never print the password
  auto report = cache::push_cache(cache_dir, url, {});
  if (!report) return make_error(report.error().code, redact_secrets(report.error().message));
  if (!report->cache_found) {
    if (json) out << json_line({{"pushed", 0}, {"url", shown}, {"note", "no entries in the cache"}}) << "\n";
    else out << "nothing to push: no entries yet in " << cache_dir << "\n";
    return {};
  }
  for (const auto& why : report->refused) {
    if (json) out << json_line({{"refused", with_unsafe_hint(why)}}) << "\n";
    else out << "not pushed: " << printable(with_unsafe_hint(why)) << "\n";
  }
  if (json)
    out << json_line({{"pushed", report->pushed}, {"blobs", report->blobs}, {"same", report->same},
                      {"kept_remote", report->kept_remote}, {"refused", report->refused.size()}, {"url", shown}})
        << "\n";
  else
    out << "pushed " << report->pushed << " entr" << (report->pushed == 1 ? "y" : "ies") << " (" << report->blobs
        << " ACF blob" << (report->blobs == 1 ? "" : "s") << ") to " << shown << "; " << report->same << " already there, "
        << report->kept_remote << " kept (the remote result is better), " << report->refused.size()
        << " refused (the wrappers would not apply them)\n";
  return {};
}

Result<void> import_acfs(const std::string& cache_dir, const std::string& path, const std::string& name, bool json,
                         std::ostream& out) {
  auto set = import_acf_candidates(cache_dir, path, name);
  if (!set) return set.error();
  if (json) {
    nlohmann::ordered_json acfs = nlohmann::ordered_json::array();
    for (const auto& a : set->acfs) acfs.push_back({{"sha256", a.sha256}, {"size", a.size}, {"file", a.file}});
    out << json_line({{"name", set->name}, {"cuda_version", set->cuda_version}, {"controls_stage", set->controls_stage},
                      {"acfs", std::move(acfs)}})
        << "\n";
    return {};
  }
  out << "imported " << set->acfs.size() << " ACF" << (set->acfs.size() == 1 ? "" : "s") << " as candidate set '"
      << printable(set->name) << "'";
  if (!set->cuda_version.empty())
    out << printable(" (CUDA " + set->cuda_version + ", stage " + (set->controls_stage.empty() ? "?" : set->controls_stage) + ")");
  out << "\n";
  for (const auto& a : set->acfs) out << "  " << a.sha256.substr(0, 16) << "  " << a.size << " bytes  " << printable(a.file) << "\n";
  out << "use with: ciq-tuner run --acf-candidates " << printable(set->name) << " ...\n";
  return {};
}

} // namespace ciq::cache::cli
