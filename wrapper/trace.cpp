#include "wrapper/trace.h"

#include "utils/json.h"
#include "utils/files.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::wrapper {

static void write_trace_file(const std::string& dir, const std::string& json);

namespace {

using Json = nlohmann::ordered_json; // members in the order traces always had

// A duration to the microsecond's thousandth kept before (%.3f): rounded to
// three decimals. A trace is read as JSON (tuner/formats): the value, not
// the text, is what readers see. Never NaN or infinite in practice; if one
// were, null (a reader's "unknown") rather than invalid JSON.
Json milli_rounded(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::round(v * 1000) / 1000;
}

// One record, one line; bytes that are not UTF-8 (a path, a kernel name)
// become U+FFFD (json_line).
std::string record_line(const Json& j) { return json_line(j) + "\n"; }

} // namespace

bool trace_dir_usable(const std::string& dir) {
  return make_dirs(dir) && is_directory(dir) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

void write_trace(const std::string& dir, const TraceRecord& r) {
  Json j;
  j["format"] = "ciq-trace/1";
  j["input"] = r.input;
  j["output"] = r.output;
  j["target"] = r.target;
  j["ptxas_path"] = r.ptxas_path;
  j["ptxas_version"] = r.ptxas_version;
  j["ptxas_identity"] = r.ptxas_identity;
  j["flags"] = r.flags;
  j["args"] = r.args;
  j["ptx_copy"] = r.ptx_copy;
  j["accepts_controls_file"] = r.accepts_controls_file;
  j["module_key"] = r.module_key;
  j["kernels"] = Json::array();
  for (const auto& k : r.kernels) {
    const auto& res = k.resources;
    Json kernel;
    kernel["name"] = k.name;
    kernel["key"] = k.key;
    kernel["block_threads"] = k.block_threads;
    kernel["registers"] = res.registers;
    kernel["spill_stores"] = res.spill_stores;
    kernel["spill_loads"] = res.spill_loads;
    kernel["stack"] = res.stack;
    kernel["shared"] = res.shared;
    kernel["barriers"] = res.barriers;
    kernel["compile_ms"] = milli_rounded(res.compile_ms);
    kernel["code"] = k.code;
    j["kernels"].push_back(std::move(kernel));
  }
  j["controls_source"] = r.controls_source;
  j["controls"] = r.controls;
  j["controls_applied"] = r.controls_applied;
  j["controls_error"] = r.controls_error;
  j["code_digest"] = r.code_digest;
  j["warnings"] = r.warnings;
  j["exit_status"] = r.exit_status;
  j["seconds"] = milli_rounded(r.seconds);
  write_trace_file(dir, record_line(j));
}

void write_unit_trace(const std::string& dir, const UnitTraceRecord& r) {
  Json j;
  j["format"] = "ciq-trace/1";
  j["kind"] = "unit";
  j["unit"] = r.unit;
  j["source_path"] = r.source_path;
  j["target"] = r.target;
  j["key"] = r.key;
  j["nvcc_version"] = r.nvcc_version;
  j["output"] = r.output;
  j["kernels"] = r.kernels;
  j["controls_source"] = r.controls_source;
  j["controls"] = r.controls;
  j["controls_applied"] = r.controls_applied;
  j["controls_error"] = r.controls_error;
  j["warnings"] = r.warnings;
  j["exit_status"] = r.exit_status;
  j["seconds"] = milli_rounded(r.seconds);
  write_trace_file(join_path(dir, "units"), record_line(j));
}

/// `json` as a new file `path`, complete when it appears (a private
/// temporary file, then a rename that never replaces). Errors: "exists"
/// (nothing written), "io".
static Result<void> write_new_record(const std::string& path, const std::string& json) {
  std::string temporary = path + ".tmp.XXXXXX"; // not *.json: readers skip it
  int fd = ::mkstemp(temporary.data());          // O_CREAT|O_EXCL
  if (fd < 0) return make_error("io", "cannot create a temporary file next to '" + path + "': " + std::strerror(errno));
  bool ok = write_all(fd, json) && ::fchmod(fd, 0644) == 0;
  ok = ::close(fd) == 0 && ok;
  Result<void> renamed = ok ? rename_new(temporary, path)
                            : Result<void>(make_error("io", "cannot write '" + temporary + "': " + std::strerror(errno)));
  if (!renamed) ::unlink(temporary.c_str());
  return renamed;
}

// <time>-<tag>-<n>.json: the tag (pid and a random part, drawn once per
// process) keeps two wrappers of one pid (PID namespaces sharing CIQ_TRACE)
// apart even within one microsecond, and a name that is taken all the same
// is never replaced: the record takes the next n.
static void write_trace_file(const std::string& dir, const std::string& json) {
  static const std::string tag = new_process_tag();
  static unsigned sequence = 0;
  constexpr unsigned max_tries = 100;
  if (auto made = make_dirs(dir); !made) {
    spdlog::warn("cannot write a trace record: {}", made.error().message);
    return;
  }
  auto now = std::chrono::system_clock::now().time_since_epoch();
  std::string time = std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
  for (unsigned tries = 0;; ++tries) {
    std::string name = time + "-" + tag + "-" + std::to_string(sequence++) + ".json";
    auto written = write_new_record(join_path(dir, name), json);
    if (written) return;
    if (written.error().code != ciq::errc::exists || tries + 1 >= max_tries) {
      spdlog::warn("cannot write a trace record: {}", written.error().message);
      return;
    }
  }
}

} // namespace ciq::wrapper
