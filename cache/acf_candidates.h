// ACF candidates: NVIDIA Advanced Controls Files that users bring (CompileIQ
// output, Booster Pack zips), stored as opaque blobs and grouped into named
// candidate sets that ciq-tuner can choose among (`--acf-candidates`). ciq
// never reads, decodes or generates an ACF: it checks sizes and sha256s,
// stores the bytes, and hands one to ptxas with --apply-controls.
//
// Sources: a directory of *.acf files, or a zip (stored or deflated
// entries). Either may hold a manifest.json:
//   {"cuda_version": "13.0", "controls_stage": "ptxas",
//    "files": [{"path": "a.acf", "sha256": "<64 hex>"}, ...]}
// or, as NVIDIA publishes CompileIQ Booster Packs, a folder with
// booster-pack-manifest.json:
//   {"cuda_version": "13.0", "controls_stage": "ptxas", "supported_gpus": ["H100", ...],
//    "acfs": [{"filename": "a.acf", "sha256": "<64 hex>", "size_bytes": N}, ...]}
// (at the top of the zip/directory or in one folder of it). With a
// manifest, exactly the files it lists are taken and every checksum (and
// size) must match, else nothing is imported; names are plain file names
// inside the source, never used outside it.
//
// Whether a set fits the ptxas at hand: acf_set_fits().
#pragma once

#include "utils/result.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ciq::cache {

struct AcfCandidate {
  std::string file;   // name in the source, for people
  std::string sha256; // hex: the blob's key
  std::size_t size = 0;
};

struct AcfCandidateSet {
  std::string name;
  std::string cuda_version;   // from the manifest ("" without one)
  std::string controls_stage; // likewise
  std::vector<std::string> supported_gpus; // from a Booster Pack manifest (as written there); empty = not said
  std::string source;         // where it was imported from
  std::vector<AcfCandidate> acfs;
};

/// Reads and checks `path` (directory or zip) and stores every ACF in the
/// cache's blob table and the set under <cache dir>/acf-candidates/NAME.
/// `name` "" = the source's base name without extension.
Result<AcfCandidateSet> import_acf_candidates(const std::string& cache_dir, const std::string& path, std::string name);

/// "" when `set` can be used with this ptxas (its version, e.g. "13.0.88")
/// and target ("sm_90a"), else why not: another CUDA major.minor, a stage
/// other than ptxas, or a GPU list that names neither the target nor its
/// architecture. Fields the manifest does not give do not count against it.
std::string acf_set_fits(const AcfCandidateSet& set, const std::string& ptxas_version, const std::string& target);

/// A set imported before.
Result<AcfCandidateSet> load_acf_candidates(const std::string& cache_dir, const std::string& name);

} // namespace ciq::cache
