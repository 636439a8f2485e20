// Who the real ptxas is: its full `--version` text (part of every key, so a
// toolkit upgrade never reuses entries tuned for another compiler) and
// whether it takes `--apply-controls` (ACF files). Probing costs one ptxas
// run (~8 ms), so the answer is remembered per binary (path, inode, size,
// mtime) in <cache dir>/tools/.
#pragma once

#include "utils/result.h"

#include <string>

namespace ciq::cache {

struct PtxasIdentity {
  std::string version_text;   // full stdout of `ptxas --version`
  std::string release;        // "13.0" from "release 13.0, V13.0.88"
  std::string version;        // "13.0.88", or the release when absent
  bool accepts_controls_file = false;
};

/// Identity of the ptxas at `path`, from the memo or by running it.
/// `cache_dir` may be "" (no memo).
Result<PtxasIdentity> identify_ptxas(const std::string& path, const std::string& cache_dir);

/// Parses "release X.Y, VX.Y.Z" out of a --version text; false if absent.
bool parse_ptxas_version(const std::string& text, std::string& release, std::string& version);

} // namespace ciq::cache
