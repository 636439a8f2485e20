// Which cache directory a ciq-cache command may use. A mistyped
// --cache-dir must not look like an empty cache (reading) nor silently grow
// a new tree (storing): both are errors that say what to do.
#pragma once

#include "utils/result.h"

#include <string>

namespace ciq::cache::cli {

/// For commands that read or edit an existing cache (stats, list, show, rm,
/// verify, gc, export, push): fails when `dir` does not exist ("no cache
/// at ...") or is not a directory. A directory without a database yet is an
/// empty cache, not an error.
Result<void> require_cache_dir(const std::string& dir);

/// For commands that store (put, import, import-acfs): whether `dir` may be
/// used. An existing directory is; a missing one only when it is the
/// default location (`named_by_user` false: the store creates it with its
/// parents, as XDG directories are) or when its parent exists (the store
/// creates only the last component, like mkdir); a missing parent of a
/// directory the user named is an error (a typo, most likely). Nothing is
/// created here, so a refused command leaves no directory behind. True when
/// `dir` is missing (a successful store creates it).
Result<bool> check_storing_dir(const std::string& dir, bool named_by_user);

} // namespace ciq::cache::cli
