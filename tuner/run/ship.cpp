#include "tuner/run/ship.h"

#include "cache/remote.h"

#include "cache/entries.h"
#include "cache/record.h"
#include "cache/store.h"
#include "cache/tuned_on.h"
#include "tuner/measure/gpu_monitor.h"
#include "tuner/objectives/statistics.h"
#include "tuner/rundir/command_line.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/nvml.h"
#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <cstdio>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// The benchmarks' GPU as NVML sees it, or nothing where they ran
// elsewhere: under Slurm the cluster's nodes ran them, and the GPU of the
// machine the tuner runs on (a login node's) says nothing of them
// (`ciq-cache stale` would compare entries with it).
std::optional<GpuIdentity> benchmarks_gpu(const TuneOptions& options) {
  if (options.setup.slurm) return std::nullopt;
  if (const Nvml* nvml = Nvml::get())
    if (auto id = nvml->identity(options.setup.gpus.empty() ? "" : options.setup.gpus.front())) return *id;
  return GpuIdentity{};
}

// The machine keys of an entry's provenance: `gpu` and `driver` (what
// records have always held; "none" without a GPU, "" under Slurm), then
// NVML's fuller identity, `gpu_model` being what `ciq-cache stale`
// compares with the GPU present.
void add_gpu_identity(const std::optional<GpuIdentity>& id, std::vector<std::pair<std::string, std::string>>& provenance) {
  auto or_none = [&](const std::string& v) { return !id ? std::string() : v.empty() ? std::string("none") : v; };
  provenance.emplace_back("gpu", or_none(id ? id->name : ""));
  provenance.emplace_back("driver", or_none(id ? id->driver : ""));
  if (!id || id->name.empty()) return;
  provenance.emplace_back("gpu_nvml", id->name);
  provenance.emplace_back(cache::tuned_on_key::gpu_model, id->name);
  if (id->memory_mib) provenance.emplace_back(cache::tuned_on_key::gpu_memory, std::to_string(id->memory_mib));
  if (id->cuda_cores) provenance.emplace_back(cache::tuned_on_key::gpu_cores, std::to_string(id->cuda_cores));
  if (!id->driver.empty()) provenance.emplace_back("driver_nvml", id->driver);
  provenance.emplace_back("power_limit_w", format_number(id->power_limit_w));
  provenance.emplace_back("ecc", id->ecc);
}

// Kernel entries of one module are merged when it is compiled, and an
// option two of them set differently is dropped from both: say so when the
// winner's options meet such a kernel entry of another kernel.
void warn_of_conflicts(const cache::Store& store, const spaces::ControlSet& controls,
                       const std::vector<std::pair<std::string, Hash128>>& other_kernels) {
  if (controls.options.empty()) return;
  for (const auto& [name, key] : other_kernels) {
    auto text = store.get(cache::Table::records, digest_bytes(key));
    if (!text || !*text) continue;
    auto record = cache::parse_record(**text, "cache");
    if (!record) continue;
    for (const auto& [knob, value] : controls.options) {
      auto it = record->controls.options.find(knob);
      if (it != record->controls.options.end() && it->second != value)
        std::fprintf(stderr, "ciq-tuner: warning: the entry of %s, in the same module, sets %s = %s and this winner %s = %s: "
                             "the module's compiles apply neither (kernel entries that disagree on an option drop it)\n",
                     printable(name).c_str(), printable(knob).c_str(), printable(it->second).c_str(), printable(knob).c_str(),
                     printable(value).c_str());
    }
  }
}

// Where a shipped entry came from: the machine, the run, the verification
// and each objective's default and tuned values.
std::vector<std::pair<std::string, std::string>> provenance_of(const std::vector<TracedModule>& trace, const Verdict& verdict,
                                                                      const TuneOptions& options, int evaluations, bool no_gain) {
  std::vector<std::pair<std::string, std::string>> provenance{
      {"result", std::string(no_gain ? cache::record_result::no_gain : cache::record_result::tuned)},
      {"tuner", k_tuner_version},
      {"toolkit", trace.empty() ? "" : "ptxas " + trace.front().ptxas_version},
      {"evaluations", std::to_string(evaluations)},
      {"verification", verdict.method == VerifyMethod::none ? verdict.reason : method_name(verdict.method) + ": " + verdict.reason},
      {"p_value", verdict.method == VerifyMethod::welch           ? format_number(verdict.p_value)
                  : verdict.method == VerifyMethod::deterministic ? "n/a (deterministic objective)"
                                                                  : "n/a (nothing was verified)"},
      {"run_dir", options.out_dir},
      {"build_digest", to_hex(xxh128(options.setup.build))},
      {"bench_digest", to_hex(xxh128(options.setup.bench))},
      {"check_digest", to_hex(xxh128(options.setup.check))},
  };
  // How to run the search again (a retune, or by hand): the run's saved
  // command line, where it has one.
  if (std::string saved = join_path(options.out_dir, "command-line"); path_exists(saved))
    provenance.emplace_back(cache::tuned_on_key::command_line, saved);
  // Which run that was: its directory may hold another run later.
  if (std::string id = read_run_id(options.out_dir); !id.empty()) provenance.emplace_back(cache::tuned_on_key::run_id, id);
  add_gpu_identity(benchmarks_gpu(options), provenance);
  if (!verdict.conditions.empty()) provenance.emplace_back("gpu_conditions", verdict.conditions);
  for (std::size_t k = 0; k < options.setup.objectives.size(); ++k) {
    std::string name = options.setup.objectives[k].name;
    provenance.emplace_back("objective" + std::to_string(k), name);
    provenance.emplace_back("baseline" + std::to_string(k), format_number(verdict.default_values[k]));
    provenance.emplace_back("tuned" + std::to_string(k), format_number(verdict.best_values[k]));
  }
  return provenance;
}

Result<Hash128> key_of(const std::string& hex) {
  auto key = parse_digest<16>(hex);
  if (!key) return make_error("invalid", "bad key in the trace: '" + hex + "'");
  return *key;
}

// The module and kernel entries of the winner's trace: per module, its
// kernels' entries and (when the run tuned every kernel of it) the module
// entry. A run that tunes only some kernels of a module (a campaign runs
// one per kernel) files kernel entries alone: a module entry answers for
// every kernel of the module and is looked up first, so the next run on
// another of its kernels would replace this winner (or hide it behind its
// own). `only_kernels`, when given, is the run's part to write instead of
// every kernel --kernels selects. Those modules go to `partial_modules` (a module entry an earlier
// run left is removed for the same reason) and their other kernels to
// `other_kernels` (name, key).
Result<std::vector<cache::Entry>> kernel_entries(const std::vector<TracedModule>& trace, const spaces::ControlSet& controls,
                                                 const std::vector<std::pair<std::string, std::string>>& provenance,
                                                 const TuneOptions& options, const std::set<std::string>* only_kernels,
                                                 std::vector<Hash128>& partial_modules,
                                                 std::vector<std::pair<std::string, Hash128>>& other_kernels) {
  auto selected = [&](const std::string& name) {
    if (only_kernels) return only_kernels->count(name) > 0;
    return options.setup.kernels.empty() || glob_match(options.setup.kernels, name);
  };
  std::vector<cache::Entry> entries;
  for (const auto& m : trace) {
    auto module = key_of(m.module_key);
    if (!module) return module.error();
    cache::ModuleKeys keys{*module, {}};
    std::vector<std::pair<std::string, Hash128>> others;
    for (const auto& k : m.kernels) {
      auto key = key_of(k.key);
      if (!key) return key.error();
      if (!selected(k.name)) others.emplace_back(k.name, *key);
      else keys.kernels.emplace_back(k.name, *key);
    }
    if (keys.kernels.empty()) continue;
    cache::Record base;
    base.target = m.target;
    base.ptxas = m.ptxas_version;
    base.flags = m.flags;
    base.created = cache::utc_now();
    base.source = k_tuner_version;
    base.provenance = provenance;
    auto made = cache::module_entries(base, controls, keys, /*tuned=*/true);
    if (!others.empty() && std::find(partial_modules.begin(), partial_modules.end(), *module) == partial_modules.end()) {
      made.erase(made.begin()); // the module entry
      partial_modules.push_back(*module);
      other_kernels.insert(other_kernels.end(), others.begin(), others.end());
    }
    entries.insert(entries.end(), made.begin(), made.end());
  }
  return entries;
}

// The NVVM stage's entries: one per translation unit of the space, keyed by
// its cicc input (which no candidate changes).
Result<std::vector<cache::Entry>> unit_entries(const cache::Store& store, const SearchSpace& space, spaces::ControlSet unit_controls,
                                               const std::vector<std::pair<std::string, std::string>>& provenance,
                                               const TuneOptions& options) {
  std::vector<cache::Entry> entries;
  unit_controls.space = space.nvcc_space;
  for (const auto& u : options.units) {
    if (std::find(space.units.begin(), space.units.end(), u.key) == space.units.end()) continue;
    auto key = key_of(u.key);
    if (!key) return key.error();
    // A unit entry acts on every kernel of the unit. A run on some of
    // them that found nothing for this stage leaves an earlier run's
    // entry alone (a campaign's later runs must not undo its winners).
    bool partial = std::any_of(u.kernels.begin(), u.kernels.end(), [&](const std::string& k) {
      return !options.setup.kernels.empty() && !glob_match(options.setup.kernels, k);
    });
    if (partial) {
      auto existing = store.get(cache::Table::records, digest_bytes(*key));
      auto record = existing && *existing ? cache::parse_record(**existing, "cache") : Result<cache::Record>(make_error(ciq::errc::absent, ""));
      bool has_controls = record && !record->controls.options.empty();
      if (has_controls && unit_controls.options.empty()) continue;
      if (has_controls && record->controls.options != unit_controls.options)
        std::fprintf(stderr, "ciq-tuner: warning: %s's NVVM-stage entry (%s) is replaced: it acts on the whole unit, and "
                             "the kernels tuned with it before now compile differently\n",
                     printable(u.unit).c_str(), printable(spaces::summarise_control_set(record->controls)).c_str());
    }
    cache::Entry e{*key, {}};
    e.record.kind = cache::RecordKind::unit;
    e.record.unit = u.unit;
    e.record.target = u.target;
    e.record.nvcc = u.nvcc_version;
    e.record.created = cache::utc_now();
    e.record.source = k_tuner_version;
    e.record.provenance = provenance;
    e.record.controls = unit_controls;
    entries.push_back(std::move(e));
  }
  return entries;
}

// A run that found nothing better than the default says nothing against
// a winner an earlier run verified: that entry stays (better evidence
// wins, as in import and merge); `ciq-cache rm` drops it on purpose.
// `replaces_run` (--replaces-run): the command-line file of the run whose
// winners "tuned, no gain" replaces; only those the run now in its
// directory made (an --out path used again holds another run).
std::set<Hash128> keep_earlier_winners(const cache::Store& store, std::vector<cache::Entry>& entries, const std::string& replaces_run) {
  std::string replaced_id = replaces_run.empty() ? "" : read_run_id(dir_name(replaces_run));
  auto made_by_replaced_run = [&](const cache::Record& record) {
    cache::TunedOn on = cache::tuned_on(record);
    return !replaces_run.empty() && on.command_line == replaces_run && on.run_id == replaced_id;
  };
  std::set<Hash128> kept;
  std::size_t by_hand = 0; // entries no run made (ciq-cache put): nothing verified them
  std::erase_if(entries, [&](const cache::Entry& e) {
    auto existing = store.get(cache::Table::records, digest_bytes(e.key));
    if (!existing || !*existing) return false;
    auto record = cache::parse_record(**existing, "cache");
    // A retune --drop-losers of the run that shipped it: no gain now
    // replaces it, so that nothing tunes the kernel again for nothing.
    if (record && made_by_replaced_run(*record)) return false;
    bool winner = record && !record->controls.empty();
    if (winner) {
      kept.insert(e.key);
      by_hand += cache::tuned_on(*record).command_line.empty();
    }
    return winner;
  });
  if (!kept.empty()) {
    const char* made = by_hand == 0             ? "an earlier run shipped with a verified gain"
                       : by_hand == kept.size() ? "made by hand (ciq-cache put)"
                                                : "made earlier, by runs with a verified gain or by hand (ciq-cache put)";
    std::fprintf(stderr, "ciq-tuner: kept %zu entr%s %s: this run found nothing better than the default, which does not undo "
                         "that (ciq-cache rm removes one on purpose)\n",
                 kept.size(), kept.size() == 1 ? "y" : "ies", made);
  }
  return kept;
}

// A "tuned, no gain" module entry over a kernel winner kept above (another
// run's) would say the opposite of what applies (the lookup lets kernel
// entries answer over such a module entry: cache/storage.h). Such a module
// gets no entry of its own, and one left there is removed.
Result<void> unhide_kept_kernels(const std::vector<TracedModule>& trace, const std::set<Hash128>& kept,
                                 std::vector<cache::Entry>& entries, std::vector<Hash128>& partial_modules) {
  for (const auto& m : trace) {
    auto module = key_of(m.module_key);
    if (!module) return module.error();
    if (kept.count(*module)) continue; // a module winner: it answers for every kernel
    bool hides = false;
    for (const auto& k : m.kernels) {
      auto key = key_of(k.key);
      if (!key) return key.error();
      hides |= kept.count(*key) > 0;
    }
    if (!hides) continue;
    std::erase_if(entries, [&](const cache::Entry& e) { return e.key == *module; });
    if (std::find(partial_modules.begin(), partial_modules.end(), *module) == partial_modules.end()) partial_modules.push_back(*module);
  }
  return {};
}

// Takes away the module entries of `modules` that exist (records and
// quarantine marks, cache::remove_entries), saying which: this run tuned
// some of their kernels, and those kernels' entries answer for them now.
Result<void> remove_module_entries(cache::Store& store, const std::vector<Hash128>& modules) {
  std::vector<std::string> present;
  for (const auto& module : modules) {
    auto text = store.get(cache::Table::records, digest_bytes(module));
    if (!text) return text.error();
    if (*text) present.push_back(digest_bytes(module));
  }
  if (auto r = cache::remove_entries(store, present); !r) return r;
  for (const auto& raw : present)
    std::fprintf(stderr, "ciq-tuner: removed the module entry %s: this run tuned some of its kernels, and their kernel "
                         "entries answer for them now\n", bytes_to_hex(raw).substr(0, 12).c_str());
  return {};
}

} // namespace

Result<std::vector<Hash128>> ship(const SearchSpace& space, const EvalRecord& winner, const std::vector<TracedModule>& trace,
                                  const Verdict& verdict, const TuneOptions& options, int evaluations, bool no_gain,
                                  const std::set<std::string>* only_kernels) {
  auto candidate = space.parse(winner.candidate);
  if (!candidate) return candidate.error();
  spaces::ControlSet both = no_gain ? spaces::ControlSet{space.compiler_space, {}, {}, {}, space.nvcc_space, {}} : space.resolve(*candidate).controls;
  // Each record holds one stage: the ptxas entries are keyed by the PTX the
  // winner's NVVM options produced (its own trace), the unit entries by the
  // units' cicc input, which no candidate changes.
  spaces::ControlSet controls = both.ptxas_stage();
  auto provenance = provenance_of(trace, verdict, options, evaluations, no_gain);

  // Every module and kernel record (and the lifting of their quarantine)
  // in one transaction: a failure leaves the cache as it was, never a
  // module entry without its kernels'.
  std::vector<Hash128> partial_modules;
  std::vector<std::pair<std::string, Hash128>> other_kernels; // of those modules: name, key
  auto entries = kernel_entries(trace, controls, provenance, options, only_kernels, partial_modules, other_kernels);
  if (!entries) return entries.error();
  auto store = cache::Store::open_for_writing(options.cache_dir);
  if (!store) return store.error();
  if (!space.nvcc_space.empty() && !only_kernels) {
    auto units = unit_entries(*store, space, both.nvcc_stage(), provenance, options);
    if (!units) return units.error();
    entries->insert(entries->end(), units->begin(), units->end());
  }
  if (no_gain)
    if (auto unhidden = unhide_kept_kernels(trace, keep_earlier_winners(*store, *entries, options.replaces_run), *entries, partial_modules);
        !unhidden)
      return unhidden.error();
  warn_of_conflicts(*store, controls, other_kernels);
  if (auto r = cache::write_entries(*store, *entries); !r) return r.error();
  if (auto r = remove_module_entries(*store, partial_modules); !r) return r.error();
  std::vector<Hash128> written;
  for (const auto& e : *entries) written.push_back(e.key);
  return written;
}

Result<std::vector<Hash128>> ship_result(const TuneOptions& o, const SearchSpace& space,
                                                      const std::vector<EvalRecord>& records, const EvalRecord& def,
                                                      const EvalRecord* winner, const Verdict& verdict,
                                                      const std::vector<TracedModule>& discovery,
                                                      const std::set<std::string>* only_kernels) {
  const EvalRecord* source = winner ? winner : &def;
  // Parameters are the program's to apply: only compiler controls reach the
  // cache. A winner that won by its parameters alone has the default's
  // controls: for the compiler that is "tuned, no gain".
  std::string knobs, params;
  if (winner) {
    auto c = space.parse(winner->candidate);
    if (!c) return c.error();
    Candidate controls_only = *c, none = space.default_candidate(); // the winner with its parameters at their defaults
    for (std::size_t i = 0; i < space.dimensions.size(); ++i)
      if (space.dimensions[i].kind == DimensionKind::param) {
        controls_only.genes[i] = none.genes[i];
        params += (params.empty() ? "" : " ") + space.dimensions[i].knob + "=" + space.param(*c, space.dimensions[i].knob);
      }
    if (space.canonical(controls_only) != space.canonical(none)) knobs = space.canonical(controls_only);
  }
  bool compiler_gain = winner && !knobs.empty();
  auto trace = read_trace(join_path(source->workdir, "trace"));
  if (!trace || trace->empty()) trace = discovery;
  auto written = ship(space, *source, *trace, verdict, o, int(records.size()), !compiler_gain, only_kernels);
  if (!written) return written.error();
  if (compiler_gain) {
    std::fprintf(stderr, "ciq-tuner: shipped %s to %zu cache entr%s in %s\n", knobs.c_str(), written->size(), written->size() == 1 ? "y" : "ies", o.cache_dir.c_str());
  } else if (winner) {
    std::fprintf(stderr, "ciq-tuner: the winner differs from the default in its parameters only: recorded %zu entr%s as tuned "
                         "with no gain from the compiler\n", written->size(), written->size() == 1 ? "y" : "ies");
  } else if (only_kernels) {
    std::string names;
    for (const auto& k : *only_kernels) names += (names.empty() ? "" : ", ") + k;
    std::fprintf(stderr, "ciq-tuner: nothing beat the default for %s; recorded %zu entr%s as tuned with no gain\n",
                 printable(names).c_str(), written->size(), written->size() == 1 ? "y" : "ies");
  } else {
    std::fprintf(stderr, "ciq-tuner: nothing beat the default; recorded %zu entr%s as tuned with no gain\n", written->size(),
                 written->size() == 1 ? "y" : "ies");
  }
  if (!params.empty())
    std::fprintf(stderr, "ciq-tuner: the winner's parameters are yours to apply (the cache holds compiler controls only): %s\n",
                 params.c_str());
  return written;
}

std::string publish_shipped(const TuneOptions& o, const std::vector<Hash128>& shipped_keys) {
  auto published = cache::push_cache(o.cache_dir, o.publish, shipped_keys);
  if (!published) return published.error().message;
  std::fprintf(stderr, "ciq-tuner: published %d entr%s to %s (%d kept: the remote result is better)\n", published->pushed,
               published->pushed == 1 ? "y" : "ies", redact_secrets(o.publish).c_str(), published->kept_remote);
  for (const auto& why : published->refused) // the wrappers' rule: unsafe knobs need CIQ_ALLOW_UNSAFE=1
    std::fprintf(stderr, "ciq-tuner: not published: %s\n", printable(why.message).c_str());
  return "";
}

} // namespace ciq::tuner
