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

/// For commands that store (put, import, import-acfs): an existing directory
/// is used as it is. A missing one is created only when it is the default
/// location (`named_by_user` false: created with its parents, as XDG
/// directories are) or when its parent exists (only the last component,
/// like mkdir); a missing parent of a directory the user named is an error
/// (a typo, most likely). Returns the directory it created, "" when none.
Result<std::string> prepare_cache_dir(const std::string& dir, bool named_by_user);

} // namespace ciq::cache::cli
