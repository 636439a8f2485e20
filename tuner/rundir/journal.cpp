#include "tuner/rundir/journal.h"

#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

using Json = nlohmann::ordered_json; // members in the order the journal always had

// A number as the journal writes it: NaN and infinities as null (JSON has
// neither), whole numbers as integers ("5", as %.9g wrote them), others as
// the shortest text that reads back to the same double (%.9g kept 9 digits).
Json number_json(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) return std::int64_t(v); // 2^53: exact as an integer
  return v;
}

Json numbers_json(const std::vector<double>& values) {
  Json a = Json::array();
  for (double v : values) a.push_back(number_json(v));
  return a;
}

} // namespace

std::string_view status_name(EvalStatus status) {
  switch (status) {
  case EvalStatus::ok: return "ok";
  case EvalStatus::invalid: return "invalid";
  case EvalStatus::same_code: return "same-code";
  }
  return "invalid";
}

std::optional<EvalStatus> parse_status(std::string_view name) {
  for (EvalStatus s : {EvalStatus::ok, EvalStatus::invalid, EvalStatus::same_code})
    if (status_name(s) == name) return s;
  return std::nullopt;
}

std::string EvalRecord::to_json() const {
  Json j;
  j["n"] = number;
  j["generation"] = generation;
  j["candidate"] = candidate;
  j["status"] = std::string(status_name(status));
  j["valid"] = evaluation.valid;
  j["objectives"] = numbers_json(evaluation.objectives);
  j["samples"] = Json::array();
  for (const auto& s : samples) j["samples"].push_back(numbers_json(s));
  j["reason"] = evaluation.reason;
  j["detail"] = detail;
  j["digest"] = digest;
  j["build_s"] = number_json(build_seconds);
  j["steps_run"] = steps_run;
  j["steps_reused"] = steps_reused;
  j["bench_s"] = number_json(bench_seconds);
  j["gpu_wait_s"] = number_json(gpu_wait_seconds);
  j["finished"] = number_json(std::round(finished * 1000) / 1000); // to the millisecond
  j["workdir"] = workdir;
  if (!run_gpus.empty()) j["run_gpus"] = run_gpus;
  if (!kernel_samples.empty()) {
    j["kernel_samples"] = Json::object();
    for (const auto& [kernel, values] : kernel_samples) j["kernel_samples"][kernel] = numbers_json(values);
  }
  if (!gpu_states.empty()) {
    j["gpu"] = Json::array();
    for (const auto& state : gpu_states) j["gpu"].push_back(state); // gpu_state.h's to_json
  }
  // Bytes that are not UTF-8 (a build's output in `detail`) become U+FFFD, as json_line() makes them.
  return json_line(j);
}

Result<EvalRecord> EvalRecord::from_json(const std::string& line) {
  auto json = parse_json(line);
  if (!json) return json.error();
  const JsonValue& j = *json;
  EvalRecord r;
  r.number = int(j["n"].number_or(0));
  r.generation = int(j["generation"].number_or(0));
  r.candidate = j["candidate"].string_or("");
  std::string status = j["status"].string_or("");
  auto known = parse_status(status);
  if (!known) return make_error("parse", "journal line with status '" + status + "', none of ok, invalid, same-code");
  r.status = *known;
  r.evaluation.valid = j["valid"].boolean;
  for (const auto& v : j["objectives"].array) r.evaluation.objectives.push_back(v.number_or(NAN));
  for (const auto& s : j["samples"].array) {
    r.samples.emplace_back();
    for (const auto& v : s.array) r.samples.back().push_back(v.number_or(NAN));
  }
  r.evaluation.reason = j["reason"].string_or("");
  r.detail = j["detail"].string_or("");
  r.digest = j["digest"].string_or("");
  r.build_seconds = j["build_s"].number_or(0);
  r.steps_run = int(j["steps_run"].number_or(0));
  r.steps_reused = int(j["steps_reused"].number_or(0));
  r.bench_seconds = j["bench_s"].number_or(0);
  r.gpu_wait_seconds = j["gpu_wait_s"].number_or(0);
  r.finished = j["finished"].number_or(0);
  r.workdir = j["workdir"].string_or("");
  for (const auto& g : j["run_gpus"].array) r.run_gpus.push_back(g.string_or(""));
  for (const auto& [kernel, values] : j["kernel_samples"].object)
    for (const auto& v : values.array) r.kernel_samples[kernel].push_back(v.number_or(NAN));
  if (j["gpu"].kind == JsonValue::Kind::array) {
    // The GPU states' reader is nlohmann's (gpu_state.h); the line parsed
    // above, so it parses again.
    auto whole = nlohmann::json::parse(line, nullptr, false);
    if (whole.is_object() && whole.contains("gpu") && whole["gpu"].is_array())
      for (const auto& state : whole["gpu"]) r.gpu_states.push_back(state.get<GpuState>());
  }
  if (r.candidate.empty()) return make_error("parse", "journal line without a candidate");
  return r;
}

Result<void> append_whole_line(const std::string& path, const std::string& line) {
  auto opened = open_own_file(path, O_WRONLY | O_APPEND | O_CREAT);
  if (!opened) return opened.error();
  int fd = *opened;
  struct stat before {};
  bool sized = ::fstat(fd, &before) == 0;
  bool ok = write_all(fd, line + "\n") && ::fdatasync(fd) == 0;
  int saved = errno;
  if (!ok && sized) (void)!::ftruncate(fd, before.st_size); // no partial line left behind
  ::close(fd);
  if (!ok) return make_error("io", "cannot append to " + path + ": " + std::strerror(saved));
  return {};
}

Result<std::size_t> drop_partial_last_line(const std::string& path) {
  if (!path_exists(path)) return std::size_t(0);
  auto text = read_file(path);
  if (!text) return text.error();
  if (text->empty() || text->back() == '\n') return std::size_t(0);
  auto nl = text->rfind('\n');
  std::size_t keep = nl == std::string::npos ? 0 : nl + 1;
  auto opened = open_own_file(path, O_WRONLY);
  if (!opened) return opened.error();
  bool cut_off = ::ftruncate(*opened, off_t(keep)) == 0;
  int saved = errno;
  ::close(*opened);
  if (!cut_off) return make_error("io", "cannot cut the partial last line off " + path + ": " + std::strerror(saved));
  std::size_t cut = text->size() - keep;
  std::fprintf(stderr, "ciq-tuner: %s ended in a partial line (%zu bytes, written when the run stopped): cut it off\n",
               path.c_str(), cut);
  return cut;
}

namespace {

// The records of the whole lines of `text` (a partial last line ignored);
// with `warn`, a line that does not parse is said on stderr.
std::vector<EvalRecord> records_of(std::string_view text, const std::string& path, bool warn) {
  std::vector<EvalRecord> out;
  text = text.substr(0, text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1);
  std::size_t number = 0;
  for (std::string_view line : split(text, '\n')) {
    ++number;
    if (trim(line).empty()) continue;
    auto r = EvalRecord::from_json(std::string(line));
    if (r) out.push_back(std::move(*r));
    else if (warn)
      std::fprintf(stderr, "ciq-tuner: warning: %s line %zu is not a record (%s): skipped; its evaluation runs again\n",
                   path.c_str(), number, printable(r.error().message).c_str());
  }
  return out;
}

} // namespace

Result<std::vector<EvalRecord>> load_journal(const std::string& path) {
  if (!path_exists(path)) return std::vector<EvalRecord>{};
  if (auto cut = drop_partial_last_line(path); !cut) return cut.error();
  auto text = read_file(path);
  if (!text) return text.error();
  return records_of(*text, path, /*warn=*/true);
}

Result<std::vector<EvalRecord>> read_journal(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return records_of(*text, path, /*warn=*/false);
}

} // namespace ciq::tuner
