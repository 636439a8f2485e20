#include "cache/counters.h"

#include "utils/files.h"
#include "utils/text.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::cache {

namespace {

std::map<std::string, std::uint64_t> parse_counters(std::string_view text) {
  std::map<std::string, std::uint64_t> out;
  for (std::string_view line : split(text, '\n')) {
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    auto value = parse_integer(trim(line.substr(eq + 1)));
    std::string_view name = trim(line.substr(0, eq));
    if (value && *value >= 0 && !name.empty()) out[std::string(name)] = std::uint64_t(*value);
  }
  return out;
}

std::string stats_path(const std::string& cache_dir) { return join_path(cache_dir, "stats"); }

// The counters file holds a few dozen short lines; one far larger was
// damaged or planted (a sparse 1 GiB file took seconds to read on every
// compile). Read no more than this.
constexpr off_t k_max_counters_bytes = 64 << 10;

std::string read_fd(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, std::size_t(n));
  return text;
}

// The counters are never worth waiting for: a build must not stall because
// another process holds the file (a hung `ciq-cache stats`, a stopped
// wrapper). Tries for about 20 ms, then the update is skipped.
bool lock_briefly(int fd) {
  for (int i = 0; i < 20; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    ::usleep(1000);
  }
  spdlog::debug("the counters file is locked by another process; this update is skipped");
  return false;
}

} // namespace

std::string_view counter_name(Counter counter) {
  switch (counter) {
  case Counter::calls: return "calls";
  case Counter::hit: return "hit";
  case Counter::miss: return "miss";
  case Counter::tuning: return "tuning";
  case Counter::applied: return "applied";
  case Counter::tuning_applied: return "tuning.applied";
  case Counter::rejected: return "rejected";
  case Counter::quarantined: return "quarantined";
  case Counter::controls_failed: return "controls-failed";
  case Counter::acf_unsupported: return "acf-unsupported";
  case Counter::pack_hit: return "pack-hit";
  case Counter::pack_refused: return "pack-refused";
  case Counter::remote_hit: return "remote-hit";
  case Counter::remote_error: return "remote-error";
  case Counter::remote_refused: return "remote-refused";
  case Counter::lto_link: return "lto-link";
  case Counter::unit_user_prefix: return "unit.user-prefix";
  case Counter::unit_no_ciq_cicc: return "unit.no-ciq-cicc";
  case Counter::unit_unknown_toolkit: return "unit.unknown-toolkit";
  case Counter::unit_no_spaces: return "unit.no-spaces";
  case Counter::memo_builds: return "memo.builds";
  case Counter::memo_steps_reused: return "memo.steps-reused";
  case Counter::memo_fallback: return "memo.fallback";
  case Counter::memo_unsuitable: return "memo.unsuitable";
  case Counter::deps_stamped: return "deps.stamped";
  case Counter::applied_ptx_only: return "applied.ptx-only";
  case Counter::gpu_refused: return "gpu.refused";
  case Counter::gpu_other_model: return "gpu.other-model";
  }
  return "unknown";
}

std::string_view pass_name(Pass reason) {
  switch (reason) {
  case Pass::unparsed_args: return "unparsed-args";
  case Pass::info: return "info";
  case Pass::no_input: return "no-input";
  case Pass::several_inputs: return "several-inputs";
  case Pass::no_target: return "no-target";
  case Pass::virtual_target: return "virtual-target";
  case Pass::debug: return "debug";
  case Pass::disabled: return "disabled";
  case Pass::user_prefix: return "user-prefix";
  case Pass::no_ciq_ptxas: return "no-ciq-ptxas";
  case Pass::cache_unusable: return "cache-unusable";
  case Pass::no_cache: return "no-cache";
  case Pass::unreadable_input: return "unreadable-input";
  case Pass::input_not_a_file: return "input-not-a-file";
  case Pass::unknown_ptxas: return "unknown-ptxas";
  case Pass::unknown_nvcc: return "unknown-nvcc";
  case Pass::no_entry: return "no-entry";
  case Pass::tuned_default: return "tuned-default";
  case Pass::no_space: return "no-space";
  case Pass::rejected: return "rejected";
  case Pass::no_scratch: return "no-scratch";
  case Pass::directive_edit_failed: return "directive-edit-failed";
  case Pass::acf_missing: return "acf-missing";
  case Pass::spawn_failed: return "spawn-failed";
  }
  return "unknown";
}

void Tally::merge(const Tally& other) {
  counters_.insert(counters_.end(), other.counters_.begin(), other.counters_.end());
  passes_.insert(passes_.end(), other.passes_.begin(), other.passes_.end());
}

std::vector<std::string> Tally::names() const {
  std::string prefix = tool_ == Tool::cicc ? "unit." : tool_ == Tool::nvcc ? "nvcc." : "";
  std::vector<std::string> out;
  for (Counter c : counters_) out.push_back(prefix + std::string(counter_name(c)));
  for (Pass p : passes_) out.push_back(prefix + "passthrough." + std::string(pass_name(p)));
  return out;
}

void bump_counters(const std::string& cache_dir, const Tally& tally) {
  std::vector<std::string> names = tally.names();
  if (names.empty()) return;
  if (!make_own_directory(cache_dir)) return;
  // A regular file only: a FIFO or device planted at the path would
  // otherwise block the read below for ever.
  struct stat st {};
  auto opened = open_regular_file(stats_path(cache_dir), O_RDWR | O_CREAT | O_NOFOLLOW, &st);
  if (!opened) {
    spdlog::debug("counters not updated: {}", opened.error().message);
    return;
  }
  int fd = *opened;
  if (lock_briefly(fd)) {
    bool damaged = st.st_size > k_max_counters_bytes;
    if (damaged) spdlog::warn("{} holds {} bytes, far more than counters take; starting it afresh", stats_path(cache_dir), st.st_size);
    auto counters = damaged ? std::map<std::string, std::uint64_t>{} : parse_counters(read_fd(fd));
    for (const auto& n : names) ++counters[n];
    std::string text;
    for (const auto& [n, v] : counters) text += n + " = " + std::to_string(v) + "\n";
    if (::pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size())) {
      if (::ftruncate(fd, off_t(text.size())) != 0) spdlog::debug("cannot truncate the counters file");
    }
  }
  ::close(fd); // releases the lock
}

Result<std::map<std::string, std::uint64_t>> read_counters(const std::string& cache_dir) {
  int fd = ::open(stats_path(cache_dir).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::map<std::string, std::uint64_t>{};
    std::string what = "cannot read '" + stats_path(cache_dir) + "': " + std::strerror(errno);
    if (errno == ENOTDIR)
      return make_error("io", what + " ('" + cache_dir + "' or a part of it is a file: give --cache-dir or CIQ_CACHE_DIR a directory)");
    return make_error("io", what + " (check the permissions of '" + cache_dir + "')");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error("io", "'" + stats_path(cache_dir) + "' is not a regular file: ciq keeps its counters there; move it away");
  }
  if (st.st_size > k_max_counters_bytes) {
    ::close(fd);
    return make_error("io", "'" + stats_path(cache_dir) + "' holds " + std::to_string(st.st_size) +
                                " bytes, far more than counters take (damaged?); remove it to start the counters afresh");
  }
  ::flock(fd, LOCK_SH);
  auto counters = parse_counters(read_fd(fd));
  ::close(fd);
  return counters;
}

Result<void> reset_counters(const std::string& cache_dir) {
  if (::unlink(stats_path(cache_dir).c_str()) != 0 && errno != ENOENT)
    return make_error("io", "cannot remove '" + stats_path(cache_dir) + "': " + std::strerror(errno));
  return {};
}

} // namespace ciq::cache
