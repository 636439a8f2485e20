// Space files: ciq's own `key = value` format (utils/text.h), read with our
// own parser rather than a TOML library. Why: the format is one line per
// knob, field or assignment, the same for space files, control sets, cache
// records and packs, so every one of them diffs and reviews line by line in
// git; the parser (parse_key_values, ~80 lines) and parse_space are all the
// code it takes. Measured 2026-12-03 on the 2-core dev VM: parsing
// spaces/ptxas-13.space (4.9 KB, 13 knobs) takes 30 us, nvcc-13.space 23 us
// (a wrapper on a hit reads one). Moving to TOML would change every file and
// pack already in use without letting them say anything new.
#include "spaces/space.h"

#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <functional>
#include <set>

namespace ciq::spaces {

std::string_view safety_name(Safety safety) {
  switch (safety) {
  case Safety::exact: return "exact";
  case Safety::numerics: return "numerics";
  case Safety::unsafe: return "unsafe";
  }
  return "?";
}

std::vector<std::string> Knob::domain() const {
  if (!values.empty() || dims || !lo) return values;
  std::vector<std::string> out;
  for (long long v = *lo; v <= *hi; v += step) out.push_back(std::to_string(v));
  return out;
}

const Knob* Space::find(std::string_view knob, KnobLevel level) const {
  for (const auto& k : knobs)
    if (k.name == knob && k.level == level) return &k;
  return nullptr;
}

// "13.2" -> (13, 2); (-1, -1) when malformed.
static std::pair<long long, long long> release_pair(std::string_view r) {
  auto parts = split(r, '.');
  if (parts.size() < 2) return {-1, -1};
  auto a = parse_integer(parts[0]), b = parse_integer(parts[1]);
  if (!a || !b) return {-1, -1};
  return {*a, *b};
}

bool Conflict::names(bool when_side, std::string_view value) const {
  const auto& listed = when_side ? values : excluded_values;
  return listed == std::vector<std::string>{"*"} || std::find(listed.begin(), listed.end(), value) != listed.end();
}

bool Conflict::hit(const std::map<std::string, std::string>& options) const {
  auto a = options.find(knob), b = options.find(excluded);
  return a != options.end() && b != options.end() && names(true, a->second) && names(false, b->second);
}

bool Space::covers(std::string_view t, std::string_view release) const {
  auto r = release_pair(release);
  return t == tool && r.first >= 0 && release_pair(min_release) <= r && r <= release_pair(max_release);
}

namespace {

constexpr long long kKnobIntMin = -2147483648LL, kKnobIntMax = 2147483647LL;
// The largest domain a range may spell out (Knob::domain lists it): the
// widest knob ptxas has is 16..255.
constexpr long long kMaxDomain = 4096;

Error bad(const std::string& why) { return Error{"parse", why}; }

// One line of [space].
Result<void> set_space_key(Space& space, const KeyValue& kv) {
  if (kv.key == "name") space.name = kv.value;
  else if (kv.key == "tool") space.tool = kv.value;
  else if (kv.key == "versions") {
    auto dots = kv.value.find("..");
    if (dots == std::string::npos) return bad("versions must be MIN..MAX");
    space.min_release = std::string(trim(std::string_view(kv.value).substr(0, dots)));
    space.max_release = std::string(trim(std::string_view(kv.value).substr(dots + 2)));
    if (release_pair(space.min_release).first < 0 || release_pair(space.max_release).first < 0)
      return bad("versions must be MAJOR.MINOR..MAJOR.MINOR");
  } else return bad("unknown key '" + kv.key + "' in [space]");
  return {};
}

// One line of a [conflict.NAME].
Result<void> set_conflict_key(Conflict& c, const KeyValue& kv) {
  if (kv.key == "when" || kv.key == "excludes") {
    auto colon = kv.value.find(':');
    if (colon == std::string::npos) return bad(kv.key + " must be KNOB: VALUE, ...");
    std::string& knob_name = kv.key == "when" ? c.knob : c.excluded;
    auto& values = kv.key == "when" ? c.values : c.excluded_values;
    knob_name = std::string(trim(std::string_view(kv.value).substr(0, colon)));
    for (auto v : split(std::string_view(kv.value).substr(colon + 1), ','))
      if (!trim(v).empty()) values.emplace_back(trim(v));
  } else if (kv.key == "effect") {
    if (kv.value == "refused") c.effect = ConflictEffect::refused;
    else if (kv.value == "ignored") c.effect = ConflictEffect::ignored;
    else return bad("effect must be refused or ignored");
  } else if (kv.key == "note") {
    c.note = kv.value;
  } else {
    return bad("unknown key '" + kv.key + "' for a conflict");
  }
  return {};
}

// One line of an [option.NAME] or [directive.NAME].
Result<void> set_knob_key(Knob& knob, const KeyValue& kv) {
  if (kv.key == "render") {
    knob.render = kv.value;
  } else if (kv.key == "values") {
    for (auto v : split(kv.value, ','))
      if (!trim(v).empty()) knob.values.emplace_back(trim(v));
  } else if (kv.key == "range" || kv.key == "dims") {
    auto dots = kv.value.find("..");
    auto lo = parse_integer(trim(std::string_view(kv.value).substr(0, dots)));
    auto hi = dots == std::string::npos ? std::nullopt : parse_integer(trim(std::string_view(kv.value).substr(dots + 2)));
    if (!lo || !hi || *lo > *hi) return bad(kv.key + " must be LO..HI with LO <= HI");
    // Compiler knobs are C ints; 32-bit ends also keep every sum and
    // difference the tuner forms from them inside a long long.
    if (*lo < kKnobIntMin || *hi > kKnobIntMax) return bad(kv.key + " ends must fit in 32 bits");
    knob.lo = lo;
    knob.hi = hi;
    knob.dims = kv.key == "dims";
  } else if (kv.key == "step") {
    auto s = parse_integer(kv.value);
    if (!s || *s <= 0 || *s > kKnobIntMax) return bad("step must be a positive 32-bit integer");
    knob.step = *s;
  } else if (kv.key == "default") {
    knob.default_value = kv.value;
  } else if (kv.key == "safety") {
    if (kv.value == "exact") knob.safety = Safety::exact;
    else if (kv.value == "numerics") knob.safety = Safety::numerics;
    else if (kv.value == "unsafe") knob.safety = Safety::unsafe;
    else return bad("safety must be exact, numerics or unsafe");
  } else if (kv.key == "note") {
    knob.note = kv.value;
  } else if (kv.key == "floor") {
    knob.floor = parse_canonical_integer(kv.value);
    if (!knob.floor) return bad("floor must be an integer");
  } else if (kv.key == "needs" || kv.key == "overridden_by") {
    auto& names = kv.key == "needs" ? knob.needs : knob.overridden_by;
    for (auto v : split(kv.value, ','))
      if (!trim(v).empty()) names.emplace_back(trim(v));
  } else if (kv.key == "unit") {
    if (kv.value != "blocks-per-sm") return bad("unit must be blocks-per-sm");
    knob.blocks_per_sm = true;
  } else {
    return bad("unknown key '" + kv.key + "' for a knob");
  }
  return {};
}

// What must hold of a whole space: the header, every knob's domain (a
// floor inside it, a unit or floor only on integer knobs, needs only of
// what the tuner can read in the PTX), and conflicts that name options of
// the space with values in their domains (or `*`).
Result<void> check_space(const Space& space, std::string_view origin) {
  if (space.name.empty() || space.tool.empty() || space.min_release.empty())
    return bad(std::string(origin) + ": [space] needs name, tool and versions");
  for (const auto& k : space.knobs) {
    std::string at = std::string(origin) + ": knob '" + k.name + "': ";
    bool flag = k.values == std::vector<std::string>{"on"};
    if (!flag && k.render.find("{}") == std::string::npos) return bad(at + "render must contain {}");
    if (k.values.empty() && !k.lo) return bad(at + "needs values or range");
    if (!k.values.empty() && k.lo) return bad(at + "has both values and range");
    bool integers = k.lo && !k.dims;
    if (k.floor && (!integers || *k.floor <= *k.lo || *k.floor > *k.hi))
      return bad(at + "floor needs an integer range that holds values below it");
    if (k.blocks_per_sm && !integers) return bad(at + "unit = blocks-per-sm needs an integer range");
    if (integers && (*k.hi - *k.lo) / k.step + 1 > kMaxDomain)
      return bad(at + "range " + std::to_string(*k.lo) + ".." + std::to_string(*k.hi) + " holds more than " +
                 std::to_string(kMaxDomain) + " values; use a coarser step");
    // The tuner knows a kernel's block size from its PTX (.maxntid or
    // .reqntid) and nothing else, so nothing else can be needed.
    for (const auto& n : k.needs)
      if (n != "maxntid" && n != "reqntid")
        return bad(at + "needs '" + n + "': only maxntid and reqntid (the PTX's block size) can be needed");
    for (const auto& n : k.overridden_by)
      if (n != "maxntid" && n != "reqntid")
        return bad(at + "overridden_by '" + n + "': only maxntid and reqntid (the PTX's block size) can be named");
  }
  for (const auto& c : space.conflicts) {
    std::string at = std::string(origin) + ": conflict '" + c.name + "': ";
    if (c.values.empty() || c.excluded_values.empty()) return bad(at + "needs when and excludes, each with values");
    for (auto [knob_name, values] : {std::pair{&c.knob, &c.values}, std::pair{&c.excluded, &c.excluded_values}}) {
      const Knob* k = space.find(*knob_name, KnobLevel::option);
      if (!k) return bad(at + "'" + *knob_name + "' is not an option of this space");
      if (*values == std::vector<std::string>{"*"}) continue;
      for (const auto& v : *values)
        if (auto ok = check_value(*k, v); !ok) return bad(at + ok.error().message);
    }
    if (c.knob == c.excluded) return bad(at + "names one knob twice");
  }
  return {};
}

} // namespace

Result<Space> parse_space(std::string_view text, std::string_view origin) {
  auto lines = parse_key_values(text, origin);
  if (!lines) return lines.error();
  Space space;
  std::set<std::string> seen;
  Knob* knob = nullptr;
  for (const auto& kv : *lines) {
    std::string where = std::string(origin) + ":" + std::to_string(kv.line) + ": ";
    auto fail = [&](const std::string& why) { return make_error("parse", where + why); };
    Result<void> set;
    if (kv.section == "space") {
      set = set_space_key(space, kv);
    } else if (starts_with(kv.section, "conflict.")) {
      std::string name = kv.section.substr(9);
      if (space.conflicts.empty() || space.conflicts.back().name != name) {
        if (!seen.insert(kv.section).second) return fail("[" + kv.section + "] defined twice");
        space.conflicts.emplace_back();
        space.conflicts.back().name = name;
      }
      set = set_conflict_key(space.conflicts.back(), kv);
      knob = nullptr;
    } else {
      bool is_option = starts_with(kv.section, "option.");
      if (!is_option && !starts_with(kv.section, "directive."))
        return fail("unexpected section [" + kv.section + "] (expected [space], [option.NAME], [directive.NAME] or [conflict.NAME])");
      std::string name = kv.section.substr(is_option ? 7 : 10);
      if (!knob || knob->name != name || (knob->level == KnobLevel::option) != is_option) {
        if (!seen.insert(kv.section).second) return fail("knob [" + kv.section + "] defined twice");
        space.knobs.push_back(Knob{});
        knob = &space.knobs.back();
        knob->name = name;
        knob->level = is_option ? KnobLevel::option : KnobLevel::directive;
      }
      set = set_knob_key(*knob, kv);
    }
    if (!set) return fail(set.error().message);
  }
  if (auto checked = check_space(space, origin); !checked) return checked.error();
  return space;
}

static Result<std::vector<std::string>> space_files(const std::string& dir) {
  auto names = list_directory(dir);
  if (!names) return make_error("io", "cannot read the spaces directory '" + dir + "' (set CIQ_SPACES_DIR)");
  std::vector<std::string> files;
  for (const auto& n : *names)
    if (ends_with(n, ".space") && n.size() > 6) files.push_back(join_path(dir, n));
  return files;
}

// The first space file in `dir` (in name order) that `wanted` accepts.
static Result<std::optional<Space>> first_space(const std::string& dir, const std::function<bool(const Space&)>& wanted) {
  auto files = space_files(dir);
  if (!files) return files.error();
  for (const auto& f : *files) {
    auto text = read_file(f);
    if (!text) return text.error();
    auto space = parse_space(*text, f);
    if (!space) return space.error();
    if (wanted(*space)) return std::optional<Space>(std::move(*space));
  }
  return std::optional<Space>{};
}

Result<std::optional<Space>> find_space(const std::string& dir, std::string_view tool, std::string_view release) {
  return first_space(dir, [&](const Space& s) { return s.covers(tool, release); });
}

Result<Space> load_space(const std::string& dir, std::string_view name) {
  auto found = first_space(dir, [&](const Space& s) { return s.name == name; });
  if (!found) return found.error();
  if (!*found) return make_error(ciq::errc::not_found, "no space called '" + std::string(name) + "' in " + dir);
  return std::move(**found);
}

// Only the canonical spelling: "017" (octal 15 to ptxas), "+2" or "0002"
// would pass a range or conflict check as another value than the compiler
// reads, and a value is rendered as written.
static bool in_range(const Knob& knob, std::string_view v) {
  auto n = parse_canonical_integer(v);
  return n && *n >= *knob.lo && *n <= *knob.hi && (*n - *knob.lo) % knob.step == 0;
}

Result<void> check_value(const Knob& knob, std::string_view value) {
  bool ok;
  std::string expected;
  if (!knob.values.empty()) {
    ok = std::find(knob.values.begin(), knob.values.end(), value) != knob.values.end();
    for (const auto& v : knob.values) expected += (expected.empty() ? "" : ", ") + v;
    expected = "one of " + expected;
  } else if (knob.dims) {
    auto parts = split(value, ',');
    ok = parts.size() >= 1 && parts.size() <= 3 &&
         std::all_of(parts.begin(), parts.end(), [&](std::string_view p) { return in_range(knob, p); });
    expected = "1 to 3 comma-separated integers in " + std::to_string(*knob.lo) + ".." + std::to_string(*knob.hi);
  } else {
    ok = in_range(knob, value);
    expected = "an integer in " + std::to_string(*knob.lo) + ".." + std::to_string(*knob.hi) +
               (knob.step > 1 ? " in steps of " + std::to_string(knob.step) : "") +
               " (in decimal, without leading zeros or '+')";
  }
  if (ok) return {};
  std::string shown = value.size() > 40 ? std::string(value.substr(0, 20)) + "...(" + std::to_string(value.size()) + " characters)" : std::string(value);
  return make_error("invalid", "value '" + shown + "' of knob '" + knob.name + "' is not " + expected);
}

static Result<void> check_knob(const Space& space, std::string_view name, std::string_view value, KnobLevel level,
                               const Policy& policy) {
  const Knob* knob = space.find(name, level);
  if (!knob) {
    std::string n(name);
    if (space.find(name, KnobLevel::option))
      return make_error("invalid", "knob '" + n + "' is a module option in space " + space.name + "; set it as " + n + "=VALUE");
    if (space.find(name, KnobLevel::directive))
      return make_error("invalid", "knob '" + n + "' is a per-kernel directive in space " + space.name +
                                       "; set it as KERNEL:" + n + "=VALUE");
    return make_error("invalid", "knob '" + n + "' is not in space " + space.name);
  }
  if (knob->safety == Safety::unsafe && !policy.allow_unsafe)
    return make_error(ciq::errc::unsafe, "knob '" + knob->name + "' changes program semantics and is not allowed");
  if (knob->safety == Safety::numerics && !policy.allow_numerics)
    return make_error(ciq::errc::unsafe, "knob '" + knob->name + "' may change numeric results and is not allowed here");
  return check_value(*knob, value);
}

Result<void> validate_controls(const Space& space, const spaces::ControlSet& set, const Policy& policy) {
  if (set.space != space.name)
    return make_error("invalid", "control set is for space '" + set.space + "', but the running compiler's space is " +
                                     space.name);
  if (!set.nvcc.empty() || !set.nvcc_space.empty())
    return make_error("invalid", "nvcc.* knobs belong to the NVVM stage, not to a set of space " + space.name);
  if (set.acf && space.tool != "ptxas")
    return make_error("invalid", "an ACF applies at ptxas, not in space " + space.name);
  for (const auto& [name, value] : set.options)
    if (auto r = check_knob(space, name, value, KnobLevel::option, policy); !r) return r;
  for (const auto& [kernel, knobs] : set.kernels)
    for (const auto& [name, value] : knobs)
      if (auto r = check_knob(space, name, value, KnobLevel::directive, policy); !r) return r;
  for (const auto& c : space.conflicts)
    if (c.effect == ConflictEffect::refused && c.hit(set.options))
      return make_error("invalid", "knobs " + c.knob + "=" + set.options.at(c.knob) + " and " + c.excluded + "=" +
                                       set.options.at(c.excluded) + " conflict in space " + space.name + " (" +
                                       c.name + ")");
  return {};
}

} // namespace ciq::spaces
