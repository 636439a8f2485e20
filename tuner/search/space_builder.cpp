#include "tuner/search/space_builder.h"

#include "cache/ptxas_identity.h"
#include "tuner/search/occupancy.h"
#include "utils/config.h"
#include "utils/text.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace ciq::tuner {

namespace {

// Big integer ranges are searched on a coarser grid (at most ~32 values,
// ends included): neighbouring register caps rarely differ in speed.
// Block-size knobs (dims) are searched over one-dimensional powers of two.
// Values below the knob's floor are never searched: ptxas raises them to
// the floor with a warning, so they only repeat the floor's code.
std::vector<std::string> search_domain(const spaces::Knob& knob) {
  if (knob.dims) {
    std::vector<std::string> out;
    for (long long v = 32; v <= *knob.hi; v *= 2)
      if (v >= *knob.lo) out.push_back(std::to_string(v));
    return out;
  }
  auto all = knob.domain();
  if (knob.floor)
    std::erase_if(all, [&](const std::string& v) { return std::atoll(v.c_str()) < *knob.floor; });
  if (all.size() <= 32) return all;
  std::vector<std::string> out;
  std::size_t stride = (all.size() + 31) / 32;
  for (std::size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  if (out.back() != all.back()) out.push_back(all.back());
  return out;
}

bool allowed(const spaces::Knob& k, const SpaceRequest& r) {
  if (k.safety == spaces::Safety::unsafe) return r.allow_unsafe;
  if (k.safety == spaces::Safety::numerics) return r.have_check;
  return true;
}

// What the discovery build says about where a knob can act: the block size
// each kernel's PTX declares (.reqntid/.maxntid; 0: none), and the SM of
// the tightest target it compiled for. Nothing is known without a trace
// (`ciq-tuner sample`, a named space with no build): then every knob is
// offered over its whole domain.
struct PtxFacts {
  bool known = false;
  SmLimits sm;
  std::map<std::string, long> block_threads; // every traced kernel

  explicit PtxFacts(const std::vector<TracedModule>& trace) : known(!trace.empty()) {
    bool first = true;
    for (const auto& m : trace) {
      SmLimits t = sm_limits(m.target);
      sm.blocks = first ? t.blocks : std::min(sm.blocks, t.blocks);
      sm.warps = first ? t.warps : std::min(sm.warps, t.warps);
      first = false;
      for (const auto& k : m.kernels) block_threads[k.name] = k.block_threads;
    }
  }
  long threads_per_sm() const { return long(sm.warps) * 32; }
  // Whether `n` blocks of `threads` fit on one SM (ptxas ignores a
  // minnctapersm that does not, with a warning).
  bool fits(long long n, long threads) const { return n <= sm.blocks && n * threads <= threads_per_sm(); }
  bool any_declared() const {
    return std::any_of(block_threads.begin(), block_threads.end(), [](const auto& k) { return k.second > 0; });
  }
  bool any_undeclared() const {
    return std::any_of(block_threads.begin(), block_threads.end(), [](const auto& k) { return k.second <= 0; });
  }
};

// Threads of a block-size value "X[,Y[,Z]]".
long threads_of(const std::string& value) {
  long n = 1;
  for (auto part : split(value, ',')) n *= std::atol(std::string(part).c_str());
  return n;
}

// The knob's search domain for `kernel` (a directive) or for the whole
// module (an option, kernel ""): the values of a blocks-per-SM knob that
// fit on an SM at every block size the PTX declares where it applies.
std::vector<std::string> domain_for(const spaces::Knob& knob, const std::string& kernel, const PtxFacts& facts) {
  auto values = search_domain(knob);
  if (!knob.blocks_per_sm || !facts.known) return values;
  std::erase_if(values, [&](const std::string& v) {
    long long n = std::atoll(v.c_str());
    if (!kernel.empty()) {
      auto it = facts.block_threads.find(kernel);
      return !facts.fits(n, it == facts.block_threads.end() ? 0 : it->second);
    }
    return std::any_of(facts.block_threads.begin(), facts.block_threads.end(),
                       [&](const auto& k) { return !facts.fits(n, k.second); });
  });
  return values;
}

// Whether the PTX gives `kernel` (a directive) or some kernel of the
// modules (an option, kernel "") what the knob `needs`.
bool needs_met_by_ptx(const std::string& kernel, const PtxFacts& facts) {
  if (!kernel.empty()) {
    auto it = facts.block_threads.find(kernel);
    return it != facts.block_threads.end() && it->second > 0;
  }
  return facts.any_declared();
}

// Whether the PTX declares a block size for `kernel` (a directive) or for
// every kernel of the modules (an option, kernel ""): where a knob is
// `overridden_by` it, ptxas puts its own value and ignores the knob.
bool overridden_everywhere(const std::string& kernel, const PtxFacts& facts) {
  if (!kernel.empty()) return needs_met_by_ptx(kernel, facts);
  return !facts.block_threads.empty() && !facts.any_undeclared();
}

// The dimensions of `space` at the level of `d` (and for its kernel) that
// set a directive `d`'s knob needs.
std::vector<std::size_t> providers(const SearchSpace& space, const Dimension& d, const spaces::Knob& knob) {
  std::vector<std::size_t> out;
  for (const auto& name : knob.needs) {
    std::size_t i = space.find(d.kind, name, d.kernel);
    if (i < space.dimensions.size()) out.push_back(i);
  }
  return out;
}

// What the PTX and the target decide (the space file's `needs` and `unit`,
// see ptxas-13.space): a knob that needs a block size the kernel's PTX does
// not declare is offered only with a dimension that sets one (and is left
// at its default whenever that one is), or not at all; and blocks per SM
// that do not fit at the block size such a dimension sets are left out
// with it. `knob_of` gives each dimension's knob (nullptr: not a knob of
// the space).
void add_ptx_exclusions(SearchSpace& space, const std::vector<const spaces::Knob*>& knob_of, const PtxFacts& facts) {
  if (!facts.known) return;
  std::vector<bool> unusable(space.dimensions.size(), false), overridden(space.dimensions.size(), false);
  for (std::size_t i = 0; i < space.dimensions.size(); ++i) {
    const spaces::Knob* knob = knob_of[i];
    if (knob && !knob->overridden_by.empty() && overridden_everywhere(space.dimensions[i].kernel, facts)) {
      unusable[i] = overridden[i] = true;
      continue;
    }
    if (!knob || knob->needs.empty()) continue;
    const auto& d = space.dimensions[i];
    auto from = providers(space, d, *knob);
    if (!needs_met_by_ptx(d.kernel, facts)) {
      if (from.empty()) unusable[i] = true; // nothing could make ptxas honour it
      // Left at the default whenever the block size is (with several
      // providers, it waits for all of them: stricter than ptxas, never an
      // ignored knob).
      for (std::size_t p : from)
        space.exclusions.push_back(Exclusion{p, i, {}, std::vector<bool>(d.values.size(), true), true});
    }
    // Where a provider sets the block size (a kernel that declares none),
    // the blocks per SM must fit at that size.
    bool undeclared = d.kernel.empty() ? facts.any_undeclared() : !needs_met_by_ptx(d.kernel, facts);
    if (!knob->blocks_per_sm || !undeclared) continue;
    for (std::size_t p : from) {
      const auto& by = space.dimensions[p];
      for (std::size_t v = 0; v < by.values.size(); ++v) {
        Exclusion x{p, i, std::vector<bool>(by.values.size(), false), std::vector<bool>(d.values.size(), false)};
        x.when_values[v] = true;
        bool any = false;
        for (std::size_t n = 0; n < d.values.size(); ++n) {
          bool too_many = !facts.fits(std::atoll(d.values[n].c_str()), threads_of(by.values[v]));
          x.drop_values[n] = too_many;
          any = any || too_many;
        }
        if (any) space.exclusions.push_back(std::move(x));
      }
    }
  }
  // What nothing can make ptxas honour is not searched at all.
  std::vector<Dimension> kept;
  std::vector<std::size_t> index(space.dimensions.size());
  for (std::size_t i = 0; i < space.dimensions.size(); ++i) {
    index[i] = kept.size();
    if (!unusable[i]) kept.push_back(std::move(space.dimensions[i]));
    else (overridden[i] ? space.overridden_left_out : space.left_out).push_back(space.dimensions[i].label());
  }
  std::vector<Exclusion> exclusions;
  for (auto& x : space.exclusions)
    if (!unusable[x.when] && !unusable[x.drop]) {
      x.when = index[x.when];
      x.drop = index[x.drop];
      exclusions.push_back(std::move(x));
    }
  space.dimensions = std::move(kept);
  space.exclusions = std::move(exclusions);
}

} // namespace


// The kernels of the traced units that `request.kernels` selects.
static std::set<std::string> targeted_kernels_of_units(const SpaceRequest& request) {
  std::set<std::string> out;
  for (const auto& u : request.units)
    for (const auto& k : u.kernels)
      if (request.kernels.empty() || glob_match(request.kernels, k)) out.insert(k);
  return out;
}

// The NVVM stage's knobs, for the translation units that hold a targeted
// kernel (ciq-cicc traced them: the build went through ciq-nvcc).
static Result<void> add_nvvm_stage(SearchSpace& space, const SpaceRequest& request) {
  std::set<std::string> keys;
  std::string release;
  for (const auto& u : request.units)
    for (const auto& k : u.kernels)
      if (request.kernels.empty() || glob_match(request.kernels, k)) {
        keys.insert(u.key);
        release = u.nvcc_version;
      }
  // Separately, with several targets: a unit's knobs act on all its kernels,
  // and a candidate's NVVM knobs on every traced unit.
  if (request.separately && targeted_kernels_of_units(request).size() > 1) {
    if (request.stages == "nvcc")
      return make_error(ciq::errc::usage, "--stages nvcc with --separately: the NVVM stage's knobs act on every targeted kernel at "
                                 "once, so --separately searches none of them");
    space.shared_left_out.push_back("the NVVM stage's knobs (nvcc.*)");
    return {};
  }
  if (keys.empty()) {
    if (request.stages == "nvcc")
      return make_error("invalid", "--stages nvcc: no translation unit of a targeted kernel was traced (build with CUDACXX=ciq-nvcc)");
    return {};
  }
  std::string major_minor = release_of(release);
  auto found = spaces::find_space(spaces_directory(), "cicc", major_minor);
  if (!found) return found.error();
  if (!*found) {
    if (request.stages == "nvcc") return make_error("invalid", "no NVVM-stage space covers CUDA " + major_minor);
    return {};
  }
  space.nvcc_space = (*found)->name;
  space.units.assign(keys.begin(), keys.end());
  for (const auto& knob : (*found)->knobs) {
    if (!allowed(knob, request)) continue;
    Dimension d;
    d.kind = DimensionKind::nvvm;
    d.knob = knob.name;
    d.values = search_domain(knob);
    d.knockout = 0.7;
    if (!d.values.empty()) space.dimensions.push_back(std::move(d));
  }
  return {};
}

std::vector<std::string> targeted_kernels(const std::vector<TracedModule>& trace, const std::string& glob) {
  std::set<std::string> kernels;
  for (const auto& m : trace)
    for (const auto& k : m.kernels)
      if (glob.empty() || glob_match(glob, k.name)) kernels.insert(k.name);
  return {kernels.begin(), kernels.end()};
}

namespace {

// An option the build passes to ptxas itself, and how it wrote it.
struct PinnedOption {
  std::string value, as_given; // "96", "-maxrregcount=96"
};

// The option knobs of `compiler` that the build already gives ptxas for a
// module holding one of `kernels`: from each such module's traced ptxas
// arguments (as written: -O2 for opt-level, -maxrregcount 96, --fmad=false)
// and its canonical codegen flags (which also cover an --options-file).
// ptxas 13.0 takes a second value of any of them with "incompatible
// redefinition for option ..., the last value of this option was used",
// and ciq rightly counts such a candidate invalid: they are not searched.
std::map<std::string, PinnedOption> pinned_options(const spaces::Space& compiler, const std::vector<TracedModule>& trace,
                                                   const std::vector<std::string>& kernels) {
  std::set<std::string> names;
  for (const auto& knob : compiler.knobs)
    if (knob.level == spaces::KnobLevel::option) names.insert(knob.name);
  std::map<std::string, PinnedOption> pinned;
  for (const auto& m : trace) {
    bool targeted = std::any_of(m.kernels.begin(), m.kernels.end(), [&](const TracedKernel& k) {
      return std::binary_search(kernels.begin(), kernels.end(), k.name);
    });
    if (!targeted) continue;
    for (std::size_t i = 0; i < m.args.size(); ++i) {
      const std::string& arg = m.args[i];
      if (arg.size() < 2 || arg[0] != '-') continue;
      std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
      std::string name = body.substr(0, body.find('='));
      std::string value = body.find('=') == std::string::npos ? "" : body.substr(body.find('=') + 1);
      std::string given = arg;
      if (name.size() > 1 && name[0] == 'O' && std::isdigit(static_cast<unsigned char>(name[1]))) {
        value = name.substr(1); // -O2
        name = "opt-level";
      } else if (name == "O") {
        name = "opt-level";
      }
      if (!names.count(name)) continue;
      if (value.empty() && body.find('=') == std::string::npos && i + 1 < m.args.size() && m.args[i + 1][0] != '-') {
        value = m.args[i + 1];
        given += " " + value;
      }
      pinned.emplace(name, PinnedOption{value, given});
    }
    for (auto word : split(m.flags, ' ')) {
      std::string flag(trim(word));
      std::string name = flag.substr(0, flag.find('='));
      if (!names.count(name) || pinned.count(name)) continue;
      std::string value = flag.find('=') == std::string::npos ? "" : flag.substr(flag.find('=') + 1);
      pinned.emplace(name, PinnedOption{value, "--" + flag});
    }
  }
  return pinned;
}

// Why ptxas ignores value `value` of option `knob` beside an option the
// build passes (the space's conflicts of effect `ignored`, or refuses:
// `refused`), for the log; "" for a value it takes.
std::string beside_pinned(const spaces::Space& compiler, const std::map<std::string, PinnedOption>& pinned,
                          const spaces::Knob& knob, const std::string& value) {
  for (const auto& conflict : compiler.conflicts) {
    auto it = pinned.find(conflict.knob);
    if (conflict.excluded != knob.name || it == pinned.end() || !conflict.names(true, it->second.value)) continue;
    if (conflict.names(false, value))
      return std::string(conflict.effect == spaces::ConflictEffect::ignored ? "ptxas ignores it" : "ptxas refuses it") +
             " beside the build's " + it->second.as_given;
  }
  return "";
}

// The space's conflicts between searched options as exclusions: the
// `excludes` side is left at its default.
void add_conflict_exclusions(SearchSpace& space, const spaces::Space& compiler) {
  for (const auto& conflict : compiler.conflicts) {
    auto marks = [&](const Dimension& d, bool when_side) {
      std::vector<bool> m(d.values.size());
      for (std::size_t v = 0; v < d.values.size(); ++v) m[v] = conflict.names(when_side, d.values[v]);
      return m;
    };
    Exclusion x;
    x.when = space.find(DimensionKind::option, conflict.knob);
    x.drop = space.find(DimensionKind::option, conflict.excluded);
    if (x.when == space.dimensions.size() || x.drop == space.dimensions.size()) continue; // a knob not searched
    x.when_values = marks(space.dimensions[x.when], true);
    x.drop_values = marks(space.dimensions[x.drop], false);
    space.exclusions.push_back(std::move(x));
  }
}

} // namespace

void add_compiler_knobs(SearchSpace& space, const spaces::Space& compiler, const SpaceRequest& request,
                        const std::vector<TracedModule>& trace) {
  PtxFacts facts(trace);
  std::vector<std::string> kernels = targeted_kernels(trace, request.kernels);
  auto pinned = pinned_options(compiler, trace, kernels);
  // Separately, with several targets: an option would act on all of them
  // (a candidate's options reach every module that holds a targeted kernel).
  bool shared_out = request.separately && kernels.size() > 1;
  std::vector<const spaces::Knob*> knob_of(space.dimensions.size(), nullptr);
  auto add = [&](const spaces::Knob& knob, DimensionKind kind, const std::string& kernel) {
    Dimension d;
    d.kind = kind;
    d.knob = knob.name;
    d.kernel = kernel;
    d.values = domain_for(knob, kernel, facts);
    d.knockout = 0.7; // most knobs do nothing for a given kernel: start near the default
    if (d.values.empty()) return;
    space.dimensions.push_back(std::move(d));
    knob_of.push_back(&knob);
  };
  for (const auto& knob : compiler.knobs) {
    if (!allowed(knob, request) || knob.level != spaces::KnobLevel::option) continue;
    if (auto it = pinned.find(knob.name); it != pinned.end()) {
      space.pinned_left_out.push_back(knob.name + " (the build passes " + it->second.as_given + ")");
      continue;
    }
    if (shared_out) {
      space.shared_left_out.push_back(knob.name);
      continue;
    }
    std::size_t before = space.dimensions.size();
    add(knob, DimensionKind::option, "");
    if (space.dimensions.size() == before) continue;
    auto& values = space.dimensions.back().values;
    std::string why;
    std::erase_if(values, [&](const std::string& v) {
      std::string reason = beside_pinned(compiler, pinned, knob, v);
      if (!reason.empty()) why = reason;
      return !reason.empty();
    });
    if (values.empty()) {
      space.dimensions.pop_back();
      knob_of.pop_back();
      space.pinned_left_out.push_back(knob.name + " (" + why + ")");
    }
  }
  for (const auto& kernel : kernels)
    for (const auto& knob : compiler.knobs)
      if (allowed(knob, request) && knob.level == spaces::KnobLevel::directive) add(knob, DimensionKind::directive, kernel);
  add_conflict_exclusions(space, compiler);
  add_ptx_exclusions(space, knob_of, facts);
}

Result<SearchSpace> build_search_space(const SpaceRequest& request, const std::vector<TracedModule>& trace) {
  SearchSpace space;
  if (request.space_name != "none") {
    std::optional<spaces::Space> found;
    if (!request.space_name.empty()) {
      auto s = spaces::load_space(spaces_directory(), request.space_name);
      if (!s) return s.error();
      found = std::move(*s);
    } else {
      if (trace.empty())
        return make_error("invalid", "the discovery build compiled no kernels through ciq-ptxas, so there is no ptxas "
                                     "to tune: either it compiled nothing (a tree already up to date: make --build "
                                     "recompile, e.g. `make -B` or `cmake --build DIR --clean-first`) or its compiles do "
                                     "not go through ciq (use CUDACXX=ciq-nvcc or TRITON_PTXAS_PATH=ciq-ptxas in the "
                                     "build); or --space none to tune parameters only");
      std::string release, version;
      std::string text = "release " + trace.front().ptxas_version;
      if (!cache::parse_ptxas_version(text, release, version))
        return make_error("invalid", "cannot tell the ptxas version from the trace");
      std::string major_minor = release_of(release);
      auto s = spaces::find_space(spaces_directory(), "ptxas", major_minor);
      if (!s) return s.error();
      if (!*s) return make_error("invalid", "no knob space covers ptxas " + major_minor + " in " + spaces_directory());
      found = std::move(**s);
    }
    space.compiler_space = found->name;
    add_compiler_knobs(space, *found, request, trace);
  }
  if (request.space_name != "none" && request.stages != "ptxas")
    if (auto r = add_nvvm_stage(space, request); !r) return r.error();
  if (request.stages == "nvcc") { // the ptxas knobs out (their exclusions with them)
    std::erase_if(space.dimensions, [](const Dimension& d) { return d.kind == DimensionKind::option || d.kind == DimensionKind::directive; });
    space.exclusions.clear();
  }
  for (const auto& spec : request.params) {
    auto d = parse_param(spec);
    if (!d) return d.error();
    for (const auto& existing : space.dimensions)
      if (existing.kind == DimensionKind::param && existing.knob == d->knob)
        return make_error("invalid", "--param " + d->knob + " given twice");
    space.dimensions.push_back(std::move(*d));
  }
  if (space.dimensions.empty()) return make_error("invalid", "nothing to tune: the search space has no dimensions");
  return space;
}

} // namespace ciq::tuner
