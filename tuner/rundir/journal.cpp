#include "tuner/rundir/journal.h"

#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

std::string number_json(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string unix_time_json(double t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
}

} // namespace

std::string EvalRecord::to_json() const {
  std::string j = "{\"n\":" + std::to_string(number) + ",\"generation\":" + std::to_string(generation) +
                  ",\"candidate\":" + json_string(candidate) + ",\"status\":" + json_string(status) +
                  ",\"valid\":" + (evaluation.valid ? "true" : "false") + ",\"objectives\":[";
  for (std::size_t i = 0; i < evaluation.objectives.size(); ++i) j += (i ? "," : "") + number_json(evaluation.objectives[i]);
  j += "],\"samples\":[";
  for (std::size_t i = 0; i < samples.size(); ++i) {
    j += i ? ",[" : "[";
    for (std::size_t k = 0; k < samples[i].size(); ++k) j += (k ? "," : "") + number_json(samples[i][k]);
    j += "]";
  }
  j += "],\"reason\":" + json_string(evaluation.reason) + ",\"detail\":" + json_string(detail) + ",\"digest\":" + json_string(digest) +
       ",\"build_s\":" + number_json(build_seconds) + ",\"steps_run\":" + std::to_string(steps_run) +
       ",\"steps_reused\":" + std::to_string(steps_reused) + ",\"bench_s\":" + number_json(bench_seconds) + ",\"gpu_wait_s\":" + number_json(gpu_wait_seconds) +
       ",\"finished\":" + unix_time_json(finished) + ",\"workdir\":" + json_string(workdir);
  if (!run_gpus.empty()) {
    j += ",\"run_gpus\":[";
    for (std::size_t i = 0; i < run_gpus.size(); ++i) j += (i ? "," : "") + json_string(run_gpus[i]);
    j += "]";
  }
  if (!gpu_states.empty()) {
    j += ",\"gpu\":[";
    for (std::size_t i = 0; i < gpu_states.size(); ++i) j += (i ? "," : "") + gpu_states[i];
    j += "]";
  }
  return j + "}";
}

Result<EvalRecord> EvalRecord::from_json(const std::string& line) {
  auto json = parse_json(line);
  if (!json) return json.error();
  const JsonValue& j = *json;
  EvalRecord r;
  r.number = int(j["n"].number_or(0));
  r.generation = int(j["generation"].number_or(0));
  r.candidate = j["candidate"].string_or("");
  r.status = j["status"].string_or("");
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
