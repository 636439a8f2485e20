#include "tuner/search/space_builder.h"

#include "cache/ptxas_identity.h"
#include "utils/config.h"
#include "utils/text.h"

#include <algorithm>
#include <set>

namespace ciq::tuner {

namespace {

// Big integer ranges are searched on a coarser grid (at most ~32 values,
// ends included): neighbouring register caps rarely differ in speed.
// Block-size knobs (dims) are searched over one-dimensional powers of two.
std::vector<std::string> search_domain(const spaces::Knob& knob) {
  if (knob.dims) {
    std::vector<std::string> out;
    for (long long v = 32; v <= *knob.hi; v *= 2)
      if (v >= *knob.lo) out.push_back(std::to_string(v));
    return out;
  }
  auto all = knob.domain();
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

} // namespace

// "13.0" of a version "13.0.88" (what space files' `versions` name).
static std::string release_of(const std::string& version) {
  auto parts = split(version, '.');
  return parts.size() >= 2 ? std::string(parts[0]) + "." + std::string(parts[1]) : version;
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
                                     "to tune (use CUDACXX=ciq-nvcc or TRITON_PTXAS_PATH=ciq-ptxas in the build, or "
                                     "--space none to tune parameters only)");
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
    std::set<std::string> kernels;
    for (const auto& m : trace)
      for (const auto& k : m.kernels)
        if (request.kernels.empty() || glob_match(request.kernels, k.name)) kernels.insert(k.name);
    for (const auto& knob : found->knobs) {
      if (!allowed(knob, request) || knob.level != spaces::KnobLevel::option) continue;
      Dimension d;
      d.kind = DimensionKind::option;
      d.knob = knob.name;
      d.values = search_domain(knob);
      d.knockout = 0.7; // most knobs do nothing for a given kernel: start near the default
      if (!d.values.empty()) space.dimensions.push_back(std::move(d));
    }
    for (const auto& kernel : kernels)
      for (const auto& knob : found->knobs) {
        if (!allowed(knob, request) || knob.level != spaces::KnobLevel::directive) continue;
        Dimension d;
        d.kind = DimensionKind::directive;
        d.knob = knob.name;
        d.kernel = kernel;
        d.values = search_domain(knob);
        d.knockout = 0.7;
        if (!d.values.empty()) space.dimensions.push_back(std::move(d));
      }
    for (const auto& conflict : found->conflicts) {
      auto marks = [](const Dimension& d, const std::vector<std::string>& values) {
        std::vector<bool> m(d.values.size());
        for (std::size_t v = 0; v < d.values.size(); ++v)
          m[v] = std::find(values.begin(), values.end(), d.values[v]) != values.end();
        return m;
      };
      Exclusion x;
      x.when = space.find(DimensionKind::option, conflict.knob);
      x.drop = space.find(DimensionKind::option, conflict.excluded);
      if (x.when == space.dimensions.size() || x.drop == space.dimensions.size()) continue; // a knob not searched
      x.when_values = marks(space.dimensions[x.when], conflict.values);
      x.drop_values = marks(space.dimensions[x.drop], conflict.excluded_values);
      space.exclusions.push_back(std::move(x));
    }
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

Result<Candidate> candidate_from_controls(const SearchSpace& space, const spaces::ControlSet& controls) {
  Candidate c = space.default_candidate();
  auto set = [&](DimensionKind kind, const std::string& kernel, const std::string& knob, const std::string& value) -> Result<void> {
    std::size_t i = space.find(kind, knob, kernel);
    if (i == space.dimensions.size())
      return make_error("invalid", (kernel.empty() ? knob : kernel + ":" + knob) + " is not a dimension of this search");
    const auto& d = space.dimensions[i];
    for (std::size_t v = 0; v < d.values.size(); ++v)
      if (d.values[v] == value) {
        c.genes[i] = int(v);
        return {};
      }
    std::string domain;
    for (const auto& v : d.values) domain += (domain.empty() ? "" : ", ") + v;
    return make_error("invalid", "value " + value + " of " + d.label() + " is not in the search domain (" + domain + ")");
  };
  for (const auto& [k, v] : controls.options)
    if (auto r = set(DimensionKind::option, "", k, v); !r) return r.error();
  for (const auto& [kernel, knobs] : controls.kernels)
    for (const auto& [k, v] : knobs)
      if (auto r = set(DimensionKind::directive, kernel, k, v); !r) return r.error();
  if (controls.acf)
    if (auto r = set(DimensionKind::acf, "", "acf", to_hex(*controls.acf)); !r) return r.error();
  for (const auto& [k, v] : controls.nvcc)
    if (auto r = set(DimensionKind::nvvm, "", k, v); !r) return r.error();
  return c;
}

} // namespace ciq::tuner
