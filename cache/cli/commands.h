// What each `ciq-cache` subcommand does, separated from option parsing so
// tests and the tuner can call it. Every command reads the cache under
// `cache_dir`, writes results to `out` (text or JSON lines) and returns an
// error for `ciq-cache: error: ...`.
#pragma once

#include "cache/record.h"
#include "utils/result.h"

#include <ostream>
#include <string>
#include <vector>

namespace ciq::cache::cli {

struct PutRequest {
  std::string ptx_file;
  std::string arch;
  std::string flags;                    // the user's codegen flags, as on the ptxas command line
  std::string ptxas;                    // "" = $CIQ_REAL_PTXAS or ptxas on PATH
  std::string controls_file;            // optional
  std::vector<std::string> assignments; // KNOB=VALUE, KERNEL:KNOB=VALUE
  std::string acf_file;                 // optional opaque blob
  bool allow_unsafe = false;
  std::vector<std::pair<std::string, std::string>> provenance;
  std::string source = "ciq-cache put";
  std::string unit_key;                 // --unit: an NVVM-stage entry for this translation unit (hex key)
  std::string nvcc;                     // the nvcc whose NVVM stage it is for ("" = $CIQ_REAL_NVCC or nvcc on PATH)
};

Result<void> put_controls(const std::string& cache_dir, const PutRequest& request, bool json, std::ostream& out);
Result<void> show_stats(const std::string& cache_dir, bool json, bool zero, std::ostream& out);
Result<void> list_records(const std::string& cache_dir, const std::string& kernel_glob, bool json, std::ostream& out);
Result<void> show_record(const std::string& cache_dir, const std::string& key_prefix, bool json, std::ostream& out);
Result<void> remove_records(const std::string& cache_dir, const std::vector<std::string>& key_prefixes, bool all,
                            bool json, std::ostream& out);
/// Checks every record (parses, knobs valid in its space, ACF present and
/// intact) and every blob (content matches its sha256), by the wrappers'
/// rule: an `unsafe` knob is a problem unless CIQ_ALLOW_UNSAFE allows it
/// here, as it is for ciq-ptxas. Fails when any is broken; with `fix`,
/// broken records and blobs are removed.
Result<void> verify_cache(const std::string& cache_dir, bool fix, bool json, std::ostream& out);
/// Removes unreferenced blobs and stale quarantine marks; with
/// `quarantined`, also the quarantined records and the blobs only they
/// used, in one transaction.
Result<void> collect_garbage(const std::string& cache_dir, bool quarantined, bool json, std::ostream& out);

/// `ciq-cache env`: every CIQ_* variable (utils/config.h's table), what
/// it does, and its value in this environment (passwords in URLs shown as
/// ***).
Result<void> show_environment(bool json, std::ostream& out);

/// What `list` and `show` say about a record's controls: the summary, or
/// for a record that holds none, why: "(defaults: tuned, no gain; ...)"
/// from its provenance. The wrappers apply nothing for such a record.
std::string describe_controls(const Record& record);

} // namespace ciq::cache::cli
