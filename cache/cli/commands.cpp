#include "cache/cli/commands.h"

#include "cache/acf_candidates.h"

#include "cache/cli/entry_policy.h"

#include "cache/entries.h"

#include "cache/counters.h"
#include "cache/key.h"
#include "cache/ptxas_command.h"
#include "cache/ptxas_identity.h"
#include "cache/record.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "spaces/space.h"
#include "utils/json.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <set>

namespace ciq::cache::cli {

using nlohmann::ordered_json;

namespace {


Result<Store> open_existing_writable(const std::string& cache_dir) {
  if (!Store::exists(cache_dir))
    return make_error(ciq::errc::not_found, "no cache at '" + cache_dir + "' (set CIQ_CACHE_DIR, or store something with 'ciq-cache put')");
  return Store::open_for_writing(cache_dir);
}

// Raw keys of the records whose hex form starts with `prefix`.
Result<std::vector<std::string>> match_keys(const Store& store, const std::string& prefix) {
  std::vector<std::string> keys;
  auto r = store.for_each(Table::records, [&](std::string_view k, std::string_view) {
    if (starts_with(bytes_to_hex(k), prefix)) keys.emplace_back(k);
    return true;
  });
  if (!r) return r.error();
  return keys;
}

Result<std::string> unique_key(const Store& store, const std::string& prefix) {
  if (prefix.size() < 4) return make_error(ciq::errc::usage, "give at least 4 hex digits of a key (see 'ciq-cache list')");
  auto keys = match_keys(store, prefix);
  if (!keys) return keys.error();
  if (keys->empty()) return make_error(ciq::errc::not_found, "no record has a key starting with " + prefix);
  if (keys->size() > 1) return make_error("invalid", "key prefix " + prefix + " is ambiguous (" + std::to_string(keys->size()) + " records)");
  return keys->front();
}

std::string record_json(std::string_view key, const Record& r, bool quarantined) {
  ordered_json j{{"key", bytes_to_hex(key)}, {"kind", kind_name(r.kind)}, {"kernel", r.kernel}, {"target", r.target},
                 {"ptxas", r.ptxas}, {"unit", r.unit}, {"nvcc", r.nvcc}, {"flags", r.flags}, {"created", r.created},
                 {"source", r.source}, {"space", r.controls.space}};
  ordered_json controls = ordered_json::object(), provenance = ordered_json::object(), on_json = ordered_json::object();
  for (const auto& [k, v] : r.controls.options) controls[k] = v;
  for (const auto& [kernel, knobs] : r.controls.kernels)
    for (const auto& [k, v] : knobs) controls[kernel + ":" + k] = v;
  if (r.controls.acf) controls["acf"] = "sha256:" + to_hex(*r.controls.acf);
  for (const auto& [k, v] : r.provenance) provenance[k] = v;
  // The same, read the one way whatever names the record's ciq gave it.
  auto on = tuned_on(r);
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"compiler", on.compiler}, {"driver", on.driver}, {"gpu_model", on.gpu_model},
                             {"gpu_memory_mib", on.gpu_memory_mib}, {"gpu_cuda_cores", on.gpu_cuda_cores}, {"command_line", on.command_line}})
    if (!v.empty()) on_json[k] = v;
  j["controls"] = std::move(controls);
  j["provenance"] = std::move(provenance);
  j["tuned_on"] = std::move(on_json);
  j["quarantined"] = quarantined;
  return json_line(j);
}

} // namespace

// `list`'s last column: the GPU model an entry was verified on, "" when it
// records none.
static std::string tuned_on_column(const Record& r) {
  std::string model = tuned_on(r).gpu_model;
  return model.empty() ? "" : "  gpu " + printable(model);
}

std::string describe_controls(const Record& r) {
  if (!r.controls.empty()) return spaces::summarise_control_set(r.controls);
  std::string result = r.provenance_value("result");
  std::string what = r.kind == RecordKind::unit ? "this unit's NVVM stage" : r.kind == RecordKind::kernel ? "this kernel" : "this module";
  if (result == record_result::no_gain) {
    std::string why = r.provenance_value("verification");
    if (starts_with(why, ": ")) why = why.substr(2);
    return "(defaults: tuned, no gain" + (why.empty() ? std::string() : "; " + why) +
           (r.kind == RecordKind::module ? "; the wrappers compile it unchanged where its kernels' own entries set nothing, and do "
                                 "not tune it again)"
                               : "; the wrappers compile it unchanged and do not tune it again)");
  }
  if (result == record_result::tuned)
    return "(defaults: tuned; the winner leaves " + what +
           " at the compiler's defaults, so the wrappers compile it unchanged)";
  return "(defaults: no knob set; the wrappers compile it unchanged)";
}

// Where identify_ptxas may keep its memo: not in a cache directory that
// does not exist yet (a refused put must leave nothing behind).
static std::string memo_dir(const std::string& cache_dir) { return is_directory(cache_dir) ? cache_dir : ""; }

// `put --allow-unsafe` stores what the wrappers apply only with
// CIQ_ALLOW_UNSAFE=1 (the one rule: verify, import, merge and push follow
// it too): say so when this environment would not apply the entry.
static void note_unsafe(const spaces::Space& space, const spaces::ControlSet& controls, bool allowed) {
  if (!allowed || unsafe_allowed()) return;
  spaces::Policy strict;
  if (!spaces::validate_controls(space, controls, strict))
    std::cerr << "ciq-cache: warning: this entry has 'unsafe' knobs: the wrappers (and verify, import, merge, push) "
                 "use it only with CIQ_ALLOW_UNSAFE=1 in their environment\n";
}

// What `put` was given: --controls FILE, then each --set (as `spell` writes it).
static Result<spaces::ControlSet> requested_controls(const PutRequest& req, const std::function<std::string(const std::string&)>& spell) {
  spaces::ControlSet controls;
  if (!req.controls_file.empty()) {
    auto text = read_file(req.controls_file);
    if (!text) return text.error();
    auto parsed = spaces::parse_control_set(*text, req.controls_file);
    if (!parsed) return parsed.error();
    controls = std::move(*parsed);
  }
  for (const auto& a : req.assignments)
    if (auto r = spaces::add_assignment(controls, spell(a)); !r) return r.error();
  return controls;
}

// put --unit: one unit record, its knobs checked against the nvcc space of
// the toolkit the entry is for. The key comes from a ciq-nvcc build's trace
// (CIQ_TRACE=DIR: DIR/units/*.json, "key").
static Result<void> put_unit(const std::string& cache_dir, const PutRequest& req, bool json, std::ostream& out) {
  Hash128 key;
  if (!from_hex(req.unit_key, key.data(), key.size()))
    return make_error(ciq::errc::usage, "--unit takes a unit key of 32 hex digits (from a CIQ_TRACE build's units/*.json), got '" +
                                   req.unit_key + "'");
  if (!req.ptx_file.empty() || !req.acf_file.empty() || !req.flags.empty())
    return make_error(ciq::errc::usage, "--unit stores NVVM-stage options only; --ptx, --acf and --flags are for ptxas entries");
  std::string nvcc_path = req.nvcc.empty() ? env(Env::real_nvcc) : req.nvcc;
  auto found = find_program(nvcc_path.empty() ? "nvcc" : nvcc_path);
  if (!found) return make_error(ciq::errc::not_found, "cannot find nvcc (give --nvcc PATH or set CIQ_REAL_NVCC)");
  auto identity = identify_ptxas(*found, memo_dir(cache_dir)); // nvcc prints the same "release X.Y, VX.Y.Z"
  if (!identity) return identity.error();
  auto space = spaces::find_space(spaces_directory(), "cicc", identity->release);
  if (!space) return space.error();
  if (!*space) return make_error(ciq::errc::not_found, "no NVVM-stage space covers CUDA " + identity->release + " in " + spaces_directory());

  // KNOB=VALUE means the NVVM stage here.
  auto read = requested_controls(req, [](const std::string& a) { return starts_with(a, "nvcc.") ? a : "nvcc." + a; });
  if (!read) return read.error();
  const spaces::ControlSet& given = *read;
  if (!given.options.empty() || !given.kernels.empty() || given.acf)
    return make_error("invalid", "a unit entry holds NVVM-stage knobs only (nvcc.KNOB=VALUE)");
  spaces::ControlSet controls = given.nvcc_stage();
  if (controls.space.empty()) controls.space = (*space)->name;
  if (controls.empty()) return make_error("invalid", "nothing to store: give --set KNOB=VALUE or --controls FILE");
  spaces::Policy policy;
  policy.allow_unsafe = req.allow_unsafe;
  if (auto v = spaces::validate_controls(**space, controls, policy); !v) return v;
  note_unsafe(**space, controls, req.allow_unsafe);

  Record record;
  record.kind = RecordKind::unit;
  record.target = req.arch;
  record.nvcc = identity->version;
  record.created = utc_now();
  record.source = req.source;
  record.provenance = req.provenance;
  record.controls = std::move(controls);
  auto store = Store::open_for_writing(cache_dir);
  if (!store) return store.error();
  if (auto r = write_entries(*store, std::vector<Entry>{{key, record}}); !r) return r;
  if (json)
    out << json_line({{"key", to_hex(key)}, {"kind", kind_name(RecordKind::unit)}, {"controls", spaces::summarise_control_set(record.controls)}}) << "\n";
  else
    out << "stored " << to_hex(key) << "  unit  " << printable(spaces::summarise_control_set(record.controls)) << "\n";
  return {};
}

// ptxas compiles the PTX for `arch` with the build's `flags` (nvcc's own
// code, no controls): an entry for a target or flags ptxas refuses could be
// stored but never looked up by any build. One compile of the module.
Result<void> ptxas_takes(const std::string& ptxas, const PutRequest& req) {
  RunOptions o;
  o.argv = {ptxas, "-arch=" + req.arch};
  for (auto word : split(req.flags, ' '))
    if (!word.empty()) o.argv.emplace_back(word);
  o.argv.insert(o.argv.end(), {req.ptx_file, "-o", "/dev/null"});
  o.capture_stdout = o.capture_stderr = o.stdin_null = true;
  o.timeout_seconds = 600;
  auto ran = run_process(o);
  if (!ran) return make_error("io", "cannot run " + ptxas + ": " + ran.error().message);
  if (ran->succeeded()) return {};
  std::string said(trim(ran->err.empty() ? ran->out : ran->err));
  return make_error("invalid", "ptxas does not compile " + req.ptx_file + " with --arch " + req.arch +
                                   (req.flags.empty() ? "" : " and --flags \"" + req.flags + "\"") + ", so no build would look this entry up: " +
                                   said.substr(0, said.find('\n')));
}

Result<void> put_controls(const std::string& cache_dir, const PutRequest& req, bool json, std::ostream& out) {
  if (!req.unit_key.empty()) return put_unit(cache_dir, req, json, out);
  if (req.ptx_file.empty()) return make_error(ciq::errc::usage, "put needs --ptx FILE (the PTX the controls are for)");
  if (req.arch.empty()) return make_error(ciq::errc::usage, "put needs --arch sm_XX (the target ptxas compiles for)");
  if (!starts_with(req.arch, "sm_")) return make_error(ciq::errc::usage, "--arch must be a real target such as sm_90a, not '" + req.arch + "'");
  auto ptx = read_file(req.ptx_file);
  if (!ptx) return make_error("io", ptx.error().message);
  PtxModule module = scan_ptx(*ptx);
  auto kernels = module.kernel_names();
  if (kernels.empty()) return make_error("invalid", "'" + req.ptx_file + "' holds no .entry kernel; is it PTX?");

  std::string ptxas_path = req.ptxas.empty() ? env(Env::real_ptxas) : req.ptxas;
  auto found = find_program(ptxas_path.empty() ? "ptxas" : ptxas_path);
  if (!found) return make_error(ciq::errc::not_found, "cannot find ptxas (give --ptxas PATH or set CIQ_REAL_PTXAS)");
  auto identity = identify_ptxas(*found, memo_dir(cache_dir));
  if (!identity) return identity.error();
  auto space = spaces::find_space(spaces_directory(), "ptxas", identity->release);
  if (!space) return space.error();
  if (!*space) return make_error(ciq::errc::not_found, "no knob space covers ptxas " + identity->release + " in " + spaces_directory());

  auto read = requested_controls(req, [](const std::string& a) { return a; });
  if (!read) return read.error();
  spaces::ControlSet controls = std::move(*read);
  if (controls.space.empty()) controls.space = (*space)->name;
  spaces::Policy policy;
  policy.allow_unsafe = req.allow_unsafe;
  if (auto v = spaces::validate_controls(**space, controls, policy); !v) return v;
  note_unsafe(**space, controls, req.allow_unsafe);
  for (const auto& [kernel, _] : controls.kernels)
    if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end()) {
      std::string list;
      for (const auto& k : kernels) list += (list.empty() ? "" : ", ") + k;
      return make_error("invalid", "kernel '" + kernel + "' is not in " + req.ptx_file + " (its kernels: " + list + ")");
    }

  std::string acf_blob;
  if (!req.acf_file.empty()) {
    auto blob = read_file(req.acf_file);
    if (!blob) return blob.error();
    if (blob->empty()) return make_error("invalid", "ACF file '" + req.acf_file + "' is empty");
    acf_blob = std::move(*blob);
    controls.acf = sha256(acf_blob);
  }
  if (controls.empty()) return make_error("invalid", "nothing to store: give --set KNOB=VALUE, --controls FILE or --acf FILE");

  auto flags = parse_codegen_flags(req.flags);
  if (!flags) return flags.error();
  if (auto taken = ptxas_takes(*found, req); !taken) return taken.error();
  PtxasCommand command;
  command.codegen_flags = std::move(*flags);
  KeyContext context{req.arch, identity->version_text, command.canonical_flags()};

  Record base;
  base.target = req.arch;
  base.ptxas = identity->version;
  base.flags = context.flags;
  base.created = utc_now();
  base.source = req.source;
  base.provenance = req.provenance;
  ModuleKeys keys{module_key(module, context), {}};
  for (const auto& kernel : kernels) keys.kernels.emplace_back(kernel, kernel_key(module, kernel, context));
  auto entries = module_entries(base, controls, keys, /*tuned=*/false);
  std::map<Sha256, std::string> blobs;
  if (!acf_blob.empty()) blobs.emplace(sha256(acf_blob), acf_blob);
  // An ACF named by digest (--set acf=sha256:..., a control file) must be in
  // the cache already: an entry whose blob is missing is broken (verify says
  // so, the wrappers cannot apply it). Looked for before anything is made.
  if (controls.acf && acf_blob.empty()) {
    auto existing = Store::open_for_reading(cache_dir);
    if (!existing) return existing.error();
    Result<std::optional<std::string>> blob = std::optional<std::string>{};
    if (*existing) blob = (*existing)->get(Table::blobs, digest_bytes(*controls.acf));
    if (!blob) return blob.error();
    if (!*blob)
      return make_error("invalid", "the ACF sha256:" + to_hex(*controls.acf) + " is not in the cache " + cache_dir +
                                       ": give the file itself with --acf FILE, or import it first (ciq-cache import-acfs)");
  }

  auto store = Store::open_for_writing(cache_dir);
  if (!store) return store.error();
  if (auto w = write_entries(*store, entries, blobs); !w) return w;
  for (const auto& [key, record] : entries) {
    if (json)
      out << json_line({{"key", to_hex(key)}, {"kind", kind_name(record.kind)}, {"kernel", record.kernel},
                        {"controls", spaces::summarise_control_set(record.controls)}})
          << "\n";
    else
      out << "stored " << to_hex(key) << "  " << kind_name(record.kind) << printable(record.kernel.empty() ? "" : " " + record.kernel)
          << "  " << printable(spaces::summarise_control_set(record.controls)) << "\n";
  }
  return {};
}

Result<void> show_stats(const std::string& cache_dir, bool json, bool zero, std::ostream& out) {
  auto counters = read_counters(cache_dir);
  if (!counters) return counters.error();
  std::size_t records = 0, blobs = 0, quarantined = 0, bytes = 0;
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  if (*store) {
    auto& s = **store;
    auto n = s.count(Table::records);
    if (!n) return n.error();
    records = *n;
    auto b = s.count(Table::blobs);
    auto q = s.count(Table::quarantine);
    blobs = b.ok() ? *b : 0;
    quarantined = q.ok() ? *q : 0;
    bytes = s.file_size();
  }
  if (json) {
    ordered_json counted = ordered_json::object();
    for (const auto& [k, v] : *counters) counted[k] = v;
    out << json_line({{"cache_dir", cache_dir}, {"records", records}, {"blobs", blobs}, {"quarantined", quarantined},
                      {"bytes", bytes}, {"counters", std::move(counted)}})
        << "\n";
  } else {
    out << "cache directory   " << printable(cache_dir) << "\n"
        << "records           " << records << "\n"
        << "ACF blobs         " << blobs << "\n"
        << "quarantined       " << quarantined << "\n"
        << "database size     " << bytes << " bytes\n";
    if (counters->empty()) {
      out << "no compiles counted yet\n";
    } else {
      auto count = [&](const char* k) { auto it = counters->find(k); return it == counters->end() ? 0.0 : double(it->second); };
      double lookups = count("hit") + count("miss");
      if (lookups > 0) {
        char rate[64];
        std::snprintf(rate, sizeof rate, "%.1f %% of %.0f lookups", 100 * count("hit") / lookups, lookups);
        out << "hit rate          " << rate << "\n";
      }
      out << "counters (wrappers)\n";
      if (counters->count("tuning") && !counters->count("tuning.applied") && count("applied") > 0)
        out << "  (this stats file is older than tuning.applied: its 'applied' also counts tuning candidates)\n";
    }
    for (const auto& [k, v] : *counters)
      out << "  " << printable(k) << std::string(k.size() < 32 ? 32 - k.size() : 1, ' ') << v << "\n";
  }
  if (zero) return reset_counters(cache_dir);
  return {};
}

namespace {

// "no entries yet in DIR", with where DIR came from and how to name another
// (a user after the bundled example, whose winner is in that script's own
// cache, saw only "no entries yet"). For stderr: stdout holds entries only.
std::string no_entries(const std::string& cache_dir, const std::string& glob) {
  std::string where = printable(cache_dir);
  std::string from = !env(Env::cache_dir).empty() && env(Env::cache_dir) == cache_dir ? "named by CIQ_CACHE_DIR"
                     : cache_dir == cache_directory() ? "the default cache: $XDG_CACHE_HOME/ciq, else ~/.cache/ciq"
                                                      : "named by --cache-dir";
  return "ciq-cache: no entries " + (glob.empty() ? std::string("yet") : "of kernels matching '" + printable(glob) + "'") +
         " in " + where + " (" + from + "); to list another cache: ciq-cache list --cache-dir DIR, or set CIQ_CACHE_DIR=DIR\n";
}

} // namespace

Result<void> list_records(const std::string& cache_dir, const std::string& glob, bool json, std::ostream& out) {
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  if (!*store) {
    if (!json) std::cerr << no_entries(cache_dir, glob);
    return {};
  }
  std::set<std::string> quarantined;
  auto q = (*store)->for_each(Table::quarantine, [&](std::string_view k, std::string_view) {
    quarantined.emplace(k);
    return true;
  });
  if (!q) return q;
  std::size_t listed = 0;
  auto each = (*store)->for_each(Table::records, [&](std::string_view k, std::string_view v) {
    ++listed;
    auto r = parse_record(v, "record " + bytes_to_hex(k));
    if (!r) {
      out << bytes_to_hex(k) << "  (unreadable: run 'ciq-cache verify')\n";
      return true;
    }
    if (!glob.empty() && !(r->kind == RecordKind::kernel ? glob_match(glob, r->kernel) : [&] {
          for (const auto& [kernel, _] : r->controls.kernels)
            if (glob_match(glob, kernel)) return true;
          return false;
        }())) {
      --listed;
      return true;
    }
    bool bad = quarantined.count(std::string(k)) > 0;
    if (json) out << record_json(k, *r, bad) << "\n";
    else
      out << bytes_to_hex(k) << "  "
          << printable(std::string(kind_name(r->kind)) + "  " + r->target +
                       (r->kind == RecordKind::unit ? "  nvcc " + r->nvcc + "  " + (r->unit.empty() ? "(unit)" : r->unit)
                                          : "  ptxas " + r->ptxas + "  " + (r->kernel.empty() ? "(module)" : r->kernel)) +
                       "  " + describe_controls(*r))
          << (bad ? "  [quarantined]" : "") << tuned_on_column(*r) << "\n";
    return true;
  });
  if (each && listed == 0 && !json) std::cerr << no_entries(cache_dir, glob);
  return each;
}

Result<void> show_record(const std::string& cache_dir, const std::string& prefix, bool json, std::ostream& out) {
  auto store = Store::open_for_reading(cache_dir);
  if (!store) return store.error();
  if (!*store) return make_error(ciq::errc::not_found, "no cache at '" + cache_dir + "'");
  auto key = unique_key(**store, prefix);
  if (!key) return key.error();
  auto text = (*store)->get(Table::records, *key);
  if (!text) return text.error();
  auto q = (*store)->get(Table::quarantine, *key);
  if (!q) return q.error();
  auto r = parse_record(**text, "record " + bytes_to_hex(*key));
  if (json) {
    if (!r) return r.error();
    out << record_json(*key, *r, q->has_value()) << "\n";
    return {};
  }
  out << "# key " << bytes_to_hex(*key) << "\n";
  // The record's text as stored, with what a terminal would act on escaped
  // (a record that did not parse may hold anything).
  if (*q) out << "# quarantined: " << printable(**q) << "\n";
  if (r && r->controls.empty()) out << "# controls: " << printable(describe_controls(*r)) << "\n";
  if (r) {
    // What it was tuned and verified on, gathered from its provenance (old
    // records keep it under other names: tuned_on() reads them all).
    auto on = tuned_on(*r);
    if (std::string gpu = describe_gpu(on); !gpu.empty()) out << "# verified on: " << printable(gpu) << "\n";
    else out << "# verified on: no GPU recorded (a compile-only objective, made by hand, or before ciq recorded it): no GPU policy refuses it\n";
    if (!on.command_line.empty()) out << "# run: " << printable(on.command_line) << "\n";
  }
  out << printable_lines(**text);
  return {};
}

Result<void> remove_records(const std::string& cache_dir, const std::vector<std::string>& prefixes, bool all,
                            bool json, std::ostream& out) {
  auto store = open_existing_writable(cache_dir);
  if (!store) return store.error();
  std::vector<std::string> keys;
  if (all) {
    auto k = match_keys(*store, "");
    if (!k) return k.error();
    keys = std::move(*k);
  } else {
    if (prefixes.empty()) return make_error(ciq::errc::usage, "rm needs KEY... (prefixes from 'ciq-cache list') or --all");
    for (const auto& p : prefixes) {
      auto k = unique_key(*store, p);
      if (!k) return k.error();
      keys.push_back(*k);
    }
  }
  if (auto removed = remove_entries(*store, keys); !removed) return removed.error();
  for (const auto& k : keys) {
    if (json) out << json_line({{"removed", bytes_to_hex(k)}}) << "\n";
    else out << "removed " << bytes_to_hex(k) << "\n";
  }
  return {};
}

Result<void> verify_cache(const std::string& cache_dir, bool fix, bool json, std::ostream& out) {
  auto opened = Store::open_for_reading(cache_dir);
  if (!opened) return opened.error();
  if (!*opened) {
    out << (json ? json_line({{"records", 0}, {"blobs", 0}, {"problems", ordered_json::array()}, {"fixed", false}}) + "\n"
                 : "no entries yet in " + cache_dir + "; nothing to verify\n");
    return {};
  }
  auto& store = **opened;
  SpaceShelf shelf(spaces_directory());
  EntryRules rules;
  rules.shelf = &shelf;
  rules.policy = wrapper_policy();
  std::vector<std::pair<std::string, std::string>> problems; // (table:hex key, what)
  std::vector<std::pair<Table, std::string>> broken;
  std::size_t records = 0, blobs = 0;
  std::set<std::string> blob_keys;
  rules.has_blob = [&](const Sha256& digest) { return blob_keys.count(digest_bytes(digest)) > 0; };

  auto b = store.for_each(Table::blobs, [&](std::string_view k, std::string_view v) {
    ++blobs;
    blob_keys.emplace(k);
    if (digest_bytes(sha256(v)) != k) {
      problems.emplace_back("blob " + bytes_to_hex(k), "content does not match its sha256");
      broken.emplace_back(Table::blobs, std::string(k));
    }
    return true;
  });
  if (!b) return b;
  auto r = store.for_each(Table::records, [&](std::string_view k, std::string_view v) {
    ++records;
    auto fail = [&](const std::string& why) {
      problems.emplace_back("record " + bytes_to_hex(k), why);
      broken.emplace_back(Table::records, std::string(k));
    };
    if (k.size() != 16) return fail("key is not 16 bytes"), true;
    Hash128 key;
    std::copy(k.begin(), k.end(), key.begin());
    // The wrappers' own check, with their policy.
    if (auto checked = check_entry(v, key, rules); !checked) fail(with_unsafe_hint(checked.error()));
    return true;
  });
  if (!r) return r;

  if (fix && !broken.empty()) {
    opened->reset();
    auto writable = Store::open_for_writing(cache_dir);
    if (!writable) return writable.error();
    // One transaction: a broken record goes with its quarantine mark
    // (entry_removal), a blob alone.
    std::vector<Change> changes;
    for (const auto& [table, key] : broken) {
      if (table == Table::records)
        for (auto& c : entry_removal(key)) changes.push_back(std::move(c));
      else
        changes.push_back(Change{table, key, std::nullopt});
    }
    if (auto rm = writable->apply(changes); !rm) return rm.error();
  }
  if (json) {
    ordered_json listed = ordered_json::array();
    for (const auto& [entry, what] : problems) listed.push_back({{"entry", entry}, {"problem", what}});
    out << json_line({{"records", records}, {"blobs", blobs}, {"problems", std::move(listed)}, {"fixed", fix}}) << "\n";
  } else {
    for (const auto& [entry, what] : problems) out << printable(entry) << ": " << printable(what) << (fix ? " (removed)" : "") << "\n";
    out << "checked " << records << " records and " << blobs << " blobs: " << problems.size() << " problem"
        << (problems.size() == 1 ? "" : "s") << "\n";
  }
  if (!problems.empty() && !fix)
    return make_error("verify", std::to_string(problems.size()) + " broken entr" + (problems.size() == 1 ? "y" : "ies") +
                                    "; run 'ciq-cache verify --fix' to remove them");
  return {};
}

Result<void> collect_garbage(const std::string& cache_dir, bool quarantined, bool json, std::ostream& out) {
  auto store = open_existing_writable(cache_dir);
  if (!store) return store.error();
  std::map<std::string, std::optional<std::string>> records; // key -> the blob it names (its digest's bytes)
  std::set<std::string> stale_marks, quarantined_records;
  auto r = store->for_each(Table::records, [&](std::string_view k, std::string_view v) {
    auto rec = parse_record(v, "record");
    records[std::string(k)] = rec && rec->controls.acf ? std::optional<std::string>(digest_bytes(*rec->controls.acf)) : std::nullopt;
    return true;
  });
  if (!r) return r;
  auto q = store->for_each(Table::quarantine, [&](std::string_view k, std::string_view) {
    (records.count(std::string(k)) ? quarantined_records : stale_marks).emplace(k);
    return true;
  });
  if (!q) return q;
  // The records that stay decide which blobs are still used: with
  // --quarantined, a blob only a dropped record named goes in the same run.
  std::set<std::string> referenced;
  for (const auto& [k, blob] : records)
    if (blob && !(quarantined && quarantined_records.count(k))) referenced.insert(*blob);
  // An imported ACF candidate set (import-acfs) names its blobs too: they
  // stay while the set does (ciq-tuner --acf-candidates reads them).
  std::string sets_dir = join_path(cache_dir, "acf-candidates");
  if (is_directory(sets_dir)) {
    auto names = list_directory(sets_dir);
    if (!names) return names.error();
    for (const auto& n : *names) {
      if (!ends_with(n, ".list")) continue;
      auto set = load_acf_candidates(cache_dir, n.substr(0, n.size() - 5));
      if (!set) return make_error(set.error().code, "cannot read the ACF candidate set " + join_path(sets_dir, n) + ": " +
                                                        set.error().message + " (gc keeps every blob until it can)");
      for (const auto& acf : set->acfs)
        if (auto digest = parse_digest<32>(acf.sha256)) referenced.insert(digest_bytes(*digest));
    }
  }
  std::vector<Change> changes;
  std::size_t blobs_removed = 0;
  auto b = store->for_each(Table::blobs, [&](std::string_view k, std::string_view) {
    if (!referenced.count(std::string(k))) {
      changes.push_back({Table::blobs, std::string(k), std::nullopt});
      ++blobs_removed;
    }
    return true;
  });
  if (!b) return b;
  for (const auto& k : stale_marks) changes.push_back({Table::quarantine, k, std::nullopt});
  std::size_t dropped = 0;
  if (quarantined)
    for (const auto& k : quarantined_records) {
      for (auto& c : entry_removal(k)) changes.push_back(std::move(c));
      ++dropped;
    }
  if (!changes.empty())
    if (auto applied = store->apply(changes); !applied) return applied;
  if (json)
    out << json_line({{"blobs_removed", blobs_removed}, {"marks_removed", stale_marks.size()}, {"quarantined_removed", dropped}})
        << "\n";
  else
    out << "removed " << blobs_removed << " unreferenced blob(s), " << stale_marks.size()
        << " stale quarantine mark(s), " << dropped << " quarantined record(s)\n";
  return {};
}

Result<void> show_environment(bool json, std::ostream& out) {
  for (const auto& v : environment_variables()) {
    std::string value = redact_secrets(env(v.id));
    if (json)
      out << json_line({{"name", v.name}, {"set", !value.empty()}, {"value", value}, {"meaning", v.meaning}}) << "\n";
    else
      out << v.name << (value.empty() ? "  (unset)" : "=" + printable(value)) << "\n    " << v.meaning << "\n";
  }
  return {};
}

} // namespace ciq::cache::cli
