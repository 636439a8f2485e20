#include "wrapper/trace.h"

#include "utils/files.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::wrapper {

static void write_trace_file(const std::string& dir, const std::string& json);

static std::string string_array(const std::vector<std::string>& items) {
  std::string json = "[";
  for (std::size_t i = 0; i < items.size(); ++i) json += (i ? "," : "") + json_string(items[i]);
  return json + "]";
}

static std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

bool trace_dir_usable(const std::string& dir) {
  return make_dirs(dir) && is_directory(dir) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

void write_trace(const std::string& dir, const TraceRecord& r) {
  std::string json = "{\"format\":\"ciq-trace/1\"";
  auto field = [&](const char* name, const std::string& value) { json += std::string(",\"") + name + "\":" + json_string(value); };
  auto raw = [&](const char* name, const std::string& value) { json += std::string(",\"") + name + "\":" + value; };
  field("input", r.input);
  field("output", r.output);
  field("target", r.target);
  field("ptxas_path", r.ptxas_path);
  field("ptxas_version", r.ptxas_version);
  field("ptxas_identity", r.ptxas_identity);
  field("flags", r.flags);
  raw("args", string_array(r.args));
  field("ptx_copy", r.ptx_copy);
  raw("accepts_controls_file", r.accepts_controls_file ? "true" : "false");
  field("module_key", r.module_key);
  json += ",\"kernels\":[";
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    const auto& k = r.kernels[i];
    const auto& res = k.resources;
    json += (i ? "," : "") + std::string("{\"name\":") + json_string(k.name) + ",\"key\":" + json_string(k.key) +
            ",\"block_threads\":" + std::to_string(k.block_threads) +
            ",\"registers\":" + std::to_string(res.registers) + ",\"spill_stores\":" + std::to_string(res.spill_stores) +
            ",\"spill_loads\":" + std::to_string(res.spill_loads) + ",\"stack\":" + std::to_string(res.stack) +
            ",\"shared\":" + std::to_string(res.shared) + ",\"barriers\":" + std::to_string(res.barriers) +
            ",\"compile_ms\":" + number(res.compile_ms) + ",\"code\":" + json_string(k.code) + "}";
  }
  json += "]";
  field("controls_source", r.controls_source);
  field("controls", r.controls);
  raw("controls_applied", r.controls_applied ? "true" : "false");
  field("controls_error", r.controls_error);
  field("code_digest", r.code_digest);
  raw("warnings", string_array(r.warnings));
  raw("exit_status", std::to_string(r.exit_status));
  raw("seconds", number(r.seconds));
  json += "}\n";
  write_trace_file(dir, json);
}

void write_unit_trace(const std::string& dir, const UnitTraceRecord& r) {
  std::string json = "{\"format\":\"ciq-trace/1\",\"kind\":\"unit\"";
  auto field = [&](const char* name, const std::string& value) { json += std::string(",\"") + name + "\":" + json_string(value); };
  field("unit", r.unit);
  field("source_path", r.source_path);
  field("target", r.target);
  field("key", r.key);
  field("nvcc_version", r.nvcc_version);
  field("output", r.output);
  json += ",\"kernels\":[";
  for (std::size_t i = 0; i < r.kernels.size(); ++i) json += (i ? "," : "") + json_string(r.kernels[i]);
  json += "]";
  field("controls_source", r.controls_source);
  field("controls", r.controls);
  json += std::string(",\"controls_applied\":") + (r.controls_applied ? "true" : "false");
  field("controls_error", r.controls_error);
  json += ",\"warnings\":" + string_array(r.warnings);
  json += ",\"exit_status\":" + std::to_string(r.exit_status) + ",\"seconds\":" + number(r.seconds) + "}\n";
  write_trace_file(join_path(dir, "units"), json);
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
    if (written.error().code != "exists" || tries + 1 >= max_tries) {
      spdlog::warn("cannot write a trace record: {}", written.error().message);
      return;
    }
  }
}

} // namespace ciq::wrapper
