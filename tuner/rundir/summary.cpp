#include "tuner/rundir/summary.h"

#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace ciq::tuner {

namespace {

using json = nlohmann::ordered_json; // members in the documented order

// The file format of a number: what format_number() shows (6 significant
// digits), as a JSON number: a whole one without a fraction ("1144", not
// nlohmann's "1144.0"), NaN and infinities as null.
json number(double v) { return json_number(v); }

json numbers(const std::vector<double>& values) {
  json a = json::array();
  for (double v : values) a.push_back(number(v));
  return a;
}

std::vector<double> numbers_of(const JsonValue& a) {
  std::vector<double> out;
  for (const auto& v : a.array) out.push_back(v.number_or(NAN));
  return out;
}

json results_json(const std::string& run_dir, const SummaryResults& r) {
  json j;
  j["run_dir"] = run_dir;
  j["objective"] = r.objective;
  j["baseline"] = number(r.baseline);
  j["best"] = number(r.best);
  j["shipped"] = r.shipped;
  j["entries"] = r.entries;
  j["evaluations"] = r.evaluations;
  j["invalid"] = r.invalid;
  j["searched"] = r.searched;
  j["pruning"] = r.pruning;
  j["p_value"] = r.p_value ? number(*r.p_value) : json(nullptr);
  j["controls"] = r.controls;
  j["verdict"] = r.verdict;
  if (!r.baseline_values.empty() || !r.best_values.empty() || !r.front.empty()) {
    j["baseline_values"] = numbers(r.baseline_values);
    j["best_values"] = numbers(r.best_values);
    json front = json::array();
    for (const auto& p : r.front) front.push_back(json{{"controls", p.controls}, {"values", numbers(p.values)}});
    j["front"] = std::move(front);
  }
  j["prefer"] = r.prefer;
  if (!r.gpu_defaults.empty()) {
    json defaults = json::array();
    for (const auto& d : r.gpu_defaults) defaults.push_back(json{{"gpu", d.gpu}, {"runs", d.runs}, {"values", numbers(d.values)}});
    j["gpu_defaults"] = std::move(defaults);
  }
  if (!r.kernels.empty()) {
    json kernels = json::array();
    for (const auto& k : r.kernels)
      kernels.push_back(json{{"kernel", k.kernel},
                             {"baseline", number(k.baseline)},
                             {"best", number(k.best)},
                             {"change", number(k.change())},
                             {"p_value", k.p_value ? number(*k.p_value) : json(nullptr)},
                             {"controls", k.controls},
                             {"shipped", k.shipped},
                             {"parts", k.parts},
                             {"verdict", k.verdict}});
    j["kernels"] = std::move(kernels);
  }
  return j;
}

SummaryResults results_of(const JsonValue& j) {
  SummaryResults r;
  r.objective = j["objective"].string_or("");
  r.baseline = j["baseline"].number_or(NAN);
  r.best = j["best"].number_or(NAN);
  r.shipped = j["shipped"].boolean;
  r.entries = int(j["entries"].number_or(0));
  r.evaluations = int(j["evaluations"].number_or(0));
  r.invalid = int(j["invalid"].number_or(0));
  r.searched = int(j["searched"].number_or(0));
  r.pruning = int(j["pruning"].number_or(0));
  if (j["p_value"].kind == JsonValue::Kind::number) r.p_value = j["p_value"].number;
  r.controls = j["controls"].string_or("");
  r.verdict = j["verdict"].string_or("");
  r.baseline_values = numbers_of(j["baseline_values"]);
  r.best_values = numbers_of(j["best_values"]);
  for (const auto& p : j["front"].array) r.front.push_back(SummaryPoint{p["controls"].string_or(""), numbers_of(p["values"])});
  r.prefer = int(j["prefer"].number_or(1));
  for (const auto& d : j["gpu_defaults"].array)
    r.gpu_defaults.push_back(SummaryGpuDefault{d["gpu"].string_or(""), int(d["runs"].number_or(0)), numbers_of(d["values"])});
  for (const auto& k : j["kernels"].array) {
    SummaryKernel mine;
    mine.kernel = k["kernel"].string_or("");
    mine.baseline = k["baseline"].number_or(NAN);
    mine.best = k["best"].number_or(NAN);
    if (k["p_value"].kind == JsonValue::Kind::number) mine.p_value = k["p_value"].number;
    mine.controls = k["controls"].string_or("default");
    mine.shipped = k["shipped"].boolean;
    mine.parts = int(k["parts"].number_or(0));
    mine.verdict = k["verdict"].string_or("");
    r.kernels.push_back(std::move(mine));
  }
  return r;
}

} // namespace

double SummaryKernel::change() const {
  if (!std::isfinite(baseline) || !std::isfinite(best) || baseline == 0) return NAN;
  return (best - baseline) / baseline;
}

std::string RunSummary::to_json() const {
  json j;
  if (results) {
    j = results_json(run_dir, *results);
  } else {
    j["run_dir"] = run_dir;
  }
  // A finished run's summary is what it was before runs could fail with
  // one: no `outcome` (absent reads as finished).
  if (outcome == RunOutcome::failed) {
    j["outcome"] = "failed";
    j["reason"] = reason;
  }
  // Bytes that are not UTF-8 (a path, a candidate) become U+FFFD
  // (json_line): the file stays readable.
  return json_line(j);
}

Result<RunSummary> RunSummary::from_json(const std::string& text) {
  auto parsed = parse_json(text);
  if (!parsed) return parsed.error();
  const JsonValue& j = *parsed;
  if (j.kind != JsonValue::Kind::object) return make_error("parse", "a run summary is a JSON object");
  RunSummary s;
  s.run_dir = j["run_dir"].string_or("");
  if (j["verdict"].kind == JsonValue::Kind::string) s.results = results_of(j);
  std::string outcome = j["outcome"].string_or("finished");
  if (outcome != "finished" && outcome != "failed") return make_error("parse", "unknown run outcome '" + outcome + "'");
  s.outcome = outcome == "finished" ? RunOutcome::finished : RunOutcome::failed;
  s.reason = j["reason"].string_or("");
  return s;
}

std::optional<RunSummary> child_summary(const std::string& dir, std::string_view child_stdout) {
  if (auto in_dir = read_summary(dir); in_dir && *in_dir) return std::move(**in_dir);
  std::optional<RunSummary> last;
  for (auto line : split(child_stdout, '\n')) {
    line = trim(line);
    if (line.empty() || line.front() != '{') continue;
    if (auto s = RunSummary::from_json(std::string(line))) last = std::move(*s);
  }
  return last;
}

std::string summary_path(const std::string& dir) { return join_path(dir, "summary.json"); }

Result<void> write_summary(const std::string& dir, const RunSummary& summary) {
  return write_file_atomic(summary_path(dir), summary.to_json() + "\n");
}

Result<std::optional<RunSummary>> read_summary(const std::string& dir) {
  std::string path = summary_path(dir);
  if (!path_exists(path)) return std::optional<RunSummary>();
  auto text = read_file(path);
  if (!text) return text.error();
  auto summary = RunSummary::from_json(*text);
  if (!summary) return make_error("parse", path + ": " + summary.error().message);
  return std::optional<RunSummary>(std::move(*summary));
}

Result<void> remove_summary(const std::string& dir) {
  std::string path = summary_path(dir);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return make_error("io", "cannot remove " + path + ": " + std::strerror(errno));
  return {};
}

} // namespace ciq::tuner
