#include "tuner/ship.h"

#include "cache/record.h"
#include "cache/store.h"
#include "tuner/statistics.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/text.h"

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

} // namespace

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

  if (!noisy.empty()) {
    v.how = "welch";
    auto dc = space.parse(def.candidate), bc = space.parse(best.candidate);
    std::string root = join_path(options.out_dir, "verify");
    std::string dir_a = join_path(root, "default"), dir_b = join_path(root, "best");
    bool rebuild = !options.setup.build.empty() && options.setup.build.find("{workdir}") == std::string::npos;
    std::vector<std::vector<double>> a(objectives.size()), b(objectives.size());
    auto build_side = [&](const Candidate& c, const std::string& dir) -> Result<void> {
      auto t = evaluator.build(c, dir);
      if (!t) return t.error();
      return {};
    };
    if (!rebuild) {
      if (auto r = build_side(*dc, dir_a); !r) { v.reason = "verification build of the default failed: " + r.error().message; return v; }
      if (auto r = build_side(*bc, dir_b); !r) { v.reason = "verification build of the winner failed: " + r.error().message; return v; }
    }
    for (int i = 0; i < options.verify_runs; ++i) {
      for (int side = 0; side < 2; ++side) { // A B A B ...
        const Candidate& c = side == 0 ? *dc : *bc;
        const std::string& dir = side == 0 ? dir_a : dir_b;
        if (rebuild) {
          if (auto r = build_side(c, dir); !r) { v.reason = "verification build failed: " + r.error().message; return v; }
        }
        auto values = evaluator.bench_once(c, dir);
        if (!values) { v.reason = "verification run failed: " + values.error().message; return v; }
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
    if (auto w = write_file_atomic(join_path(root, "samples.csv"), csv); !w)
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", w.error().message.c_str());
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
      if (first) v.p_value = w.p_less;
      first = false;
      if (w.p_less < options.alpha && effect >= options.min_effect) any_better = true;
      if (1 - w.p_less < options.alpha && -effect >= options.min_effect) any_worse = true;
    }
  }
  v.better = any_better && !any_worse;
  if (v.better) v.reason = "better than the default";
  else if (any_worse) v.reason = "worse than the default on at least one objective";
  else v.reason = "not significantly better than the default (p = " + format_number(v.p_value) + ", minimum effect " +
                  format_number(options.min_effect * 100) + " %)";
  return v;
}

Result<std::vector<std::string>> ship(const SearchSpace& space, const EvalRecord& winner, const std::vector<TracedModule>& trace,
                                      const Verdict& verdict, const TuneOptions& options, int evaluations, bool no_gain) {
  auto candidate = space.parse(winner.candidate);
  if (!candidate) return candidate.error();
  spaces::ControlSet both = no_gain ? spaces::ControlSet{space.compiler_space, {}, {}, {}, space.nvcc_space, {}} : space.controls(*candidate);
  // Each record holds one stage: the ptxas entries are keyed by the PTX the
  // winner's NVVM options produced (its own trace), the unit entries by the
  // units' cicc input, which no candidate changes.
  spaces::ControlSet controls = both.ptxas_stage();
  auto [gpu, driver] = gpu_and_driver();

  std::vector<std::pair<std::string, std::string>> provenance{
      {"result", no_gain ? "no-gain" : "tuned"},
      {"tuner", k_tuner_version},
      {"gpu", gpu},
      {"driver", driver},
      {"toolkit", trace.empty() ? "" : "ptxas " + trace.front().ptxas_version},
      {"evaluations", std::to_string(evaluations)},
      {"verification", verdict.how + ": " + verdict.reason},
      {"p_value", verdict.how == "welch" ? format_number(verdict.p_value) : "n/a (deterministic objective)"},
      {"run_dir", options.out_dir},
      {"build_digest", to_hex(xxh128(options.setup.build))},
      {"bench_digest", to_hex(xxh128(options.setup.bench))},
      {"check_digest", to_hex(xxh128(options.setup.check))},
  };
  for (std::size_t k = 0; k < options.setup.objectives.size(); ++k) {
    std::string name = options.setup.objectives[k].name;
    provenance.emplace_back("objective" + std::to_string(k), name);
    provenance.emplace_back("baseline" + std::to_string(k), format_number(verdict.default_values[k]));
    provenance.emplace_back("tuned" + std::to_string(k), format_number(verdict.best_values[k]));
  }

  auto store = cache::Store::open_for_writing(options.cache_dir);
  if (!store) return store.error();
  // Every module and kernel record (and the lifting of their quarantine)
  // in one transaction: a failure leaves the cache as it was, never a
  // module entry without its kernels'.
  std::vector<std::string> written;
  std::vector<cache::Change> changes;
  auto put = [&](const std::string& hex, cache::Record record) -> Result<void> {
    auto key = hex_to_bytes(hex, 16);
    if (!key) return make_error("invalid", "bad key in the trace: " + hex);
    changes.push_back({cache::Table::records, *key, cache::format_record(record)});
    changes.push_back({cache::Table::quarantine, *key, std::nullopt});
    written.push_back(*key);
    return {};
  };
  for (const auto& m : trace) {
    std::vector<std::string> targeted;
    for (const auto& k : m.kernels)
      if (options.setup.kernels.empty() || glob_match(options.setup.kernels, k.name)) targeted.push_back(k.name);
    if (targeted.empty()) continue;
    cache::Record base;
    base.target = m.target;
    base.ptxas = m.ptxas_version;
    base.flags = m.flags;
    base.created = cache::utc_now();
    base.source = k_tuner_version;
    base.provenance = provenance;
    cache::Record whole = base;
    whole.kind = "module";
    whole.controls = controls;
    for (auto it = whole.controls.kernels.begin(); it != whole.controls.kernels.end();)
      it = std::find_if(m.kernels.begin(), m.kernels.end(), [&](auto& k) { return k.name == it->first; }) == m.kernels.end()
               ? whole.controls.kernels.erase(it)
               : std::next(it);
    if (auto r = put(m.module_key, whole); !r) return r.error();
    for (const auto& k : m.kernels) {
      if (std::find(targeted.begin(), targeted.end(), k.name) == targeted.end()) continue;
      cache::Record r = base;
      r.kind = "kernel";
      r.kernel = k.name;
      r.controls = controls.for_kernel(k.name);
      if (auto w = put(k.key, r); !w) return w.error();
    }
  }
  if (!space.nvcc_space.empty()) {
    spaces::ControlSet unit_controls = both.nvcc_stage();
    unit_controls.space = space.nvcc_space;
    for (const auto& u : options.units) {
      if (std::find(space.units.begin(), space.units.end(), u.key) == space.units.end()) continue;
      cache::Record r;
      r.kind = "unit";
      r.unit = u.unit;
      r.target = u.target;
      r.nvcc = u.nvcc_version;
      r.created = cache::utc_now();
      r.source = k_tuner_version;
      r.provenance = provenance;
      r.controls = unit_controls;
      if (auto w = put(u.key, r); !w) return w.error();
    }
  }
  if (auto r = store->apply(changes); !r) return r.error();
  return written;
}

} // namespace ciq::tuner
