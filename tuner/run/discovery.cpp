#include "tuner/run/discovery.h"

#include "spaces/space.h"
#include "tuner/measure/evaluator.h"
#include "tuner/measure/executor.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// What a discovery's trace holds at most, all its files together: far above
// a real one (llm.c's, 26 kernels: under 100 KB).
constexpr std::uint64_t k_max_trace_bytes = std::uint64_t(64) << 20;

// Copies the trace a discovery wrote (its .json files, and those of its
// subdirectories: units/, steps/) from `from` to `to`, reading only from
// directories that are yours alone, only regular files (no link followed),
// `budget` bytes in all.
Result<void> copy_trace(const std::string& from, const std::string& to, std::uint64_t& budget, int depth = 0) {
  if (auto own = check_own_directory(from); !own) return own.error();
  auto names = list_directory(from);
  if (!names) return names.error();
  if (auto made = make_own_directory(to); !made) return made.error();
  for (const auto& name : *names) {
    std::string source = join_path(from, name), target = join_path(to, name);
    struct stat st;
    if (::lstat(source.c_str(), &st) != 0) return make_error("io", "cannot look at " + source + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) {
      if (depth == 0)
        if (auto copied = copy_trace(source, target, budget, depth + 1); !copied) return copied;
      continue;
    }
    if (!ends_with(name, ".json")) continue; // the trace's records; nothing else is read
    auto fd = open_regular_file(source, O_RDONLY | O_NOFOLLOW);
    if (!fd) return fd.error();
    auto text = read_bounded(*fd, source, budget); // closes fd
    if (!text) return text.error();
    budget -= text->size();
    if (auto w = write_file_atomic(target, *text); !w) return w.error();
  }
  return {};
}

// --discovery-from: the campaign's discovery, of the same build, copied into
// this run's own `dir` (a resumed run then reads its own, whatever became of
// the campaign's); why not, when it cannot be taken.
Result<void> take_discovery(const std::string& from, const std::string& dir) {
  if (auto own = check_own_directory(from); !own) return own.error();
  if (!path_exists(join_path(from, "complete"))) return make_error("tuner", from + " holds no completed discovery");
  if (auto made = make_own_directory(dir); !made) return made.error();
  remove_tree(join_path(dir, "trace")); // what an interrupted copy left
  std::uint64_t budget = k_max_trace_bytes;
  if (auto copied = copy_trace(join_path(from, "trace"), join_path(dir, "trace"), budget); !copied) return copied;
  return write_file_atomic(join_path(dir, "complete"), "");
}

// The discovery's trace in `dir`: the interrupted run's when resuming (a
// resumed run searches the space the run began with: built again, the NVVM
// stage would be missing, since the step memo answers cicc and no unit is
// traced, and the journal's candidates would belong to another space), else
// a copy of the campaign's of --discovery-from (the same build's; on the
// H200, llm.c: 8 s of each 55-75 s confirmation built it again), else a
// build of the default now (or, with a --bench alone, a run of it).
Result<std::vector<TracedModule>> discovery_trace(const TuneOptions& o, const std::string& dir) {
  std::string complete = join_path(dir, "complete"); // written once the discovery succeeded
  if (o.resume && path_exists(complete)) {
    std::fprintf(stderr, "ciq-tuner: discovery: the interrupted run's (%s)\n", dir.c_str());
    return read_trace(join_path(dir, "trace"));
  }
  if (!o.discovery_from.empty()) {
    if (auto taken = take_discovery(o.discovery_from, dir); taken) {
      std::fprintf(stderr, "ciq-tuner: discovery: the campaign's, copied from %s\n", printable(o.discovery_from).c_str());
      return read_trace(join_path(dir, "trace"));
    } else {
      std::fprintf(stderr, "ciq-tuner: warning: --discovery-from %s: %s; building the discovery instead\n",
                   printable(o.discovery_from).c_str(), printable(taken.error().message).c_str());
      remove_tree(join_path(dir, "trace")); // what was copied before it failed: not this build's
    }
  }
  std::fprintf(stderr, "ciq-tuner: discovery build (default controls, traced)\n");
  // The default controls, and each --param at its default: commands
  // may name {param:NAME}.
  SearchSpace empty;
  empty.compiler_space = o.space;
  for (const auto& spec : o.params) {
    auto d = parse_param(spec);
    if (!d) return d.error();
    empty.dimensions.push_back(std::move(*d));
  }
  Evaluator probe(o.setup, empty);
  ResolvedCandidate none = empty.resolve(empty.default_candidate());
  ::unlink(complete.c_str());
  auto trace = probe.build(none, dir);
  if (!trace) return make_error("tuner", "the discovery build failed: " + trace.error().message);
  if (trace->empty() && !o.setup.bench.empty() && o.setup.build.empty()) {
    if (auto ran = probe.bench_once(none, dir); !ran) return make_error("tuner", "the discovery run failed: " + ran.error().message);
    trace = read_trace(join_path(dir, "trace"));
    if (!trace) return trace.error();
  }
  if (auto w = write_file_atomic(complete, ""); !w) return w.error();
  return trace;
}

// What the discovery found, on stderr: the units, the modules, each kernel
// (starred when --kernels selects it). Fails when --kernels selects none.
Result<void> say_discovered(const TuneOptions& o, const std::vector<TracedModule>& discovery, const std::vector<TracedUnit>& units) {
  if (!units.empty()) std::fprintf(stderr, "ciq-tuner: found %zu translation unit compile(s) through ciq-nvcc (NVVM stage)\n", units.size());
  std::size_t kernels = 0;
  for (const auto& m : discovery) kernels += m.kernels.size();
  std::fprintf(stderr, "ciq-tuner: found %zu kernel(s) in %zu module(s)%s\n", kernels, discovery.size(),
               discovery.empty() ? "" : printable(" (ptxas " + discovery.front().ptxas_version + ", " + discovery.front().target + ")").c_str());
  std::size_t targeted_count = 0;
  for (const auto& m : discovery)
    for (const auto& k : m.kernels) {
      bool targeted = o.setup.kernels.empty() || glob_match(o.setup.kernels, k.name);
      targeted_count += targeted;
      std::fprintf(stderr, "  %s %s  key %s  %g registers, %g bytes spilled\n", targeted ? "*" : " ", printable(k.name).c_str(),
                   printable(k.key.substr(0, 12)).c_str(), k.registers, k.spill_stores);
    }
  // A glob that selects nothing would tune nothing: every candidate
  // invalid, or the default "best". (The names above are the mangled
  // ones the glob is matched against.)
  if (kernels > 0 && targeted_count == 0)
    return make_error("invalid", "--kernels '" + o.setup.kernels + "' matches none of the " + std::to_string(kernels) +
                                     " kernel(s) the build compiled (listed above; --kernels matches these mangled names, "
                                     "e.g. '*scale*' for scale(float*, int))");
  return {};
}

} // namespace

Result<std::vector<TracedModule>> discover(const TuneOptions& o, std::vector<TracedUnit>& units) {
  // A space named that does not exist: said before the build runs.
  if (!o.space.empty() && o.space != "none")
    if (auto named = spaces::load_space(spaces_directory(), o.space); !named) return named.error();
  if (o.space == "none" || o.setup.replay) return std::vector<TracedModule>{};
  const std::string dir = join_path(o.out_dir, "discovery");
  auto discovery = discovery_trace(o, dir);
  if (!discovery) return discovery.error();
  if (auto traced = read_unit_trace(join_path(dir, "trace")); traced) units = std::move(*traced);
  else std::fprintf(stderr, "ciq-tuner: warning: %s; searching without NVVM-stage knobs\n", printable(traced.error().message).c_str());
  if (auto said = say_discovered(o, *discovery, units); !said) return said.error();
  return discovery;
}

std::vector<std::string> module_mates(const std::vector<TracedModule>& modules, const std::vector<Objective>& objectives) {
  const Objective* timed = kernel_time_objective(objectives);
  if (!timed || timed->pattern.empty()) return {};
  std::vector<std::string> mates;
  for (const auto& m : modules) {
    auto in = [&](const TracedKernel& k) { return glob_match(timed->pattern, k.name); };
    if (std::none_of(m.kernels.begin(), m.kernels.end(), in)) continue;
    for (const auto& k : m.kernels)
      if (!in(k) && std::find(mates.begin(), mates.end(), k.name) == mates.end()) mates.push_back(k.name);
  }
  return mates;
}

Result<std::vector<std::string>> discover_kernels(TuneOptions o) {
  if (o.space == "none") return make_error("tuner", "a campaign tunes kernels: it needs a compiler space, not --space none");
  if (auto checked = prepare_run(o); !checked) return checked.error();
  if (o.setup.replay) return make_error("tuner", "a campaign runs builds: --replay does not apply");
  o.setup.executor->use_run_directory(o.out_dir);
  std::vector<TracedUnit> units;
  auto modules = discover(o, units);
  if (!modules) return modules.error();
  std::vector<std::string> names;
  for (const auto& m : *modules)
    for (const auto& k : m.kernels)
      if ((o.setup.kernels.empty() || glob_match(o.setup.kernels, k.name)) &&
          std::find(names.begin(), names.end(), k.name) == names.end())
        names.push_back(k.name);
  return names;
}

} // namespace ciq::tuner
