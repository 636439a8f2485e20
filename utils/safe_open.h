// Opening paths that another local user may have prepared. Every ciq tool,
// the wrappers and libciq-inject (a shared object inside the user's program:
// this file depends on nothing but libc and result.h) open files through
// these calls, so that a directory, symlink, FIFO or hard link planted by
// someone else never makes ciq overwrite, read, or wait on what it should
// not. Linux's protected_symlinks and protected_fifos do not cover this: they
// guard only sticky world-writable directories, and a 0777 directory another
// user made (`/tmp/run1` named in an example) is not one.
//
// The contract:
// 1. A directory ciq keeps its own files in (a run directory, a trace
//    directory, the cache) is created by ciq, or accepted only when it is a
//    directory owned by the effective user that neither group nor others
//    may write (error "unsafe", naming the owner or the mode and the fix).
//    Nobody else may be able to swap it for another while ciq works in it:
//    every directory above it is the user's or root's and, if others may
//    write to it, sticky (/tmp); every symbolic link on the way is the
//    user's or root's. Files in it are then opened by path safely.
// 2. A new file is created with O_CREAT|O_EXCL|O_NOFOLLOW: it cannot be a
//    link or anything that was there before. To replace a file, write a new
//    private one and rename it over (rename replaces a link, never its target).
// 3. An existing file opened for writing (a journal, a lock, a log) is
//    opened with O_NOFOLLOW|O_NONBLOCK, then checked with fstat: a regular
//    file owned by the effective user with one link; anything else is
//    "unsafe" or "not-regular". A FIFO is opened only where one is expected,
//    the same way, and must be the user's and writable by nobody else.
// 4. A file read is opened with O_NONBLOCK (a FIFO never makes the reader
//    wait for a writer), must be a regular file, and is read up to a bound
//    (error "too-large"): /dev/zero or a runaway file end in the tool's own
//    message, never an allocation failure.
// 5. An input another user may have prepared (a capture someone copied,
//    files a program wrote into a shared folder) is opened once, by
//    open_input: O_NOFOLLOW as well (a link there is refused, not
//    followed), the checks (a regular file, the size expected, the bound)
//    made on that descriptor, and every byte read through it. Nothing is
//    looked at by path first and opened again later: what was checked is
//    what is read, even if the name is swapped for a FIFO in between.
// Everything returns a descriptor with O_CLOEXEC set; the caller closes it.
#pragma once

#include "utils/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace ciq {

/// What any read of a whole file is bounded by unless the caller says less:
/// far above any trace, journal or pack ciq writes (the largest measured:
/// a 35-kernel profile's traces, under 1 MiB).
inline constexpr std::uint64_t default_read_limit = std::uint64_t(1) << 30;

/// Succeeds when `dir` is a directory ciq may keep private files in
/// (contract 1). Errors: "io" (absent, unreadable), "unsafe" (not a
/// directory, another user's, writable by group or others, or below a
/// directory or link another user could replace it through).
Result<void> check_own_directory(const std::string& dir);

/// "writable by other users (mode 0777)" or "writable by its group (mode
/// 2775)" when `mode` lets others than its owner write; "" otherwise. The
/// one wording of that refusal, wherever ciq refuses a file or directory
/// for it.
std::string writable_by_others(unsigned mode);

/// Succeeds when no other user can change what `dir` (an existing
/// directory, anyone's) means: every directory from it up to / is the
/// user's or root's and sticky where others may write, and no other user's
/// link is on the way. Where ciq may create in, or next to, a user-named path.
Result<void> check_secure_location(const std::string& dir);

/// check_secure_location() of the deepest level of `path` that exists: where
/// `path` (or the levels missing above it) would be made.
Result<void> check_place_to_make(const std::string& path);

/// mkdir -p: makes each missing level of `path` with `mode` (less the
/// umask); fails ("io") naming the level it could not make. Whether `path`
/// is a directory now, and whose, is the caller's to check.
Result<void> make_levels(const std::string& path, mode_t mode);

/// mkdir -p `dir` (new levels with `mode`, less the umask) when
/// check_place_to_make(dir) passes (nothing is made in another user's
/// place), then check_own_directory(dir).
Result<void> make_own_directory(const std::string& dir, mode_t mode = 0755);

/// Creates `path`, which must not exist (contract 2), opened with `flags`
/// (e.g. O_WRONLY). Errors: "exists" (anything at all is there, a dangling
/// link included) or "io".
Result<int> create_new_file(const std::string& path, int flags, mode_t mode = 0644);

/// A name part for the files and directories that several processes create
/// in one shared directory (a kernel trace, a capture index, a wrapper's
/// trace record): "<pid>-<16 hex digits>", the digits drawn from
/// getrandom(2) (/dev/urandom, else the clock, where it is missing). A pid
/// alone is not unique: processes in different PID namespaces (containers)
/// that share a directory can have the same one. Each call draws anew: a
/// process draws its tag once, at start, and keeps it (so that its files
/// share one), and a name that is taken all the same is never replaced
/// (create_new_file, rename_new).
std::string new_process_tag();

/// Gives the finished file at `temporary` the name `path` unless anything
/// (a file, a link, a directory) is there already: never replaces, unlike
/// rename(2) (renameat2's RENAME_NOREPLACE, or link(2) then unlink(2) on a
/// file system without it). `temporary` is gone on success and left to the
/// caller otherwise. Errors: "exists", "io".
Result<void> rename_new(const std::string& temporary, const std::string& path);

/// Opens `path` for writing or appending under contract 3; `flags` may
/// hold O_CREAT (then a missing file is created, never through a link) and
/// O_APPEND/O_RDWR/O_WRONLY. The descriptor is blocking again on return.
/// Errors: "unsafe", "not-regular", "io".
Result<int> open_own_file(const std::string& path, int flags, mode_t mode = 0644);

/// Opens the FIFO at `path` with `flags` (O_RDONLY, O_WRONLY or O_RDWR),
/// without waiting for the other end: a FIFO owned by the effective user
/// that nobody else may write or read, never through a link. The descriptor
/// stays non-blocking. Errors: "unsafe" (not a FIFO, another user's,
/// open to others), "io" (ENXIO: no reader for a write-only open).
Result<int> open_own_fifo(const std::string& path, int flags);

/// Opens a log destination a person named (CIQ_LOG_FILE) for appending: a
/// regular file under contract 3 (created when missing), a terminal or
/// device, or the user's own pipe or socket (/dev/stderr, a FIFO the user
/// reads; never another user's), opened non-blocking so
/// that a stalled reader drops log lines instead of stopping the build. A
/// link is followed only when the effective user or root owns it. Errors:
/// "unsafe", "io" (a FIFO nobody reads: ENXIO).
Result<int> open_log_destination(const std::string& path);

/// What open_input checks on the descriptor it opened.
struct InputRules {
  /// Follow a symbolic link at `path` itself: only for a path the user
  /// named (read_file); an input inside someone's folder is never
  /// followed (contract 5).
  bool follow_links = false;
  std::optional<std::uint64_t> size;             ///< exactly this many bytes, when given
  std::uint64_t max_bytes = default_read_limit;  ///< never more than this
};

/// An input opened and checked: read it through `fd` (O_CLOEXEC, still
/// O_NONBLOCK, which a regular file ignores), which the caller closes; `st`
/// is that descriptor's fstat.
struct InputFile {
  int fd = -1;
  struct stat st {};
};

/// Opens `path` for reading under contract 5 (contract 4 when
/// `rules.follow_links`): one open(O_RDONLY|O_NOFOLLOW|O_NONBLOCK|
/// O_CLOEXEC), then fstat of that descriptor. Never blocks (a FIFO or
/// device is refused, not waited on). Errors, each naming the path:
/// "absent" (nothing there: "cannot open 'PATH': No such file or
/// directory"), "not-regular" (a link, FIFO, device, socket
/// or directory: says which), "wrong-size" (not `rules.size` bytes; says
/// how many), "too-large" (more than `rules.max_bytes`), "io".
Result<InputFile> open_input(const std::string& path, const InputRules& rules = {});

/// Opens `path` (links followed) with `flags` (O_RDWR, O_CREAT, O_NOFOLLOW
/// for a lock or counter file ciq keeps) if it is a regular file, with
/// O_NONBLOCK, its stat in `*st` when given. Errors: "not-regular" (a FIFO,
/// device or directory there), "io". To read an input, use open_input.
Result<int> open_regular_file(const std::string& path, int flags, struct stat* st = nullptr);

/// Reads `fd` (which it closes) to its end, but no more than `max_bytes`;
/// `path` names it in errors. Errors: "too-large", "io".
Result<std::string> read_bounded(int fd, const std::string& path, std::uint64_t max_bytes = default_read_limit);

} // namespace ciq
