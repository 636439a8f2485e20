#include "tuner/measure/replay.h"

#include "spaces/control_set.h"
#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace ciq::tuner {

namespace {

constexpr const char* k_space = "replay";

// Numbers in numeric order, then words.
bool value_less(const std::string& a, const std::string& b) {
  char* ea = nullptr;
  char* eb = nullptr;
  double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
  bool na = !a.empty() && *ea == '\0', nb = !b.empty() && *eb == '\0';
  if (na != nb) return na;
  if (na && x != y) return x < y;
  return a < b;
}

std::string key_of(spaces::ControlSet set) {
  set.space = k_space;
  set.nvcc_space.clear(); // the recorded sets name no space; a candidate's NVVM part does
  return spaces::format_control_set(set);
}

// The dimension of knob `label` as the recorded sets name it ("nvcc.KNOB":
// an NVVM-stage knob, bench/ground_truth.py --grid nvvm; "KERNEL:KNOB": a
// directive; else an option), with the values seen, in the space's order.
Dimension dimension_of(const std::string& label, const std::set<std::string>& seen) {
  Dimension d;
  auto colon = label.find(':');
  if (starts_with(label, "nvcc.")) {
    d.kind = DimensionKind::nvvm;
    d.knob = label.substr(5);
  } else if (colon == std::string::npos) {
    d.kind = DimensionKind::option;
    d.knob = label;
  } else {
    d.kind = DimensionKind::directive;
    d.kernel = label.substr(0, colon);
    d.knob = label.substr(colon + 1);
  }
  d.values.assign(seen.begin(), seen.end());
  std::sort(d.values.begin(), d.values.end(), value_less);
  return d;
}

} // namespace

Result<std::shared_ptr<ReplayData>> ReplayData::load(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto data = std::make_shared<ReplayData>();
  auto fail = [&](std::size_t line, const std::string& why) {
    return make_error("replay", path + ":" + std::to_string(line) + ": " + why);
  };

  std::vector<std::string_view> lines = split(*text, '\n');
  if (lines.empty()) return fail(1, "empty file");
  std::vector<std::string_view> header = split(trim(lines[0]), ',');
  std::ptrdiff_t controls_col = -1, ms_col = -1;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (trim(header[i]) == "controls") controls_col = std::ptrdiff_t(i);
    if (trim(header[i]) == "ms") ms_col = std::ptrdiff_t(i);
  }
  if (controls_col < 0 || ms_col < 0) return fail(1, "the header needs the columns 'controls' and 'ms'");

  // Knob label -> values seen; and which labels every set gives.
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, std::size_t> label_count;
  std::map<std::string, spaces::ControlSet> sets;
  for (std::size_t n = 1; n < lines.size(); ++n) {
    std::string_view line = trim(lines[n]);
    if (line.empty()) continue;
    std::vector<std::string_view> fields = split(line, ',');
    if (fields.size() != header.size())
      return fail(n + 1, std::to_string(fields.size()) + " fields, the header has " + std::to_string(header.size()));
    std::string ms_text(trim(fields[std::size_t(ms_col)]));
    char* end = nullptr;
    double ms = std::strtod(ms_text.c_str(), &end);
    if (ms_text.empty() || *end != '\0' || !(ms > 0)) return fail(n + 1, "'" + ms_text + "' is not a positive time");

    spaces::ControlSet set;
    for (std::string_view assignment : split(trim(fields[std::size_t(controls_col)]), ';')) {
      if (trim(assignment).empty()) continue;
      if (auto added = spaces::add_assignment(set, trim(assignment)); !added) return fail(n + 1, added.error().message);
    }
    std::string key = key_of(set);
    auto& samples = data->samples_[key];
    if (samples.empty()) {
      for (const auto& [knob, value] : set.options) values[knob].insert(value);
      for (const auto& [kernel, knobs] : set.kernels)
        for (const auto& [knob, value] : knobs) values[kernel + ":" + knob].insert(value);
      for (const auto& [knob, value] : set.nvcc) values["nvcc." + knob].insert(value);
      sets.emplace(key, set);
    }
    samples.push_back(ms);
  }
  if (data->samples_.empty()) return fail(lines.size(), "no samples");
  if (!data->samples_.count(key_of({}))) return make_error("replay", path + ": the default (empty controls) was not recorded");

  data->space_.compiler_space = k_space;
  for (auto& [label, seen] : values) data->space_.dimensions.push_back(dimension_of(label, seen));
  return data;
}

Result<double> ReplayData::draw(const ResolvedCandidate& c, std::mt19937_64& rng) const {
  auto it = samples_.find(key_of(c.controls));
  if (it == samples_.end()) return make_error("replay", "not recorded in the replay data: " + c.canonical);
  std::uniform_int_distribution<std::size_t> pick(0, it->second.size() - 1);
  return it->second[pick(rng)];
}

} // namespace ciq::tuner
