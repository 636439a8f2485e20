#include "tuner/orchestrate/ship.h"

#include "cache/entries.h"
#include "cache/record.h"
#include "cache/store.h"
#include "tuner/measure/gpu_monitor.h"
#include "tuner/objectives/statistics.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// "NVIDIA H200, 570.86" from nvidia-smi, or "" without a GPU.
std::pair<std::string, std::string> gpu_and_driver() {
  RunOptions o;
  o.argv = {"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"};
  o.capture_stdout = o.capture_stderr = o.stdin_null = true;
  o.timeout_seconds = 10;
  auto r = run_process(o);
  if (!r || !r->succeeded()) return {"none", "none"};
  std::string line(trim(r->out.substr(0, r->out.find('\n'))));
  auto comma = line.find(',');
  if (comma == std::string::npos) return {line, ""};
  return {std::string(trim(line.substr(0, comma))), std::string(trim(line.substr(comma + 1)))};
}

// Re-measures the default and the winner in interleaved pairs (A B A B ...,
// so that drift hits both alike) into `a` and `b`, per objective, and
// writes every value to verify/samples.csv; why it could not, or "".
std::string remeasure(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
                      const TuneOptions& options, std::vector<std::vector<double>>& a, std::vector<std::vector<double>>& b,
                      std::vector<GpuState> (&states)[2]) {
  const auto& objectives = options.setup.objectives;
  auto dc = space.parse(def.candidate), bc = space.parse(best.candidate);
  if (!dc || !bc) return "cannot read back the candidates to verify";
  std::string root = join_path(options.out_dir, "verify");
  std::string dir_a = join_path(root, "default"), dir_b = join_path(root, "best");
  bool rebuild = !options.setup.build.empty() && options.setup.build.find("{workdir}") == std::string::npos;
  if (!rebuild) {
    if (auto t = evaluator.build(*dc, dir_a); !t) return "verification build of the default failed: " + t.error().message;
    if (auto t = evaluator.build(*bc, dir_b); !t) return "verification build of the winner failed: " + t.error().message;
  }
  for (int i = 0; i < options.verify_runs; ++i) {
    for (int side = 0; side < 2; ++side) {
      const Candidate& c = side == 0 ? *dc : *bc;
      const std::string& dir = side == 0 ? dir_a : dir_b;
      if (rebuild)
        if (auto t = evaluator.build(c, dir); !t) return "verification build failed: " + t.error().message;
      BenchRun run;
      run.gpu = evaluator.verification_gpu(); // both sides on one GPU: no GPU's difference in the comparison
      auto values = evaluator.bench_once(c, dir, run);
      if (run.state.read) states[side].push_back(run.state);
      if (!values) return "verification run failed: " + values.error().message;
      std::size_t m = 0;
      for (std::size_t k = 0; k < objectives.size(); ++k)
        if (objectives[k].needs_benchmark()) (side == 0 ? a : b)[k].push_back((*values)[m++]);
    }
    if (::isatty(2)) std::fprintf(stderr, "\r\033[Kciq-tuner: verifying: %d/%d interleaved pairs", i + 1, options.verify_runs);
  }
  if (::isatty(2)) std::fprintf(stderr, "\n");
  std::fprintf(stderr, "ciq-tuner: verified over %d interleaved pairs\n", options.verify_runs);
  // Every re-measured value, for `ciq-tuner report` (and for people).
  std::string csv = "side,objective,run,value\n";
  for (std::size_t k = 0; k < objectives.size(); ++k)
    for (int side = 0; side < 2; ++side) {
      const auto& values = side == 0 ? a[k] : b[k];
      for (std::size_t i = 0; i < values.size(); ++i)
        csv += std::string(side == 0 ? "default" : "best") + "," + csv_field(objectives[k].name) + "," + std::to_string(i) + "," +
               format_number(values[i]) + "\n";
    }
  // A replay builds nothing, so nothing has made the directory yet.
  if (auto made = make_dirs(root); !made) std::fprintf(stderr, "ciq-tuner: warning: %s\n", made.error().message.c_str());
  else if (auto w = write_file_atomic(join_path(root, "samples.csv"), csv); !w)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", w.error().message.c_str());
  return "";
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

} // namespace

// How the GPU's state differed between the default's runs and the
// winner's: slow-down reasons (power cap, thermal, ...) seen on one side
// only, or SM clocks whose medians differ by more than 2 %. "" when alike
// or not read.
std::string compare_conditions(const std::vector<GpuState> (&states)[2]) {
  if (states[0].empty() || states[1].empty()) return "";
  std::uint64_t reasons[2] = {0, 0};
  std::vector<double> clocks[2];
  for (int side = 0; side < 2; ++side)
    for (const auto& s : states[side]) {
      reasons[side] |= slowdown_reasons(s.reasons);
      clocks[side].push_back(s.sm_mhz_min);
    }
  std::string out;
  if (reasons[0] != reasons[1]) {
    auto names = [](std::uint64_t r) { return r ? clock_event_names(r) : std::string("none"); };
    out = "clock slow-downs: default " + names(reasons[0]) + ", winner " + names(reasons[1]);
  }
  double c0 = median(clocks[0]), c1 = median(clocks[1]);
  if (c0 > 0 && c1 > 0 && std::fabs(c0 - c1) / c0 > 0.02)
    out += (out.empty() ? "" : "; ") + std::string("lowest SM clock (median of runs): default ") + format_number(c0) +
           " MHz, winner " + format_number(c1) + " MHz";
  return out;
}

Verdict verify(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
               const TuneOptions& options) {
  Verdict v;
  const auto& objectives = options.setup.objectives;
  std::vector<std::size_t> noisy;
  for (std::size_t k = 0; k < objectives.size(); ++k)
    if (!objectives[k].deterministic()) noisy.push_back(k);

  v.default_values.resize(objectives.size());
  v.best_values.resize(objectives.size());
  bool any_better = false, any_worse = false;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    if (!objectives[k].deterministic()) continue;
    double a = def.evaluation.objectives[k], b = best.evaluation.objectives[k];
    v.default_values[k] = objectives[k].maximize ? -a : a;
    v.best_values[k] = objectives[k].maximize ? -b : b;
    any_better |= b < a;
    any_worse |= b > a;
  }
  v.how = "deterministic";

  double first_effect = 0; // the first objective's relative gain in the verification
  if (!noisy.empty()) {
    v.how = "welch";
    std::vector<std::vector<double>> a(objectives.size()), b(objectives.size());
    std::vector<GpuState> states[2];
    if (auto why = remeasure(evaluator, space, def, best, options, a, b, states); !why.empty()) {
      v.reason = why;
      return v;
    }
    v.conditions = compare_conditions(states);
    bool first = true;
    for (auto k : noisy) {
      if (!objectives[k].needs_benchmark()) { // compile-time: use the search's samples
        a[k] = def.samples[k];
        b[k] = best.samples[k];
      }
      v.default_values[k] = median(a[k]);
      v.best_values[k] = median(b[k]);
      // In minimisation form: a candidate is better when its values are lower.
      std::vector<double> am = a[k], bm = b[k];
      if (objectives[k].maximize) {
        for (auto& x : am) x = -x;
        for (auto& x : bm) x = -x;
      }
      WelchResult w = welch_t_test(bm, am);
      double base = std::fabs(median(am));
      double effect = base > 0 ? (median(am) - median(bm)) / base : 0;
      if (first) v.p_value = w.p_less, first_effect = effect;
      first = false;
      if (w.p_less < options.alpha && effect >= options.min_effect) any_better = true;
      if (1 - w.p_less < options.alpha && -effect >= options.min_effect) any_worse = true;
    }
  }
  v.better = any_better && !any_worse;
  if (v.better && !v.conditions.empty()) {
    // The difference may be the GPU's, not the code's: not shipped on it.
    v.better = false;
    v.reason = "better than the default, but the two ran under different GPU conditions (" + v.conditions +
               "), so the difference may be the GPU's: not shipped; tune again when the GPU is steady";
  } else if (v.better) v.reason = "better than the default";
  else if (any_worse) v.reason = "worse than the default on at least one objective";
  else if (v.how == "welch" && v.p_value < options.alpha && first_effect > 0)
    v.reason = "better than the default by only " + format_number(std::round(first_effect * 1000) / 10) +
               " %, less than the minimum effect of " + format_number(options.min_effect * 100) + " % (p = " +
               format_number(v.p_value) + ")";
  else v.reason = "not significantly better than the default (p = " + format_number(v.p_value) + ", minimum effect " +
                  format_number(options.min_effect * 100) + " %)";
  if (!v.better && !v.conditions.empty() && v.reason.find("GPU conditions") == std::string::npos)
    v.reason += "; note: the two ran under different GPU conditions (" + v.conditions + ")";
  return v;
}

// Where a shipped entry came from: the machine, the run, the verification
// and each objective's default and tuned values.
static std::vector<std::pair<std::string, std::string>> provenance_of(const std::vector<TracedModule>& trace, const Verdict& verdict,
                                                                      const TuneOptions& options, int evaluations, bool no_gain) {
  auto [gpu, driver] = gpu_and_driver();

  std::vector<std::pair<std::string, std::string>> provenance{
      {"result", no_gain ? "no-gain" : "tuned"},
      {"tuner", k_tuner_version},
      {"gpu", gpu},
      {"driver", driver},
      {"toolkit", trace.empty() ? "" : "ptxas " + trace.front().ptxas_version},
      {"evaluations", std::to_string(evaluations)},
      {"verification", verdict.how.empty() ? verdict.reason : verdict.how + ": " + verdict.reason},
      {"p_value", verdict.how == "welch"           ? format_number(verdict.p_value)
                  : verdict.how == "deterministic" ? "n/a (deterministic objective)"
                                                   : "n/a (nothing was verified)"},
      {"run_dir", options.out_dir},
      {"build_digest", to_hex(xxh128(options.setup.build))},
      {"bench_digest", to_hex(xxh128(options.setup.bench))},
      {"check_digest", to_hex(xxh128(options.setup.check))},
  };
  // The GPU as NVML sees it (where the benchmarks ran on this machine).
  if (Nvml* nvml = options.setup.slurm ? nullptr : Nvml::get())
    if (auto id = nvml->identity(options.setup.gpus.empty() ? "" : options.setup.gpus.front())) {
      if (!id->name.empty()) provenance.emplace_back("gpu_nvml", id->name);
      if (!id->driver.empty()) provenance.emplace_back("driver_nvml", id->driver);
      provenance.emplace_back("power_limit_w", format_number(id->power_limit_w));
      provenance.emplace_back("ecc", id->ecc);
    }
  if (!verdict.conditions.empty()) provenance.emplace_back("gpu_conditions", verdict.conditions);
  for (std::size_t k = 0; k < options.setup.objectives.size(); ++k) {
    std::string name = options.setup.objectives[k].name;
    provenance.emplace_back("objective" + std::to_string(k), name);
    provenance.emplace_back("baseline" + std::to_string(k), format_number(verdict.default_values[k]));
    provenance.emplace_back("tuned" + std::to_string(k), format_number(verdict.best_values[k]));
  }
  return provenance;
}

Result<std::vector<Hash128>> ship(const SearchSpace& space, const EvalRecord& winner, const std::vector<TracedModule>& trace,
                                      const Verdict& verdict, const TuneOptions& options, int evaluations, bool no_gain) {
  auto candidate = space.parse(winner.candidate);
  if (!candidate) return candidate.error();
  spaces::ControlSet both = no_gain ? spaces::ControlSet{space.compiler_space, {}, {}, {}, space.nvcc_space, {}} : space.controls(*candidate);
  // Each record holds one stage: the ptxas entries are keyed by the PTX the
  // winner's NVVM options produced (its own trace), the unit entries by the
  // units' cicc input, which no candidate changes.
  spaces::ControlSet controls = both.ptxas_stage();
  auto provenance = provenance_of(trace, verdict, options, evaluations, no_gain);

  // Every module and kernel record (and the lifting of their quarantine)
  // in one transaction: a failure leaves the cache as it was, never a
  // module entry without its kernels'.
  std::vector<cache::Entry> entries;
  auto key_of = [](const std::string& hex) -> Result<Hash128> {
    auto key = parse_digest<16>(hex);
    if (!key) return make_error("invalid", "bad key in the trace: '" + hex + "'");
    return *key;
  };
  // A run that tunes only some kernels of a module (a campaign runs one per
  // kernel) files kernel entries alone: a module entry answers for every
  // kernel of the module and is looked up first, so the next run on another
  // of its kernels would replace this winner (or hide it behind its own). A
  // module entry an earlier run left is removed for the same reason: its
  // kernels' entries, written with it, answer instead.
  std::vector<Hash128> partial_modules;
  std::vector<std::pair<std::string, Hash128>> other_kernels; // of those modules: name, key
  for (const auto& m : trace) {
    auto module = key_of(m.module_key);
    if (!module) return module.error();
    cache::ModuleKeys keys{*module, {}};
    std::vector<std::pair<std::string, Hash128>> others;
    for (const auto& k : m.kernels) {
      auto key = key_of(k.key);
      if (!key) return key.error();
      if (!options.setup.kernels.empty() && !glob_match(options.setup.kernels, k.name)) others.emplace_back(k.name, *key);
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
  auto store = cache::Store::open_for_writing(options.cache_dir);
  if (!store) return store.error();
  if (!space.nvcc_space.empty()) {
    spaces::ControlSet unit_controls = both.nvcc_stage();
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
        auto existing = store->get(cache::Table::records, digest_bytes(*key));
        auto record = existing && *existing ? cache::parse_record(**existing, "cache") : Result<cache::Record>(make_error("absent", ""));
        bool has_controls = record && !record->controls.options.empty();
        if (has_controls && unit_controls.options.empty()) continue;
        if (has_controls && record->controls.options != unit_controls.options)
          std::fprintf(stderr, "ciq-tuner: warning: %s's NVVM-stage entry (%s) is replaced: it acts on the whole unit, and "
                               "the kernels tuned with it before now compile differently\n",
                       printable(u.unit).c_str(), printable(spaces::summarise_control_set(record->controls)).c_str());
      }
      cache::Entry e{*key, {}};
      e.record.kind = "unit";
      e.record.unit = u.unit;
      e.record.target = u.target;
      e.record.nvcc = u.nvcc_version;
      e.record.created = cache::utc_now();
      e.record.source = k_tuner_version;
      e.record.provenance = provenance;
      e.record.controls = unit_controls;
      entries.push_back(std::move(e));
    }
  }
  // A run that found nothing better than the default says nothing against
  // a winner an earlier run verified: that entry stays (better evidence
  // wins, as in import and merge); `ciq-cache rm` drops it on purpose.
  if (no_gain) {
    std::size_t kept = 0;
    std::erase_if(entries, [&](const cache::Entry& e) {
      auto existing = store->get(cache::Table::records, digest_bytes(e.key));
      if (!existing || !*existing) return false;
      auto record = cache::parse_record(**existing, "cache");
      bool winner = record && !record->controls.empty();
      kept += winner;
      return winner;
    });
    if (kept)
      std::fprintf(stderr, "ciq-tuner: kept %zu entr%s an earlier run shipped with a verified gain: this run found nothing "
                           "better than the default, which does not undo that (ciq-cache rm removes one on purpose)\n",
                   kept, kept == 1 ? "y" : "ies");
  }
  warn_of_conflicts(*store, controls, other_kernels);
  if (auto r = cache::write_entries(*store, entries); !r) return r.error();
  for (const auto& module : partial_modules) {
    auto removed = store->remove(cache::Table::records, digest_bytes(module));
    if (!removed) return removed.error();
    if (*removed)
      std::fprintf(stderr, "ciq-tuner: removed the module entry %s: this run tuned some of its kernels, and their kernel "
                           "entries answer for them now\n", to_hex(module).substr(0, 12).c_str());
  }
  std::vector<Hash128> written;
  for (const auto& e : entries) written.push_back(e.key);
  return written;
}

} // namespace ciq::tuner
