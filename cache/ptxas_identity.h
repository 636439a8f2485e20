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

/// The identity as a file can record it and compare it: hex XXH3-128 of
/// `version_text`, the part of every cache key that names the ptxas. Two
/// ptxas of one digest file entries under the same keys.
std::string identity_digest(const PtxasIdentity& identity);

/// The ptxas of the user's own configuration and its identity.
struct UserPtxas {
  std::string path;
  std::string from;  // "CIQ_REAL_PTXAS", "PATH" or "the CUDA toolkit"
  PtxasIdentity identity;
};

/// The ptxas a tool that compiles for the user runs (ciq-tuner's `run
/// --capture`): found as the wrappers find it (utils/real_tool.h:
/// CIQ_REAL_PTXAS, else ptxas on PATH, never `exclude`, ciq-ptxas), else,
/// when the setting is unset and PATH has none, $CUDA_HOME/bin/ptxas or
/// /usr/local/cuda/bin/ptxas (under nvcc, the toolkit's bin/ comes first
/// on ciq-ptxas' PATH: a tool nvcc did not start looks there last). Never a
/// ptxas a file names. Errors: find_real_tool's, identify_ptxas'.
Result<UserPtxas> find_user_ptxas(const std::string& exclude, const std::string& cache_dir);

/// Identity of the ptxas at `path`, from the memo or by running it.
/// `cache_dir` may be "" (no memo).
Result<PtxasIdentity> identify_ptxas(const std::string& path, const std::string& cache_dir);

/// Parses "release X.Y, VX.Y.Z" out of a --version text; false if absent.
bool parse_ptxas_version(const std::string& text, std::string& release, std::string& version);

} // namespace ciq::cache
