// File-system helpers with explicit failure: whole-file reads, atomic
// writes (temp file + fsync + rename, so a crash leaves the old or the new
// content, never a mix), directory creation, and scratch directories that
// remove themselves.
#pragma once

#include "utils/result.h"
#include "utils/safe_open.h"
#include "utils/write_all.h" // write_all, shared with libciq-inject

#include <cstdint>
#include <sys/types.h>
#include <time.h>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct stat;

namespace ciq {

/// Whole content of `path` if it is a regular file (links followed) of at
/// most `max_bytes` (safe_open.h, contract 4); never blocks on a FIFO or
/// device and never consumes a stream another program is meant to read
/// (/dev/stdin, `<(...)`). Errors: "not-regular", "too-large", or "io", each
/// naming the path.
Result<std::string> read_file(const std::string& path, std::uint64_t max_bytes = default_read_limit);

/// Whole content of `path`, opened and checked once by open_input (an input
/// another user may have prepared: safe_open.h, contract 5; a link is
/// refused unless `rules.follow_links`) and read through that descriptor.
/// Errors: open_input's, and "too-large" or "io" while reading.
Result<std::string> read_input(const std::string& path, const InputRules& rules);

/// Replaces `path` with `content` atomically (same directory temp + rename),
/// the new file having `mode` from its first byte (a 0600 file is never
/// readable by others, not even for a moment) and, when given, `mtime` as
/// its modification time before it takes the name.
Result<void> write_file_atomic(const std::string& path, std::string_view content, mode_t mode = 0644,
                               std::optional<struct timespec> mtime = std::nullopt);

/// Appends `data` to `path` (created if missing; an existing one must be the
/// user's own regular file, never reached through a link: open_own_file), in
/// one write(2) with O_APPEND so that concurrent appenders do not interleave within it;
/// `sync`: fdatasync before returning (a crash then loses nothing written).
Result<void> append_file(const std::string& path, std::string_view data, bool sync = false);

/// Names of the entries in `dir` (not "." and ".."), sorted; an "io" error
/// ("cannot read DIR: reason") when it cannot be read.
Result<std::vector<std::string>> list_directory(const std::string& dir);
/// mkdir -p, each level made 0755 less the umask (never group-writable by
/// a umask of 002); succeeds when the directory already exists.
Result<void> make_dirs(const std::string& path);

bool path_exists(const std::string& path);
/// Bytes an unprivileged writer may still use on the file system that holds
/// `path` (or its nearest existing parent); std::nullopt when unknown.
std::optional<std::uint64_t> free_bytes(const std::string& path);
bool is_directory(const std::string& path);
bool is_executable_file(const std::string& path);

/// Canonical absolute path, or std::nullopt when it does not resolve.
std::optional<std::string> real_path(const std::string& path);

std::string dir_name(std::string_view path);
std::string base_name(std::string_view path);
std::string join_path(std::string_view a, std::string_view b);

/// Identity of a file's current content without reading it: device, inode,
/// size and modification time. Changes when a toolkit is replaced in place.
std::optional<std::string> file_fingerprint(const std::string& path);

/// A fresh private directory under `parent` (default: $TMPDIR, else /tmp),
/// removed with its content when the object dies.
class ScratchDir {
public:
  static Result<ScratchDir> create(std::string_view prefix, std::string_view parent = {});
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::string& path() const { return path_; }

private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

/// rm -rf; errors are ignored (used for clean-up only).
void remove_tree(const std::string& path);

} // namespace ciq
