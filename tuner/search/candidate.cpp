#include "tuner/search/candidate.h"

#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ciq::tuner {

std::string Dimension::label() const {
  switch (kind) {
  case DimensionKind::option: return knob;
  case DimensionKind::directive: return kernel + ":" + knob;
  case DimensionKind::param: return "param:" + knob;
  case DimensionKind::acf: return "acf";
  case DimensionKind::nvvm: return "nvcc." + knob;
  }
  return knob;
}

Candidate SearchSpace::default_candidate() const {
  Candidate c;
  c.genes.resize(dimensions.size());
  for (std::size_t i = 0; i < dimensions.size(); ++i)
    if (!dimensions[i].knockable) c.genes[i] = dimensions[i].default_index;
  return c;
}

Candidate SearchSpace::random_candidate(std::mt19937_64& rng) const {
  Candidate c;
  std::uniform_real_distribution<double> coin(0, 1);
  for (const auto& d : dimensions) {
    if (d.knockable && coin(rng) < d.knockout) {
      c.genes.emplace_back();
    } else {
      std::uniform_int_distribution<int> pick(0, int(d.values.size()) - 1);
      c.genes.emplace_back(pick(rng));
    }
  }
  repair(c);
  return c;
}

bool SearchSpace::repair(Candidate& c) const {
  bool changed = false;
  // Knocking a gene out can set off an exclusion that waits for it to be
  // unset (a `needs`), so go round until nothing moves: each round that
  // changes something knocks out at least one more gene.
  for (bool again = true; again;) {
    again = false;
    for (const auto& x : exclusions) {
      const auto& when = c.genes[x.when];
      auto& drop = c.genes[x.drop];
      bool holds = x.when_unset ? !when : when && x.when_values[std::size_t(*when)];
      if (holds && drop && x.drop_values[std::size_t(*drop)]) {
        drop.reset();
        changed = again = true;
      }
    }
  }
  return changed;
}

std::string SearchSpace::canonical(const Candidate& c) const {
  std::string out;
  for (std::size_t i = 0; i < dimensions.size() && i < c.genes.size(); ++i) {
    if (!c.genes[i]) continue;
    if (!out.empty()) out += ';';
    out += dimensions[i].label() + "=" + dimensions[i].values[std::size_t(*c.genes[i])];
  }
  return out.empty() ? std::string(k_default_candidate) : out;
}

Result<Candidate> SearchSpace::parse(const std::string& text) const {
  Candidate c;
  c.genes.resize(dimensions.size());
  if (text == k_default_candidate) return c;
  for (std::string_view part : split(text, ';')) {
    auto eq = part.rfind('=');
    if (eq == std::string_view::npos) return make_error("parse", "bad candidate part '" + std::string(part) + "'");
    std::string label(part.substr(0, eq)), value(part.substr(eq + 1));
    bool found = false;
    for (std::size_t i = 0; i < dimensions.size() && !found; ++i) {
      if (dimensions[i].label() != label) continue;
      for (std::size_t v = 0; v < dimensions[i].values.size(); ++v)
        if (dimensions[i].values[v] == value) {
          c.genes[i] = int(v);
          found = true;
        }
      if (!found) return make_error("parse", "value '" + value + "' is not in the domain of " + label);
    }
    if (!found) return make_error("parse", "'" + label + "' is not a dimension of this search");
  }
  for (std::size_t i = 0; i < dimensions.size(); ++i)
    if (!dimensions[i].knockable && !c.genes[i]) c.genes[i] = dimensions[i].default_index;
  return c;
}

spaces::ControlSet SearchSpace::controls(const Candidate& c) const {
  spaces::ControlSet set;
  set.space = compiler_space;
  for (std::size_t i = 0; i < dimensions.size(); ++i) {
    if (!c.genes[i]) continue;
    const auto& d = dimensions[i];
    const std::string& v = d.values[std::size_t(*c.genes[i])];
    if (d.kind == DimensionKind::option) set.options[d.knob] = v;
    else if (d.kind == DimensionKind::directive) set.kernels[d.kernel][d.knob] = v;
    else if (d.kind == DimensionKind::acf) set.acf = parse_digest<32>(v); // made by to_hex (space_builder)
    else if (d.kind == DimensionKind::nvvm) set.nvcc[d.knob] = v;
  }
  if (!set.nvcc.empty()) set.nvcc_space = nvcc_space;
  return set;
}

ResolvedCandidate SearchSpace::resolve(const Candidate& c) const {
  ResolvedCandidate r{c, canonical(c), controls(c), "", {}, c == default_candidate()};
  r.controls_text = spaces::format_control_set(r.controls);
  for (const auto& d : dimensions)
    if (d.kind == DimensionKind::param) r.params.emplace_back(d.knob, param(c, d.knob));
  return r;
}

std::size_t SearchSpace::find(DimensionKind kind, std::string_view knob, std::string_view kernel) const {
  for (std::size_t i = 0; i < dimensions.size(); ++i)
    if (dimensions[i].kind == kind && dimensions[i].knob == knob && dimensions[i].kernel == kernel) return i;
  return dimensions.size();
}

std::string SearchSpace::param(const Candidate& c, const std::string& name) const {
  std::size_t i = find(DimensionKind::param, name);
  if (i >= dimensions.size()) return "";
  const Dimension& d = dimensions[i];
  // Knocked out: left at its default, which for a parameter is ,default=V
  // when given (the baseline too), else nothing.
  if (!c.genes[i]) return d.has_default ? d.values[std::size_t(d.default_index)] : "";
  return d.values[std::size_t(*c.genes[i])];
}

double SearchSpace::size() const {
  double n = 1;
  for (const auto& d : dimensions) n *= double(d.values.size() + (d.knockable ? 1 : 0));
  return std::isfinite(n) ? n : 1e300;
}

static std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The values of a --param range, START:END:STEP (format_number()'s form);
// the error says what is wrong, for parse_param()'s message.
static Result<std::vector<std::string>> range_values(const std::string& spec) {
  auto parts = split(std::string_view(spec), ':');
  if (parts.size() != 3) return make_error("invalid", "range needs START:END:STEP");
  char *e1, *e2, *e3;
  std::string a(parts[0]), b(parts[1]), s(parts[2]);
  double start = std::strtod(a.c_str(), &e1), end = std::strtod(b.c_str(), &e2), step = std::strtod(s.c_str(), &e3);
  if (*e1 || *e2 || *e3 || a.empty() || b.empty() || s.empty() || step <= 0 || end < start)
    return make_error("invalid", "range needs numbers with START <= END and STEP > 0");
  std::vector<std::string> values;
  for (long i = 0;; ++i) {
    double v = start + double(i) * step;
    if (v > end + step * 1e-9) break;
    values.push_back(format_number(v));
    if (values.size() > 100000) return make_error("invalid", "range has more than 100000 values");
  }
  return values;
}

// The values of a parameter's domain, `range:...`, `choice:...` or
// `literal:V` (what follows NAME= less its ,default= and ,knockout=).
static Result<std::vector<std::string>> param_values(const std::string& rest) {
  std::vector<std::string> values;
  if (starts_with(rest, "range:")) {
    return range_values(rest.substr(6));
  } else if (starts_with(rest, "choice:")) {
    for (auto v : split(std::string_view(rest).substr(7), ','))
      if (!v.empty()) values.emplace_back(v);
    if (values.empty()) return make_error("invalid", "choice needs at least one value");
  } else if (starts_with(rest, "literal:")) {
    values.push_back(rest.substr(8));
  } else {
    return make_error("invalid", "unknown kind");
  }
  return values;
}

Result<Dimension> parse_param(const std::string& spec) {
  auto eq = spec.find('=');
  auto fail = [&](const std::string& why) {
    return make_error("invalid", "--param " + spec + ": " + why +
                                     " (expected NAME=range:START:END:STEP, NAME=choice:A,B,C or NAME=literal:V, "
                                     "optionally followed by ,default=V and/or ,knockout=P)");
  };
  if (eq == std::string::npos || eq == 0) return fail("no NAME=");
  Dimension d;
  d.kind = DimensionKind::param;
  d.knob = spec.substr(0, eq);
  for (char ch : d.knob)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-')) return fail("bad name");
  std::string rest = spec.substr(eq + 1);
  d.knockable = false;
  d.knockout = 0;
  std::string default_value;
  if (auto k = rest.rfind(",default="); k != std::string::npos) {
    default_value = rest.substr(k + 9);
    rest = rest.substr(0, k);
    if (auto ko = default_value.find(",knockout="); ko != std::string::npos) {
      rest += default_value.substr(ko);
      default_value = default_value.substr(0, ko);
    }
  }
  if (auto k = rest.rfind(",knockout="); k != std::string::npos) {
    char* end = nullptr;
    std::string p = rest.substr(k + 10);
    d.knockout = std::strtod(p.c_str(), &end);
    if (!end || *end || d.knockout < 0 || d.knockout > 1) return fail("knockout must be a probability in [0, 1]");
    d.knockable = d.knockout > 0;
    rest = rest.substr(0, k);
  }
  auto values = param_values(rest);
  if (!values) return fail(values.error().message);
  d.values = std::move(*values);
  if (!default_value.empty()) {
    auto it = std::find(d.values.begin(), d.values.end(), default_value);
    if (it == d.values.end()) {
      // A range value may be written differently ("10" vs "10.0"): compare numerically.
      char* end = nullptr;
      double want = std::strtod(default_value.c_str(), &end);
      for (auto v = d.values.begin(); end && !*end && v != d.values.end(); ++v)
        if (std::strtod(v->c_str(), nullptr) == want) it = v;
    }
    if (it == d.values.end()) return fail("default " + default_value + " is not one of its values");
    d.default_index = int(it - d.values.begin());
    d.has_default = true;
  }
  return d;
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
