#include "wrapper/trace.h"

#include "utils/json.h"
#include "utils/files.h"
#include "utils/safe_open.h"
#include "utils/text.h"

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

// The trace directory and its units/ are this user's own (made where no
// other user can change what they mean, utils/safe_open.h): records never
// go through a link another user put in their place.
bool trace_dir_usable(const std::string& dir) {
  return make_own_directory(dir) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

void write_trace(const std::string& dir, const TraceRecord& r) { write_trace_file(dir, cache::trace_record_text(r)); }

void write_unit_trace(const std::string& dir, const UnitTraceRecord& r) {
  write_trace_file(join_path(dir, "units"), cache::unit_record_text(r));
}

void write_steps_trace(const std::string& dir, const cache::StepsRecord& r) {
  write_trace_file(join_path(dir, "steps"), cache::steps_record_text(r));
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
  if (auto made = make_own_directory(dir); !made) {
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
